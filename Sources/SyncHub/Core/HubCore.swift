import Foundation
import BoardCRDT
import SyncWire

/// What happens to the hub: the shell translates libwebsockets and store
/// callbacks into these.
enum HubEvent {
    /// A connection's upgrade to a board's path completed; `stored` is the
    /// board as the store holds it when the hub did not hold it yet.
    /// `grant`: the token its upgrade request carried, verified (auth on).
    case joined(connection: UInt64, board: BoardAddress, stored: StoredBoard?, grant: Grant? = nil)
    case left(connection: UInt64)
    /// One complete text frame, parsed by its board's kind (`HubCore.parse`);
    /// binary frames arrive as `.binary`.
    case frame(connection: UInt64, ParsedFrame)
    case binary(connection: UInt64)
    /// The store made these records durable (or, in memory, at once).
    case committed([DurableRecord])
    /// The store's answer to a keyed intent whose key memory no longer held
    /// (`HubCore.keyToLookUp`); sent just before that intent's frame.
    case storedKey(board: String, key: String, answer: KeyedAnswer?)
    /// Cluster mode: the shared log answered proposal `number` of `board`.
    case appended(board: String, number: UInt64, result: SharedAppendResult)
    /// Cluster mode: entries of a board's shared log, in order.
    case sequenced(board: String, entries: [SharedLogEntry])
    /// Cluster mode: connections and names on the other hubs.
    case presence(board: String, clients: Int, names: [String])
    /// Cluster mode: a board this hub fell behind, read again from its log.
    case reloaded(board: String, SharedBoard)
    /// Cluster mode: a snapshot at `offset` or later is stored (answers up to it are written down).
    case folded(board: String, offset: UInt64)
    /// Cluster mode: the board's log as Redis holds it now (epoch; whether its
    /// last offset went below what this hub read).
    case logHead(board: String, epoch: String, lost: Bool)
}

/// What the shell must do.
enum HubAction: Equatable {
    /// A frame for one connection, in order with its other replies.
    case send(connection: UInt64, frame: String)
    /// The newest state of a board for its connections, as a whole state
    /// or a patch each; a newer one may replace it before it is written
    /// (conflation). Computed once per board.
    case publish(PublishedState)
    /// Must-arrive frames shared by several connections (replica relays).
    case relay(frame: String, to: [UInt64])
    case close(connection: UInt64, code: UInt16, reason: String)
    /// The connection presented a valid token: the shell's pre-token limits
    /// (time to present one, bytes before one) stop applying to it.
    case authenticated(connection: UInt64)
}

/// The hub's protocol as a state machine: events in, actions out, no I/O.
/// The libwebsockets callback only translates (docs/ARCHITECTURE.md, "Pure
/// core, thin shell").
struct HubCore {
    /// The replica id of boards that have none stored yet (new boards).
    let hubReplica: ReplicaID
    let limits: HubLimits
    internal(set) var boards: [String: BoardRoom] = [:]
    /// Which board each connection is on.
    internal(set) var boardOf: [UInt64: String] = [:]
    /// Records not yet handed to the store; `takeRecords()` empties it.
    private var outbox: [DurableRecord] = []
    /// Boards whose state frame is due, so publishing costs O(changed boards).
    private var dirty: [BoardRoom] = []
    /// The number of the last publish to patch connections, hub-wide
    /// (`BoardRoom.publish`).
    private var stateGenerations: UInt64 = 0
    var counters = HubCounters()
    var now: UInt64 = 0
    /// The N of the next `guest-N` (K10, docs/rules/README.md).
    private var nextGuest: UInt64 = 1
    /// Checks tokens; nil on an open hub (A1). See `HubCore+Access.swift`.
    let verifier: TokenVerifier?
    /// The wall clock tokens are checked against; the shell sets it with `now`.
    var wallClock = Date(timeIntervalSince1970: 0)
    /// Connections waiting for their token, outside any board.
    var awaiting: [UInt64: Awaiting] = [:]
    /// When each token-holding connection's token runs out.
    var expiries: [UInt64: Date] = [:]

    /// Who orders changes: this hub (`local`) or a shared log (cluster mode).
    let sequencing: Sequencing
    /// Cluster mode: the number of this hub's last proposal, what is on its
    /// way to the log, and the boards with proposals waiting.
    var nextProposal: UInt64 = 0
    var outboxProposals: [SharedProposal] = []
    var outboxFolds: [SharedFold] = []
    var proposalBoards: Set<String> = []
    /// Boards whose log this hub fell behind (`takeReloads`).
    var reloads: Set<String> = []

    init(hubReplica: ReplicaID, limits: HubLimits, verifier: TokenVerifier? = nil, sequencing: Sequencing = .local) {
        self.hubReplica = hubReplica
        self.limits = limits
        self.verifier = verifier
        self.sequencing = sequencing
    }

    /// Whether a new connection to `board` may join; the shell asks before the upgrade.
    func admits(board address: BoardAddress) -> PathRefusal? {
        let board = address.key
        if let room = boards[board] {
            return room.members.count >= limits.maxClientsPerBoard
                ? PathRefusal(status: 503, message: "board \(board) is full: \(limits.maxClientsPerBoard) connections")
                : nil
        }
        return boards.count >= limits.maxBoards
            ? PathRefusal(status: 503, message: "the hub holds its limit of \(limits.maxBoards) boards; try later")
            : nil
    }

    func holds(board address: BoardAddress) -> Bool { boards[address.key] != nil }


    /// Parses a text frame of `connection` by its board's kind; nil when the
    /// connection is on no board.
    /// Always inlined, like the other reads the shell makes per frame: a
    /// non-mutating call on the shell's `core` (a struct in a class) would
    /// otherwise copy the whole core, every dictionary retained and
    /// released, for each frame (seen in profiles of the paced fan-out).
    /// (Inlined, a board's frame still copied the core: the call into the
    /// room's parser is opaque, so the core was copied to outlive it. The
    /// shell therefore finds the room in `boardOf` and `boards` and calls its
    /// parser itself; it comes here for a connection awaiting its token.)
    @inline(__always)
    func parse(connection: UInt64, _ bytes: UnsafeRawBufferPointer) -> ParsedFrame? {
        guard let board = boardOf[connection], let room = boards[board] else {
            guard awaiting[connection] != nil else { return nil }
            switch AuthFields.token(in: bytes) {
            case let .success((token, ref)):
                return ParsedFrame(key: nil, ref: ref, isOperations: false, isHello: false, message: token, error: nil)
            case let .failure(error):
                return ParsedFrame(key: nil, ref: nil, isOperations: false, isHello: false, message: 0, error: error)
            }
        }
        return room.parse(bytes)
    }

    mutating func handle(_ event: HubEvent) -> [HubAction] {
        var actions: [HubAction] = []
        switch event {
        case let .joined(connection, board, stored, grant):
            arrive(connection, board: board, stored: stored, grant: grant, actions: &actions)
        case let .left(connection):
            leave(connection)
        case let .frame(connection, frame):
            counters.messagesIn += 1
            if awaiting[connection] != nil {
                authenticate(connection, frame: frame, actions: &actions)
            } else if let expiry = expiries[connection], wallClock >= expiry {
                // A10: nothing is taken after `exp`, even before the tick closes it.
                expiries[connection] = nil
                counters.authExpired += 1
                actions.append(.close(connection: connection, code: 4401, reason: "token expired"))
            } else if let error = frame.error {
                refuseFrame(error, from: connection, ref: frame.ref, actions: &actions)
            } else {
                receive(frame, from: connection, actions: &actions)
            }
        case let .binary(connection):
            counters.messagesIn += 1
            if awaiting.removeValue(forKey: connection) != nil {
                counters.authRefused += 1
                actions.append(.close(connection: connection, code: 4401, reason: "send {\"type\":\"auth\",\"token\":\"...\"} before anything else"))
                return actions
            }
            refuseFrame(ProtocolError("binary_frame", "frames are JSON text; binary frames are not accepted"), from: connection, actions: &actions)
        case let .committed(records):
            committed(records, actions: &actions)
        case let .appended(board, number, result):
            appended(board: board, number: number, result: result, actions: &actions)
        case let .sequenced(board, entries):
            sequenced(board: board, entries: entries, actions: &actions)
        case let .presence(board, clients, names):
            presence(board: board, clients: clients, names: names)
        case let .reloaded(board, log):
            reloaded(board: board, from: log, actions: &actions)
        case let .folded(board, offset):
            boards[board]?.shared.answersSinceFold.removeAll { $0.offset <= offset }
        case let .logHead(board, epoch, lost):
            logHead(board: board, epoch: epoch, lost: lost, actions: &actions)
        case let .storedKey(board, key, answer):
            if let answer {
                boards[board]?.keys.remember(key, answer: answer)
            }
        }
        return actions
    }

    /// Records made since the last call, for the store (group commit).
    mutating func takeRecords() -> [DurableRecord] {
        defer { outbox.removeAll(keepingCapacity: true) }
        return outbox
    }

    /// State frames for every board whose state or membership changed since
    /// the last call: one frame per board, however many changes it folds.
    mutating func publishChanged() -> [HubAction] {
        var actions: [HubAction] = []
        let due = dirty
        dirty.removeAll(keepingCapacity: true)
        for room in due where room.needsPublish {
            room.needsPublish = false
            // Shown once its opening is durable (`committed` marks it again).
            if room.openingInFlight { continue }
            actions.append(.publish(room.publish(generations: &stateGenerations)))
            counters.statesPublished += 1
        }
        return actions
    }

    /// Boards empty for longer than the eviction delay leave memory (the
    /// store keeps them). Returns the evicted names.
    mutating func evictIdle(durable: Bool) -> [String] {
        guard durable else { return [] }
        let bound = limits.evictAfterSeconds * 1_000_000_000
        let idle = boards.values.filter { room in
            room.members.isEmpty && room.recordsInFlight == 0 && room.shared.proposals.isEmpty && room.emptySince.map { now >= $0 + bound } == true
        }.map(\.name)
        for name in idle { boards[name] = nil }
        counters.boardsEvicted += UInt64(idle.count)
        return idle
    }

    // MARK: Membership

    /// `opens`: whether this member may write, and so may make the board's
    /// opening (a first deal) when nobody has played it; a read-only
    /// member only looks (no row is created for it).
    mutating func join(_ connection: UInt64, board address: BoardAddress, stored: StoredBoard?, opens: Bool = true,
                       actions: inout [HubAction]) {
        let board = address.key
        if let failure = hold(address, stored: stored, actions: &actions) {
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

    private mutating func leave(_ connection: UInt64) {
        awaiting[connection] = nil
        expiries[connection] = nil
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

    private mutating func receive(_ frame: ParsedFrame, from connection: UInt64, actions: inout [HubAction]) {
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

    /// The board whose store the shell must ask about `key` before handing
    /// over `connection`'s keyed intent: memory lacks the key and the store
    /// may hold it. Nil when memory decides.
    @inline(__always)  // see `parse`
    func keyToLookUp(connection: UInt64, key: String) -> String? {
        guard let board = boardOf[connection], let room = boards[board] else { return nil }
        return room.keys.mayBeInStore && room.keys[key] == nil ? board : nil
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

    private mutating func committed(_ records: [DurableRecord], actions: inout [HubAction]) {
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
    /// Tokens accepted; refused (401/4401); changes or boards forbidden
    /// (403/4403, `forbidden`); connections closed at their token's expiry.
    var authAccepted: UInt64 = 0
    var authRefused: UInt64 = 0
    var authForbidden: UInt64 = 0
    var authExpired: UInt64 = 0
}
