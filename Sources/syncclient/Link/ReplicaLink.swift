import BoardCRDT
import Foundation
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
    /// Who edits which item (kinds with presence, e.g. `["ana": "a1"]`).
    var editing: [String: String] = [:]
    /// How many refusals the session has shown: a refusal equal to the last
    /// one (the same change refused again) is still a new one to show.
    var refusals: UInt64 = 0
    /// Thin links: the messages of own intents acknowledged since the
    /// previous snapshot (a shop's "주문이 완료되었습니다"), each once.
    var answers: [String] = []
}

/// The shell of a `ReplicaSession` on one WebSocket: connects, reconnects
/// with exponential backoff and jitter, decodes frames and carries out the
/// session's outputs. Runs on the client loop's thread.
final class ReplicaLink<Kind: WireKind>: ClientDelegate, @unchecked Sendable {
    // Sendable: confined to `client`'s loop thread (input is posted there), checked by `client.owner` (debug builds).
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
    /// Set once the hub refused the token (401/403, 4401/4403): the link stays down.
    private(set) var denial: AccessDenial?
    /// Called on the loop thread when the hub refuses the token.
    var onDenied: (AccessDenial) -> Void = { _ in }
    /// The token sent on every upgrade; with `--token-file`, renewed in-band before it expires.
    private var token: String?
    private let tokenFile: String?
    private var refresh: TokenRefresh?

    init(client: WebSocketClient, url: WebSocketURL, name: String?, access: HubAccess = HubAccess()) {
        self.client = client
        self.url = url
        token = access.token
        tokenFile = access.tokenFile
        if access.tokenFile != nil, let token = access.token { refresh = TokenRefresh(token: token) }
        session = ReplicaSession(name: name)
        snapshot = LinkSnapshot(board: Kind.initialState, state: .connecting, clients: 0, names: [], version: 0, refusal: nil,
                                unacknowledged: 0)
    }

    var replica: Replica<Kind> { session.replica }

    func start() {
        client.owner.check()
        connection = client.connect(to: url, bearerToken: token)
    }

    func perform(_ intent: Kind.Intent) {
        client.owner.check()
        carryOut(session.perform(intent))
        publish()
    }

    /// Presence (kinds with `editing`): which item this person edits now,
    /// sent on the open connection; false when there is none (send it again
    /// after the next connect).
    @discardableResult
    func sendEditing(_ item: String?) -> Bool {
        client.owner.check()
        guard let connection, connection.isOpen, session.synced else { return false }
        client.send(ClientMessage<Kind>.editingFrame(id: item), on: connection)
        return true
    }

    func close() {
        client.owner.check()
        if let connection { client.close(connection) }
    }

    // MARK: ClientDelegate

    func connected(_ connection: ClientConnection) {
        client.owner.check()
        attempt = 0
        connectionState = .live
        carryOut(session.connect())
        publish()
    }

    func received(_ connection: ClientConnection, message: UnsafeRawBufferPointer, isText: Bool) {
        client.owner.check()
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
        client.owner.check()
        self.connection = nil
        session.disconnect()
        if let denied = AccessDenial.of(connection) {
            // Retrying with a token the hub refused cannot help.
            denial = denied
            connectionState = .refused(denied.reason)
            reconnectAt = nil
            publish()
            onDenied(denied)
            return
        }
        attempt += 1
        let delay = ReconnectDelay.seconds(closeCode: connection.closeCode, attempt: attempt, jitter: Double.random(in: 0.7...1.3))
        reconnectAt = WebSocketClient.nowNanos() + UInt64(delay * 1e9)
        connectionState = connection.closeCode == ReconnectDelay.putOutCode
            ? .putOut : .reconnecting(attempt: attempt)
        publish()
    }

    func serviceLoopDidRun() {
        client.owner.check()
        let now = WebSocketClient.nowNanos()
        if let at = reconnectAt, now >= at {
            reconnectAt = nil
            connection = client.connect(to: url, bearerToken: token)
        }
        renewTokenIfDue()
        let outputs = session.tick(now: now)
        if !outputs.isEmpty {
            carryOut(outputs)
            publish()
        }
    }

    /// `--token-file`: near the token's `exp`, a newer token from the file goes
    /// to the hub as an `auth` frame and is used for later reconnections.
    private func renewTokenIfDue() {
        guard var refresh, let tokenFile, refresh.wantsLook(now: Date().timeIntervalSince1970) else { return }
        defer { self.refresh = refresh }
        guard let text = try? String(contentsOfFile: tokenFile, encoding: .utf8), let frame = refresh.offer(text) else { return }
        token = refresh.token
        if let connection, connection.isOpen { client.send(frame, on: connection) }
    }

    private func carryOut(_ outputs: [ReplicaSession<Kind>.Output]) {
        guard let connection, connection.isOpen else { return }
        for case let .send(frame) in outputs { client.send(frame, on: connection) }
    }

    private func publish() {
        snapshot = LinkSnapshot(board: session.replica.state, state: connectionState, clients: session.clients,
                                names: session.names, version: session.version, refusal: session.refusal,
                                unacknowledged: session.pendingCount, settled: session.takeSettled(), editing: session.editing,
                                refusals: session.refusals)
        onChange(snapshot)
    }
}
