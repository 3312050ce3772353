import BoardCRDT
import SyncWire
import WebSocketLoop

/// What the link tells the screen.
struct LinkSnapshot<Kind: WireKind>: Equatable, Sendable {
    /// The board's state on the local replica (own changes applied at once).
    var board: Kind.State
    var state: ConnectionState
    var clients: Int
    var names: [String]
    var version: UInt64
    /// The newest refusal to show, e.g. "board full: at most 6 letters can be selected".
    var refusal: String?
    /// Own operations the hub has not acknowledged yet.
    var unacknowledged: Int
    /// Own changes the hub acknowledged since the previous snapshot, with
    /// their final outcomes (each reported in one snapshot only).
    var settled: [ReplicaSession<Kind>.Settled] = []
}

/// The shell of a `ReplicaSession` on one WebSocket: connects, reconnects
/// with exponential backoff and jitter, decodes frames and carries out the
/// session's outputs. Runs on the client loop's thread.
final class ReplicaLink<Kind: WireKind>: ClientDelegate, @unchecked Sendable {
    // Sendable: confined to the client loop's thread (input is posted there).
    let client: WebSocketClient
    let url: WebSocketURL
    private var session: ReplicaSession<Kind>
    private var connection: ClientConnection?
    private var attempt = 0
    private var reconnectAt: UInt64?
    private var connectionState: ConnectionState = .connecting
    private(set) var snapshot: LinkSnapshot<Kind>
    /// Called on the loop thread whenever `snapshot` changes.
    var onChange: (LinkSnapshot<Kind>) -> Void = { _ in }

    init(client: WebSocketClient, url: WebSocketURL, name: String?) {
        self.client = client
        self.url = url
        session = ReplicaSession(name: name)
        snapshot = LinkSnapshot(board: Kind.initialState, state: .connecting, clients: 0, names: [], version: 0, refusal: nil, unacknowledged: 0)
    }

    var replica: Replica<Kind> { session.replica }

    func start() { connection = client.connect(to: url) }

    func perform(_ intent: Kind.Intent) {
        carryOut(session.perform(intent))
        publish()
    }

    func close() {
        if let connection { client.close(connection) }
    }

    // MARK: ClientDelegate

    func connected(_ connection: ClientConnection) {
        attempt = 0
        connectionState = .live
        carryOut(session.connect())
        publish()
    }

    func received(_ connection: ClientConnection, message: UnsafeRawBufferPointer, isText: Bool) {
        switch IncomingFrame<Kind>.decode(message) {
        case let .success(frame):
            carryOut(session.receive(frame, now: WebSocketClient.nowNanos()))
        case let .failure(error):
            // Never "live" on a board it cannot follow: say so and start over.
            session.unreadable(error)
            client.close(connection)
        }
        publish()
    }

    func disconnected(_ connection: ClientConnection, reason: String) {
        self.connection = nil
        session.disconnect()
        attempt += 1
        let base = min(8.0, 0.25 * Double(1 << min(attempt - 1, 6)))
        let delay = base * Double.random(in: 0.7...1.3)
        reconnectAt = WebSocketClient.nowNanos() + UInt64(delay * 1e9)
        connectionState = .reconnecting(attempt: attempt)
        publish()
    }

    func serviceLoopDidRun() {
        let now = WebSocketClient.nowNanos()
        if let at = reconnectAt, now >= at {
            reconnectAt = nil
            connection = client.connect(to: url)
        }
        let outputs = session.tick(now: now)
        if !outputs.isEmpty {
            carryOut(outputs)
            publish()
        }
    }

    private func carryOut(_ outputs: [ReplicaSession<Kind>.Output]) {
        guard let connection, connection.isOpen else { return }
        for case let .send(frame) in outputs { client.send(frame, on: connection) }
    }

    private func publish() {
        snapshot = LinkSnapshot(board: session.replica.state, state: connectionState, clients: session.clients,
                                names: session.names, version: session.version, refusal: session.refusal,
                                unacknowledged: session.pendingCount, settled: session.takeSettled())
        onChange(snapshot)
    }
}
