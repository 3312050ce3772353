import BoardCRDT
import SyncWire

extension HubCore {
    /// A thin client's intent: merged into the hub's replica at once, so the
    /// next intent is checked against it; the reply waits for durability.
    mutating func perform(_ intent: LetterBoard.Intent, ref: String?, by connection: UInt64, in room: BoardRoom) {
        let orderBefore = room.replica.state.order
        let reply: String
        var operations: [BoardOperation] = []
        do {
            if let operation = try room.replica.perform(intent) {
                operations.append(operation)
                counters.operationsApplied += 1
            }
            if room.replica.state.order != orderBefore { room.version += 1 }
            reply = HubMessage.ack(ref: ref, version: room.version)
        } catch {
            counters.operationsRefused += 1
            reply = HubMessage.rejected(ref: ref, code: error.code, message: error.message)
        }
        record(DurableRecord(board: room.name, operations: operations, version: room.version,
                             order: room.replica.state.order, replies: [(connection, reply)],
                             author: connection, checkpoint: nil), in: room)
    }

    /// A replica client says who it is and what it has: send what it lacks.
    mutating func greet(_ hello: ClientMessage.Hello, from connection: UInt64, in room: BoardRoom, actions: inout [HubAction]) {
        room.members[connection]?.replica = hello.replica
        room.replicaMembers.insert(connection)
        let name = hello.name.map { String($0.prefix(ClientMessage.maxNameLength)) }
        if room.members[connection]?.name != name {
            room.members[connection]?.name = name
            room.setName(name, for: connection)
            markForPublish(room)
        }
        let delta = room.replica.delta(for: hello.versions, remoteFrontier: hello.frontier)
        // The replica's own history must be the one the hub holds; a client
        // that lost its state must not reuse an id with new operations.
        actions.append(.send(connection: connection, frame: HubMessage.sync(delta, board: room.name, version: room.durableVersion)))
    }

    /// A replica client's own operations: merged, stored, then acknowledged
    /// and relayed to the board's other replica clients.
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
        counters.operationsApplied += UInt64(report.integrated.count)
        if let refusal = report.refused.first {
            counters.operationsRefused += UInt64(report.refused.count)
            let code: String
            switch refusal {
            case .stale: code = "stale_operation"
            case .malformed, .clockWentBack: code = "bad_operation"
            case .pendingFull: code = "too_far_ahead"
            }
            actions.append(.send(connection: connection, frame: HubMessage.error(ProtocolError(code, refusal.description), ref: ref)))
        }
        if room.replica.state.order != orderBefore { room.version += 1 }
        let integrated = Set(report.integrated)
        let merged = operations.filter { integrated.contains($0.id) }
        let replies: [(connection: UInt64, frame: String)] =
            report.refused.isEmpty ? [(connection, HubMessage.ack(ref: ref, version: room.version))] : []
        record(DurableRecord(board: room.name, operations: merged, version: room.version,
                             order: room.replica.state.order, replies: replies, author: connection, checkpoint: nil), in: room)
    }
}
