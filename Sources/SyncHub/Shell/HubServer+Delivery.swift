import WebSocketLoop

// Delivering a board's publish: the whole state, the patch or presence to
// each connection, by what it holds (`PublishedState`), each frame encoded
// once.

extension HubServer {
    /// A board's new state: the whole frame to connections on whole states,
    /// a patch to those on patches that hold its base with nothing waiting,
    /// the whole state (latest wins) to the others, presence to replica
    /// clients that asked for it. Each frame is encoded once.
    func deliver(_ published: PublishedState) {
        // Encoded once, and only when some connection takes it.
        var whole = published.stateTo.isEmpty ? nil : OutgoingFrame(published.frameBytes)
        var sent = 0
        if let whole {
            let connections = stateConnections(published)
            for connection in connections { server.sendLatest(whole, to: connection) }
            sent += whole.count * connections.count
        }
        defer { traffic.note(sent, board: published.board, nowNanos: WebSocketServer.nowNanos()) }
        let patch = published.patch.map { OutgoingFrame(text: $0) }
        for id in published.patchTo {
            guard let connection = server.connections[id] else { continue }
            switch published.delivery(to: id, holding: connection.heldState, stateWaiting: connection.stateWaiting) {
            case .nothing: continue
            case .patch:
                if let patch {
                    server.sendLatest(patch, to: connection)
                    sent += patch.count
                }
            case .whole:
                let frame = whole ?? OutgoingFrame(published.frameBytes)
                whole = frame
                server.sendLatest(frame, to: connection)
                sent += frame.count
            }
            connection.heldState = published.generation
        }
        if let presence = published.presence {
            let frame = OutgoingFrame(text: presence)
            for id in published.presenceTo { if let connection = server.connections[id] { server.sendLatest(frame, to: connection) } }
        }
    }

    /// The open connections of `published.stateTo`. Looked up once per
    /// audience and kept in its memo: a fan-out then walks an array instead
    /// of hashing every client's id (a closed one is skipped by `sendLatest`
    /// until the core, told of the close, makes a new audience).
    private func stateConnections(_ published: PublishedState) -> [ServerConnection] {
        if let kept = published.stateMemo?.shell as? FanOut { return kept.connections }
        let found = published.stateTo.compactMap { server.connections[$0] }
        published.stateMemo?.shell = FanOut(connections: found)
        return found
    }
}

/// The connections of one audience, as `HubServer.stateConnections` keeps them.
private final class FanOut {
    let connections: [ServerConnection]
    init(connections: [ServerConnection]) { self.connections = connections }
}
