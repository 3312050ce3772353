import BoardCRDT
import SyncWire

extension HubCore {
    /// A thin client's intent: merged into the hub's replica at once, so the
    /// next intent is checked against it; the reply waits for durability.
    /// A keyed intent already merged is not merged again: its first answer
    /// goes back (at once when durable, else once it is).
    mutating func perform(_ intent: LetterBoard.Intent, ref: String?, key: String?, by connection: UInt64, in room: BoardRoom,
                          actions: inout [HubAction]) {
        if let key {
            switch room.keys[key] {
            case let .answered(answer)?:
                counters.keyedResends += 1
                actions.append(.send(connection: connection, frame: answer.frame(ref: ref)))
                return
            case .pending?:
                counters.keyedResends += 1
                room.keys.wait(key, connection: connection, ref: ref)
                return
            case nil:
                room.keys.begin(key)
            }
        }
        let orderBefore = room.replica.state.order
        let answer: KeyedAnswer
        var operations: [BoardOperation] = []
        do {
            if let operation = try room.replica.perform(intent) {
                operations.append(operation)
                counters.operationsApplied += 1
            }
            if room.replica.state.order != orderBefore { room.version += 1 }
            answer = .ack(version: room.version)
        } catch {
            counters.operationsRefused += 1
            answer = .rejected(code: error.code, message: error.message)
        }
        record(DurableRecord(board: room.name, hubReplica: room.replica.id, operations: operations, version: room.version,
                             order: room.replica.state.order, replies: [(connection, answer.frame(ref: ref))],
                             author: connection, keyed: key.map { ($0, answer) }), in: room)
    }

    /// A replica client says who it is and which checkpoint it holds: send
    /// what it may lack. A replica the board has no record of, that says it
    /// sent operations before, must start again under a new id: whatever it
    /// sent was forgotten or never became durable, and accepting its next
    /// sequence numbers would leave a gap nothing can fill.
    mutating func greet(_ hello: ClientMessage.Hello, from connection: UInt64, in room: BoardRoom, actions: inout [HubAction]) {
        let name = hello.name.map { String($0.prefix(ClientMessage.maxNameLength)) }
        if room.members[connection]?.name != name {
            room.members[connection]?.name = name
            room.setName(name, for: connection)
            markForPublish(room)
        }
        guard hello.sent == 0 || room.replica.knows(hello.replica) else {
            room.members[connection]?.replica = nil
            room.replicaMembers.remove(connection)
            actions.append(.send(connection: connection, frame: HubMessage.error(ProtocolError(
                "unknown_replica",
                "this board has no record of replica \(hello.replica)'s operations (forgotten after long inactivity, or never stored); start again under a new replica id"),
                replica: hello.replica)))
            return
        }
        room.members[connection]?.replica = hello.replica
        room.replicaMembers.insert(connection)
        room.awaitingSync.removeAll { $0.connection == connection }
        if room.compactionInFlight {
            // Relays of what commits meanwhile still reach it; the sync goes
            // once the checkpoint is durable (`committed`).
            room.awaitingSync.append((connection, hello.frontier))
            return
        }
        sendSync(to: connection, replica: hello.replica, frontier: hello.frontier, in: room, actions: &actions)
    }

    /// The `sync` answering a replica client's `hello`.
    mutating func sendSync(to connection: UInt64, replica: ReplicaID, frontier: Stamp, in room: BoardRoom, actions: inout [HubAction]) {
        do {
            let frame = try HubMessage.sync(room.catchUp(from: frontier), board: room.name, version: room.durableVersion,
                                            replica: replica, have: room.durableSeq(of: replica))
            actions.append(.send(connection: connection, frame: frame))
        } catch {
            counters.encodingFailures += 1
            actions.append(.close(connection: connection, code: 1011, reason: "sync could not be encoded"))
        }
    }

    /// A replica client's own operations: merged, stored, then answered and
    /// relayed to the board's other replica clients. Everything the merge
    /// integrated is stored and relayed, including operations an earlier
    /// gap held back; the answer (ack or error, once durable) says up to
    /// which sequence number the hub holds the sender's operations.
    mutating func merge(_ operations: [BoardOperation], ref: String?, from connection: UInt64, in room: BoardRoom, actions: inout [HubAction]) {
        guard let replica = room.members[connection]?.replica else {
            actions.append(.send(connection: connection, frame: HubMessage.error(
                ProtocolError("hello_first", "send hello with your replica id before operations"), ref: ref)))
            return
        }
        if let foreign = operations.first(where: { $0.id.replica != replica }) {
            actions.append(.send(connection: connection, frame: HubMessage.error(
                ProtocolError("not_your_operation", "operation \(foreign.id) belongs to another replica; send only your own"), ref: ref)))
            return
        }
        let orderBefore = room.replica.state.order
        let report = room.replica.receive(operations)
        counters.operationsApplied += UInt64(report.integratedOperations.count)
        if room.replica.state.order != orderBefore { room.version += 1 }
        // Every operation of this replica up to `have` is in this record or an earlier one.
        let have = room.replica.versions[replica]
        let reply: String
        if let refusal = report.refused.first {
            counters.operationsRefused += UInt64(report.refused.count)
            let code: String
            switch refusal {
            case .stale: code = "stale_operation"
            case .malformed, .clockWentBack: code = "bad_operation"
            case .pendingFull: code = "too_far_ahead"
            }
            reply = HubMessage.error(ProtocolError(code, refusal.description), ref: ref, have: have)
        } else {
            reply = HubMessage.ack(ref: ref, version: room.version, have: have)
        }
        record(DurableRecord(board: room.name, hubReplica: room.replica.id, operations: report.integratedOperations,
                             version: room.version, order: room.replica.state.order, replies: [(connection, reply)],
                             author: connection), in: room)
    }
}
