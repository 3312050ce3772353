import Foundation
import BoardCRDT
import SyncWire

/// The hub's protocol as a state machine: events in, one ordered list of
/// actions out, no I/O and no clock of its own (each event comes with the
/// moment it happened). A board's load, a key's lookup, a commit or an
/// append is an action (`.store`); the store's answer is a later event, so
/// a slow store delays only the boards waiting for it
/// (docs/ARCHITECTURE.md, "Events and actions").
struct HubCore {
    /// The replica id of boards that have none stored yet (new boards).
    let hubReplica: ReplicaID
    let limits: HubLimits
    internal(set) var boards: [String: BoardRoom] = [:]
    /// Which board each connection is on.
    internal(set) var boardOf: [UInt64: String] = [:]
    /// Records not yet handed to the store; `.turnEnded` hands them over.
    private var outbox: [DurableRecord] = []
    /// Boards whose state frame is due, so publishing costs O(changed boards).
    private var dirty: [BoardRoom] = []
    /// The number of the last publish to patch connections, hub-wide
    /// (`BoardRoom.publish`).
    private var stateGenerations: UInt64 = 0
    var counters = HubCounters()
    /// The monotonic clock of the event being handled (`HubClock.nanos`).
    private(set) var now: UInt64 = 0
    /// The N of the next `guest-N` (K10, docs/rules/README.md).
    private var nextGuest: UInt64 = 1
    /// Checks tokens; nil on an open hub (A1). See `HubCore+Access.swift`.
    let verifier: TokenVerifier?
    /// The wall clock of the event being handled; tokens are checked against it.
    private(set) var wallClock = Date(timeIntervalSince1970: 0)
    /// Connections waiting for their token, outside any board.
    var awaiting: [UInt64: Awaiting] = [:]
    /// When each token-holding connection's token runs out.
    var expiries: [UInt64: Date] = [:]
    /// O6: tokens operators revoked; none of them is taken.
    var revocations = Revocations()

    /// Who orders changes: this hub (`local`) or a shared log (cluster mode).
    let sequencing: Sequencing
    /// Whether boards live in a store (loaded, committed, evicted) or only
    /// in memory (`--in-memory`: held at once, durable at once).
    let durable: Bool
    /// How long a board's load, or a key's lookup, may take in all before
    /// its waiting connections are closed (`--redis-timeout` in a cluster).
    let loadTimeoutNanos: UInt64
    /// Cluster mode: the number of this hub's last proposal, what is on its
    /// way to the log, and the boards with proposals waiting.
    var nextProposal: UInt64 = 0
    var outboxProposals: [SharedProposal] = []
    var outboxFolds: [SharedFold] = []
    var proposalBoards: Set<String> = []
    /// Boards being read from the store, by key, and the connections (and
    /// HTTP requests) waiting for them (`HubCore+Loading.swift`).
    var loads: [String: BoardLoad] = [:]
    var nextTicket: UInt64 = 0
    /// Connections that wait for their board's load or a key's answer, with
    /// the frames they sent meanwhile.
    var pending: [UInt64: PendingConnection] = [:]
    /// Keys being looked up in the store, by board and key.
    var keyLookups: [KeyLookup.ID: KeyLookup] = [:]
    /// When presence was last handed to the store (once a second, R4).
    var lastPresence: UInt64 = 0

    init(hubReplica: ReplicaID, limits: HubLimits, verifier: TokenVerifier? = nil, sequencing: Sequencing = .local,
         durable: Bool = false, loadTimeoutNanos: UInt64 = 10_000_000_000) {
        self.hubReplica = hubReplica
        self.limits = limits
        self.verifier = verifier
        self.sequencing = sequencing
        if case .shared = sequencing { self.durable = true } else { self.durable = durable }
        self.loadTimeoutNanos = loadTimeoutNanos
    }

    /// Whether a new connection to `board` may join; the shell asks before the upgrade.
    func admits(board address: BoardAddress) -> PathRefusal? {
        let board = address.key
        if let room = boards[board] {
            return room.members.count >= limits.maxClientsPerBoard
                ? PathRefusal(status: 503, message: "board \(board) is full: \(limits.maxClientsPerBoard) connections")
                : nil
        }
        if let load = loads[board] {
            return load.connectionCount >= limits.maxClientsPerBoard
                ? PathRefusal(status: 503, message: "board \(board) is full: \(limits.maxClientsPerBoard) connections")
                : nil
        }
        // Boards being read count too (a held board's read counts once).
        let reading = loads.isEmpty ? 0 : loads.keys.reduce(0) { boards[$1] == nil ? $0 + 1 : $0 }
        return boards.count + reading >= limits.maxBoards
            ? PathRefusal(status: 503, message: "the hub holds its limit of \(limits.maxBoards) boards; try later")
            : nil
    }

    func holds(board address: BoardAddress) -> Bool { boards[address.key] != nil }

    /// The one way in: `event`, happening at `clock`, and what the shell must
    /// do about it, in order.
    mutating func handle(_ event: HubEvent, at clock: HubClock) -> [HubAction] {
        now = clock.nanos
        wallClock = clock.wall
        var actions: [HubAction] = []
        switch event {
        case let .upgraded(connection, board, grant):
            arrive(connection, board: board, grant: grant, actions: &actions)
        case let .left(connection):
            leave(connection, actions: &actions)
        case let .frame(connection, bytes):
            counters.messagesIn += 1
            frameArrived(bytes, from: connection, actions: &actions)
        case let .binary(connection):
            counters.messagesIn += 1
            binaryArrived(from: connection, actions: &actions)
        case .tick:
            tick(actions: &actions)
        case .turnEnded:
            endTurn(actions: &actions)
        case let .store(answer):
            storeAnswered(answer, actions: &actions)
        case let .httpNeedsBoard(exchange, board):
            holdForHTTP(board, exchange: exchange, actions: &actions)
        case let .httpIntent(exchange, board, frame):
            performForHTTP(frame, board: board, exchange: exchange, actions: &actions)
        case let .adminFreeze(exchange, board, frozen):
            setFrozen(frozen, on: board, exchange: exchange, actions: &actions)
        case let .revoked(entries):
            revoke(entries, actions: &actions)
        }
        return actions
    }

    /// A text frame of `connection`: held while its board loads, its token
    /// checked while it has none, else parsed by its board's kind and taken.
    private mutating func frameArrived(_ bytes: UnsafeRawBufferPointer, from connection: UInt64, actions: inout [HubAction]) {
        // `isEmpty` first: the common case (nobody waits) costs no hashing.
        if !pending.isEmpty, pending[connection] != nil {
            holdFrame(.text(Array(bytes)), of: connection, actions: &actions)
            return
        }
        guard let board = boardOf[connection], let room = boards[board] else {
            if awaiting[connection] != nil { authenticate(connection, bytes: bytes, actions: &actions) }
            return
        }
        if !expiries.isEmpty, let expiry = expiries[connection], wallClock >= expiry {
            // A10: nothing is taken after `exp`, even before the tick closes it.
            expiries[connection] = nil
            counters.authExpired += 1
            actions.append(.close(connection: connection, code: 4401, reason: "token expired"))
            return
        }
        take(room.parse(bytes), from: connection, actions: &actions)
    }

    /// A parsed frame of a connection on its board: refused, held for its
    /// key's lookup, or received.
    mutating func take(_ frame: ParsedFrame, from connection: UInt64, actions: inout [HubAction]) {
        if let error = frame.error {
            refuseFrame(error, from: connection, ref: frame.ref, actions: &actions)
            return
        }
        if let key = frame.key, let board = boardOf[connection], let room = boards[board], room.keys.mayBeInStore,
           room.keys[key] == nil, durable, !isShared {
            // A key older than the board's key memory: the store decides
            // whether this intent is a resend.
            lookUp(key, board: board, for: connection, holding: frame, actions: &actions)
            return
        }
        receive(frame, from: connection, actions: &actions)
    }

    private mutating func binaryArrived(from connection: UInt64, actions: inout [HubAction]) {
        if !pending.isEmpty, pending[connection] != nil {
            holdFrame(.binary, of: connection, actions: &actions)
            return
        }
        if awaiting.removeValue(forKey: connection) != nil {
            counters.authRefused += 1
            actions.append(.close(connection: connection, code: 4401,
                                  reason: "send {\"type\":\"auth\",\"token\":\"...\"} before anything else"))
            return
        }
        refuseFrame(ProtocolError("binary_frame", "frames are JSON text; binary frames are not accepted"), from: connection,
                    actions: &actions)
    }

    /// The timer: tokens past `exp`, loads and proposals past their
    /// deadline, idle boards, and (cluster mode) presence once a second.
    private mutating func tick(actions: inout [HubAction]) {
        if authRequired { closeExpired(actions: &actions) }
        expireLoads(actions: &actions)
        evictIdle(actions: &actions)
        guard isShared else { return }
        expireProposals(actions: &actions)
        guard now >= lastPresence + 1_000_000_000 else { return }
        lastPresence = now
        var presence: [String: BoardPresence] = [:]
        for room in boards.values { presence[room.logName] = BoardPresence(clients: room.members.count, names: room.localNames) }
        actions.append(.store(.presence(presence)))
    }

    /// The end of a loop's turn: the turn's records (or proposals and
    /// folds) go to the store in one batch, and every board whose state or
    /// membership changed is published once. Without a store a record is
    /// durable at once.
    private mutating func endTurn(actions: inout [HubAction]) {
        if isShared {
            if !outboxProposals.isEmpty { actions.append(.store(.propose(outboxProposals))) }
            for fold in outboxFolds { actions.append(.store(.fold(fold))) }
            outboxProposals.removeAll(keepingCapacity: true)
            outboxFolds.removeAll(keepingCapacity: true)
        }
        if !outbox.isEmpty {
            let records = outbox
            outbox.removeAll(keepingCapacity: true)
            if durable {
                actions.append(.store(.commit(records)))
            } else {
                committed(records, actions: &actions)
            }
        }
        publishChanged(actions: &actions)
    }

    /// A store's answer.
    private mutating func storeAnswered(_ answer: StoreAnswer, actions: inout [HubAction]) {
        switch answer {
        case let .loaded(ticket, board, result):
            loaded(board, ticket: ticket, result: result, actions: &actions)
        case let .keyAnswer(board, key, result):
            keyAnswered(key, board: board, result: result, actions: &actions)
        case let .committed(records):
            committed(records, actions: &actions)
        case let .appended(board, number, result):
            appended(board: board, number: number, result: result, actions: &actions)
        case let .sequenced(board, entries):
            sequenced(board: board, entries: entries, actions: &actions)
        case let .presence(board, clients, names):
            presence(board: board, clients: clients, names: names)
        case let .folded(board, offset):
            boards[board]?.shared.answersSinceFold.removeAll { $0.offset <= offset }
            boards[board]?.shared.foldsElsewhere = false
        case let .foldedElsewhere(board):
            boards[board]?.shared.foldsElsewhere = true
        case let .logHead(board, head, lost):
            logHead(board: board, head: head, lost: lost, actions: &actions)
        case let .serverReached(server, boards):
            serverReached(server, boards: boards, actions: &actions)
        case let .restored(board, result):
            restored(board: board, result: result, actions: &actions)
        case let .revocations(entries):
            revoke(entries, actions: &actions)
        case .storeFailed, .imageStored, .imageRead, .boardsCounted, .keysKept:
            // The shell's business (the hub stops; HTTP answers).
            break
        }
    }

    /// State frames for every board whose state or membership changed since
    /// the last call: one frame per board, however many changes it folds.
    private mutating func publishChanged(actions: inout [HubAction]) {
        guard !dirty.isEmpty else { return }
        let due = dirty
        dirty.removeAll(keepingCapacity: true)
        for room in due where room.needsPublish {
            room.needsPublish = false
            // Shown once its opening is durable (`committed` marks it again).
            if room.openingInFlight { continue }
            actions.append(.publish(room.publish(generations: &stateGenerations)))
            counters.statesPublished += 1
        }
    }

    /// Publishes `room` now instead of at the end of the turn (its mark is
    /// taken: the turn's end skips it unless it changes again).
    mutating func publishNow(_ room: BoardRoom, actions: inout [HubAction]) {
        guard room.needsPublish, !room.openingInFlight else { return }
        room.needsPublish = false
        actions.append(.publish(room.publish(generations: &stateGenerations)))
        counters.statesPublished += 1
    }

    /// Boards empty for longer than the eviction delay leave memory (the
    /// store keeps them); a shared log stops being followed.
    private mutating func evictIdle(actions: inout [HubAction]) {
        guard durable else { return }
        let bound = limits.evictAfterSeconds * 1_000_000_000
        let idle = boards.values.filter { room in
            room.members.isEmpty && room.recordsInFlight == 0 && room.shared.proposals.isEmpty && loads[room.name] == nil
                && room.emptySince.map { now >= $0 + bound } == true
        }
        for room in idle { forget(room, actions: &actions) }
        counters.boardsEvicted += UInt64(idle.count)
    }

    /// Drops `room` from memory (its store keeps it); cluster mode stops following its log.
    mutating func forget(_ room: BoardRoom, actions: inout [HubAction]) {
        boards[room.name] = nil
        proposalBoards.remove(room.name)
        if isShared { actions.append(.store(.unfollow(logName: room.logName))) }
    }

    // MARK: Membership

    /// `opens`: whether this member may write, and so may make the board's
    /// opening (a first deal) when nobody has played it; a read-only
    /// member only looks (no row is created for it). The board is held
    /// already (loaded), or made fresh (no store).
    mutating func join(_ connection: UInt64, board address: BoardAddress, opens: Bool = true, actions: inout [HubAction]) {
        let board = address.key
        if let failure = hold(address, stored: nil, actions: &actions) {
            actions.append(.close(connection: connection, code: failure.code, reason: failure.reason))
            return
        }
        let guest = "guest-\(nextGuest)"
        nextGuest += 1
        boards[board]?.members[connection] = Member(
            guest: guest,
            messages: RateLimiter(rate: limits.messagesPerSecond, burst: limits.messageBurst, now: now),
            badFrames: RateLimiter(rate: limits.badFramesPerSecond, burst: limits.badFrameBurst, now: now))
        boards[board]?.audienceChanged()
        boards[board]?.emptySince = nil
        // A newcomer gets the whole state with the next publish, also when
        // that publish looks unchanged to everyone else (one left as it came:
        // the same count and names).
        boards[board]?.wholeStateDue.insert(connection)
        markForPublish(boards[board])
        boardOf[connection] = board
        if opens { boards[board]?.open(core: &self) }
    }

    /// Makes sure this hub holds `address`, read from `stored` when it does
    /// not; nil when it does, else the close code and reason for whoever asked.
    mutating func hold(_ address: BoardAddress, stored: StoredBoard?, actions: inout [HubAction]) -> (code: UInt16, reason: String)? {
        let board = address.key
        guard boards[board] == nil else { return nil }
        guard let kind = HostedKinds.kind(named: address.kind) else { return (1011, "no such kind of board") }
        do {
            let room = try kind.makeRoom(address: address, hubReplica: hubReplica, stored: stored, limits: limits)
            boards[board] = room
            // Empty until someone joins (`join` clears it): a board held for
            // nobody (an HTTP request, a joiner gone meanwhile) is let go.
            room.emptySince = now
            if let shared = stored?.shared, !room.applyShared(shared.entries, core: &self, actions: &actions) {
                boards[board] = nil
                counters.sharedGaps += 1
                return (1012, "the board's shared log moved on while loading; reconnect")
            }
        } catch {
            counters.boardsUnreadable += 1
            return (1011, "board could not be loaded: \(String("\(error)".prefix(80)))")
        }
        counters.boardsLoaded += 1
        return nil
    }

    private mutating func leave(_ connection: UInt64, actions: inout [HubAction]) {
        awaiting[connection] = nil
        expiries[connection] = nil
        if let waiting = pending.removeValue(forKey: connection) { stopWaiting(connection, board: waiting.board) }
        guard let board = boardOf.removeValue(forKey: connection) else { return }
        boards[board]?.members[connection] = nil
        boards[board]?.audienceChanged()
        boards[board]?.replicaMembers.remove(connection)
        boards[board]?.awaitingSync.removeAll { $0.connection == connection }
        boards[board]?.setName(nil, for: connection)
        boards[board]?.setEditing(nil, for: connection)
        boards[board]?.wholeStateDue.remove(connection)
        boards[board]?.forgetRefs(of: connection)
        markForPublish(boards[board])
        if boards[board]?.members.isEmpty == true { boards[board]?.emptySince = now }
    }

    // MARK: Frames

    mutating func receive(_ frame: ParsedFrame, from connection: UInt64, actions: inout [HubAction]) {
        guard let board = boardOf[connection], let room = boards[board] else { return }
        guard room.members[connection]?.messages.allow(now: now) == true else {
            counters.rateLimited += 1
            // An `ops` frame's sender learns which of its operations the hub
            // holds, so it sends the dropped ones again instead of forgetting them.
            let have = frame.isOperations ? room.members[connection]?.replica.map { room.durableSeq(of: $0) } : nil
            refuseFrame(ProtocolError("rate_limited", "more than \(Int(limits.messagesPerSecond)) messages a second; this one was dropped"),
                        from: connection, ref: frame.isHello ? nil : frame.ref, have: have, actions: &actions)
            return
        }
        if frame.isChange, room.members[connection]?.mayWrite == false {
            forbid(frame, from: connection, in: room, actions: &actions)
            return
        }
        if frame.needsAdmin, room.members[connection]?.isAdmin == false {
            forbid(frame, from: connection, in: room, adminOnly: true, actions: &actions)
            return
        }
        room.receive(frame, from: connection, core: &self, actions: &actions)
    }

    /// Answers a frame the hub cannot take with a coded error; a client that
    /// keeps doing so is closed (1008).
    private mutating func refuseFrame(_ error: ProtocolError, from connection: UInt64, ref: String? = nil, have: UInt64? = nil,
                                      actions: inout [HubAction]) {
        counters.errorsSent += 1
        guard let board = boardOf[connection] else { return }
        if boards[board]?.members[connection]?.badFrames.allow(now: now) == false {
            actions.append(.close(connection: connection, code: 1008, reason: "too many refused frames"))
            return
        }
        actions.append(.send(connection: connection, frame: HubMessage.error(error, ref: ref, have: have)))
    }

    mutating func markForPublish(_ room: BoardRoom?) {
        guard let room, !room.needsPublish else { return }
        room.needsPublish = true
        dirty.append(room)
    }

    // MARK: Durability

    mutating func record(_ record: DurableRecord, in room: BoardRoom) {
        var record = record
        record.checkpoint = room.checkpointToStore(forgettingBeyond: limits.maxReplicasPerBoard, counters: &counters)
        room.operationsRecorded(record.operations)
        room.recordsInFlight += 1
        outbox.append(record)
    }

    mutating func committed(_ records: [DurableRecord], actions: inout [HubAction]) {
        for record in records {
            counters.recordsCommitted += 1
            guard let room = boards[record.board] else {
                for reply in record.replies { actions.append(.send(connection: reply.connection, frame: reply.frame)) }
                continue
            }
            room.recordsInFlight -= 1
            room.operationsCommitted(record.operations)
            // Relays of the record's operations first, then the answers,
            // then a checkpoint: a replica client whose operation the hub
            // re-stamped holds the hub's version when the ack arrives, so
            // the outcome it sees then is final (docs/SEMANTICS.md §7c).
            var afterReplies: [HubAction] = []
            room.committed(record, core: &self, actions: &actions, afterReplies: &afterReplies)
            if let frozen = record.frozen { room.durableFrozen = frozen }
            for reply in record.replies {
                actions.append(.send(connection: reply.connection, frame: reply.frame))
            }
            if let keyed = record.keyed {
                for waiter in room.keys.answer(keyed.key, with: keyed.answer) {
                    actions.append(.send(connection: waiter.connection, frame: keyed.answer.frame(ref: waiter.ref)))
                }
            }
            actions += afterReplies
            if room.members.isEmpty, room.emptySince == nil { room.emptySince = now }
        }
    }
}

/// Counters the shell exports on /metrics.
struct HubCounters: Equatable {
    var messagesIn: UInt64 = 0
    var operationsApplied: UInt64 = 0
    var operationsRefused: UInt64 = 0
    var errorsSent: UInt64 = 0
    var rateLimited: UInt64 = 0
    var statesPublished: UInt64 = 0
    var recordsCommitted: UInt64 = 0
    var boardsLoaded: UInt64 = 0
    /// Boards read from the store for a connection that presented its token
    /// after the upgrade (`HubCore.boardToLoad`).
    var boardReads: UInt64 = 0
    /// Board loads and key lookups that waited past their bound
    /// (`--redis-timeout` in a cluster): their connections were closed.
    var loadsTimedOut: UInt64 = 0
    var boardsEvicted: UInt64 = 0
    var replicasForgotten: UInt64 = 0
    var keyedResends: UInt64 = 0
    var encodingFailures: UInt64 = 0
    var operationsRestamped: UInt64 = 0
    var boardsUnreadable: UInt64 = 0
    /// Cluster mode: proposals made, answered `unavailable` (timed out or
    /// refused by the log), entries no hub could read, boards dropped
    /// because this hub fell behind a trimmed log or the log lost history.
    var proposals: UInt64 = 0
    var proposalsTimedOut: UInt64 = 0
    var answeredUnavailable: UInt64 = 0
    var sharedEntriesUnreadable: UInt64 = 0
    var sharedGaps: UInt64 = 0
    var sharedHistoryLost: UInt64 = 0
    /// R15: boards written back into a log that went back, and those that could not be.
    var sharedWrittenBack: UInt64 = 0
    var sharedNotWrittenBack: UInt64 = 0
    /// Tokens accepted; refused (401/4401); changes or boards forbidden
    /// (403/4403, `forbidden`); connections closed at their token's expiry.
    var authAccepted: UInt64 = 0
    var authRefused: UInt64 = 0
    var authForbidden: UInt64 = 0
    var authExpired: UInt64 = 0
}
