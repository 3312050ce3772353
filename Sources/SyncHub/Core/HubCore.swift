import BoardCRDT
import SyncWire

/// What happens to the hub: the shell translates libwebsockets and store
/// callbacks into these.
enum HubEvent {
    /// A connection's upgrade to `/boards/NAME` completed; `stored` is the
    /// board as the store holds it when the hub did not hold it yet.
    case joined(connection: UInt64, board: String, stored: StoredBoard?)
    case left(connection: UInt64)
    /// One complete text frame (binary frames arrive as `.binary`).
    case frame(connection: UInt64, Result<ClientMessage, ProtocolError>)
    case binary(connection: UInt64)
    /// The store made these records durable (or, in memory, at once).
    case committed([DurableRecord])
    /// The store's answer to a keyed intent whose key memory no longer held
    /// (`HubCore.keyToLookUp`); sent just before that intent's frame.
    case storedKey(board: String, key: String, answer: KeyedAnswer?)
}

/// What the shell must do.
enum HubAction: Equatable {
    /// A frame for one connection, in order with its other replies.
    case send(connection: UInt64, frame: String)
    /// The newest state of a board for these connections; a newer one may
    /// replace it before it is written (conflation). Encoded once.
    case publish(frame: String, to: [UInt64])
    /// Must-arrive frames shared by several connections (replica relays).
    case relay(frame: String, to: [UInt64])
    case close(connection: UInt64, code: UInt16, reason: String)
}

/// The hub's protocol as a state machine: events in, actions out, no I/O.
/// The libwebsockets callback only translates (STYLE: pure core, thin shell).
struct HubCore {
    /// The replica id of boards that have none stored yet (new boards).
    let hubReplica: ReplicaID
    let limits: HubLimits
    private(set) var boards: [String: BoardRoom] = [:]
    /// Which board each connection is on.
    private(set) var boardOf: [UInt64: String] = [:]
    /// Records not yet handed to the store; `takeRecords()` empties it.
    private var outbox: [DurableRecord] = []
    /// Boards whose state frame is due, so publishing costs O(changed boards).
    private var dirty: [BoardRoom] = []
    var counters = HubCounters()
    var now: UInt64 = 0

    init(hubReplica: ReplicaID, limits: HubLimits) {
        self.hubReplica = hubReplica
        self.limits = limits
    }

    /// Whether a new connection to `board` may join; the shell asks before the upgrade.
    func admits(board: String) -> PathRefusal? {
        if let room = boards[board] {
            return room.members.count >= limits.maxClientsPerBoard
                ? PathRefusal(status: 503, message: "board \(board) is full: \(limits.maxClientsPerBoard) connections")
                : nil
        }
        return boards.count >= limits.maxBoards
            ? PathRefusal(status: 503, message: "the hub holds its limit of \(limits.maxBoards) boards; try later")
            : nil
    }

    func holds(board: String) -> Bool { boards[board] != nil }

    mutating func handle(_ event: HubEvent) -> [HubAction] {
        var actions: [HubAction] = []
        switch event {
        case let .joined(connection, board, stored):
            join(connection, board: board, stored: stored)
        case let .left(connection):
            leave(connection)
        case let .frame(connection, .success(message)):
            counters.messagesIn += 1
            receive(message, from: connection, actions: &actions)
        case let .frame(connection, .failure(error)):
            counters.messagesIn += 1
            refuseFrame(error, from: connection, actions: &actions)
        case let .binary(connection):
            counters.messagesIn += 1
            refuseFrame(ProtocolError("binary_frame", "frames are JSON text; binary frames are not accepted"), from: connection, actions: &actions)
        case let .committed(records):
            committed(records, actions: &actions)
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
            let name = room.name
            room.needsPublish = false
            let frame = HubMessage.state(board: name, version: room.durableVersion, order: room.durableOrder,
                                         clients: room.members.count, names: room.names)
            actions.append(.publish(frame: frame, to: Array(room.members.keys)))
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
            room.members.isEmpty && room.recordsInFlight == 0 && room.emptySince.map { now >= $0 + bound } == true
        }.map(\.name)
        for name in idle { boards[name] = nil }
        counters.boardsEvicted += UInt64(idle.count)
        return idle
    }

    // MARK: Membership

    private mutating func join(_ connection: UInt64, board: String, stored: StoredBoard?) {
        if boards[board] == nil {
            boards[board] = BoardRoom(name: board, hubReplica: hubReplica, stored: stored, keptOperations: limits.keptOperations,
                                      rememberedKeys: limits.rememberedKeysPerBoard)
            counters.boardsLoaded += 1
        }
        boards[board]?.members[connection] = Member(
            messages: RateLimiter(rate: limits.messagesPerSecond, burst: limits.messageBurst, now: now),
            badFrames: RateLimiter(rate: limits.badFramesPerSecond, burst: limits.badFrameBurst, now: now))
        boards[board]?.emptySince = nil
        markForPublish(boards[board])
        boardOf[connection] = board
    }

    private mutating func leave(_ connection: UInt64) {
        guard let board = boardOf.removeValue(forKey: connection) else { return }
        boards[board]?.members[connection] = nil
        boards[board]?.replicaMembers.remove(connection)
        boards[board]?.awaitingSync.removeAll { $0.connection == connection }
        boards[board]?.setName(nil, for: connection)
        markForPublish(boards[board])
        if boards[board]?.members.isEmpty == true { boards[board]?.emptySince = now }
    }

    // MARK: Frames

    private mutating func receive(_ message: ClientMessage, from connection: UInt64, actions: inout [HubAction]) {
        guard let board = boardOf[connection], let room = boards[board] else { return }
        guard room.members[connection]?.messages.allow(now: now) == true else {
            counters.rateLimited += 1
            // An `ops` frame's sender learns which of its operations the hub
            // holds, so it sends the dropped ones again instead of forgetting them.
            var ref: String?, have: UInt64?
            switch message {
            case let .intent(_, intentRef, _): ref = intentRef
            case let .operations(_, opsRef):
                ref = opsRef
                have = room.members[connection]?.replica.map { room.durableSeq(of: $0) }
            case .hello: break
            }
            refuseFrame(ProtocolError("rate_limited", "more than \(Int(limits.messagesPerSecond)) messages a second; this one was dropped"),
                        from: connection, ref: ref, have: have, actions: &actions)
            return
        }
        switch message {
        case let .intent(intent, ref, key):
            perform(intent, ref: ref, key: key, by: connection, in: room, actions: &actions)
        case let .hello(hello):
            greet(hello, from: connection, in: room, actions: &actions)
        case let .operations(operations, ref):
            merge(operations, ref: ref, from: connection, in: room, actions: &actions)
        }
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
        if room.replica.checkpoint.frontier != room.storedFrontier {
            // The board compacted: forget the least recent replicas beyond
            // the limit before the checkpoint is stored, so neither memory
            // nor the checkpoint grows with every replica ever seen.
            var keep = Set(room.members.values.compactMap(\.replica))
            keep.formUnion(room.replicasInFlight)
            counters.replicasForgotten += UInt64(room.replica.forgetReplicas(beyond: limits.maxReplicasPerBoard, keeping: keep))
            record.checkpoint = room.replica.checkpoint
            room.storedFrontier = room.replica.checkpoint.frontier
        }
        room.operationsRecorded(record.operations)
        room.recordsInFlight += 1
        outbox.append(record)
    }

    private mutating func committed(_ records: [DurableRecord], actions: inout [HubAction]) {
        for record in records {
            counters.recordsCommitted += 1
            for reply in record.replies {
                actions.append(.send(connection: reply.connection, frame: reply.frame))
            }
            guard let room = boards[record.board] else { continue }
            room.recordsInFlight -= 1
            room.operationsCommitted(record.operations)
            if let keyed = record.keyed {
                for waiter in room.keys.answer(keyed.key, with: keyed.answer) {
                    actions.append(.send(connection: waiter.connection, frame: keyed.answer.frame(ref: waiter.ref)))
                }
            }
            if record.version > room.durableVersion || record.version == room.durableVersion && record.order != room.durableOrder {
                room.durableVersion = record.version
                room.durableOrder = record.order
                markForPublish(room)
            }
            if !record.operations.isEmpty, !room.replicaMembers.isEmpty {
                let others = room.replicaMembers.filter { $0 != record.author }
                if !others.isEmpty {
                    actions.append(.relay(frame: HubMessage.operations(record.operations, board: room.name, version: record.version), to: Array(others)))
                }
            }
            if let checkpoint = record.checkpoint {
                room.durableCheckpoint = checkpoint
                if !room.compactionInFlight, !room.awaitingSync.isEmpty {
                    let waiting = room.awaitingSync
                    room.awaitingSync = []
                    for (id, frontier) in waiting {
                        guard room.replicaMembers.contains(id), let replica = room.members[id]?.replica else { continue }
                        sendSync(to: id, replica: replica, frontier: frontier, in: room, actions: &actions)
                    }
                }
                let replicas = Array(room.replicaMembers)
                if !replicas.isEmpty {
                    do {
                        actions.append(.relay(frame: try HubMessage.checkpoint(checkpoint, board: room.name, version: record.version), to: replicas))
                    } catch {
                        // Never an empty or partial frame: these replicas
                        // reconnect and catch up through `sync`.
                        counters.encodingFailures += 1
                        for id in replicas { actions.append(.close(connection: id, code: 1011, reason: "checkpoint could not be encoded")) }
                    }
                }
            }
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
    var boardsEvicted: UInt64 = 0
    var replicasForgotten: UInt64 = 0
    var keyedResends: UInt64 = 0
    var encodingFailures: UInt64 = 0
}
