import BoardCRDT
import Foundation
import SyncWire
import WebSocketLoop

/// A board followed by its `state` frames and changed by intents, as the
/// browser pages do it: for kinds that take no replica clients (a shop keeps
/// each customer's orders to them, docs/rules/shop.md P7). Reconnects with
/// backoff and jitter; an intent not answered before a disconnect is sent
/// again with its idempotency key, so it is applied at most once. Runs on
/// the client loop's thread.
final class ThinLink<Kind: WireKind>: ClientDelegate, WatchLink, @unchecked Sendable {
    // Sendable: confined to `client`'s loop thread (input is posted there), checked by `client.owner` (debug builds).
    let client: WebSocketClient
    let url: WebSocketURL
    private let name: String?
    private let token: String?
    private var connection: ClientConnection?
    private var attempt = 0
    private var reconnectAt: UInt64?
    private var live = false
    private var connectionState: ConnectionState = .connecting
    private(set) var snapshot: LinkSnapshot<Kind>
    var onChange: (LinkSnapshot<Kind>) -> Void = { _ in }
    private(set) var denial: AccessDenial?
    var onDenied: (AccessDenial) -> Void = { _ in }
    /// Intents sent and not answered yet, by ref: their frames (with keys) for a resend.
    private var pending: [(ref: String, frame: String)] = []
    private var nextRef = 0
    private let keyPrefix = "watch-\(UInt64.random(in: 0...UInt64.max))"
    /// Answers to own intents since the last snapshot: the acks' messages.
    private var answers: [String] = []
    /// When intents the hub dropped for its rate limit go again.
    private var resendAt: UInt64?

    init(client: WebSocketClient, url: WebSocketURL, name: String?, access: HubAccess = HubAccess()) {
        self.client = client
        self.url = url
        self.name = name
        token = access.token
        snapshot = LinkSnapshot(board: Kind.initialState, state: .connecting, clients: 0, names: [], version: 0, refusal: nil,
                                unacknowledged: 0)
    }

    func start() {
        client.owner.check()
        connection = client.connect(to: url, bearerToken: token)
    }

    func perform(_ intent: Kind.Intent) {
        client.owner.check()
        nextRef += 1
        let ref = "w\(nextRef)"
        let frame = ClientMessage<Kind>.thinFrame(intent, ref: ref, key: "\(keyPrefix)-\(nextRef)")
        pending.append((ref, frame))
        if live, let connection, connection.isOpen { client.send(frame, on: connection) }
        publish()
    }

    func sendEditing(_ item: String?) -> Bool { false }

    func close() {
        client.owner.check()
        if let connection { client.close(connection) }
    }

    // MARK: ClientDelegate

    func connected(_ connection: ClientConnection) {
        client.owner.check()
        attempt = 0
    }

    func received(_ connection: ClientConnection, message: UnsafeRawBufferPointer, isText: Bool) {
        client.owner.check()
        guard let object = try? JSONSerialization.jsonObject(with: Data(message)) as? [String: Any],
              let type = object["type"] as? String else { return }
        switch type {
        case "state":
            guard let board = Kind.state(fromFrame: Data(message)), let version = object["version"] as? Int else {
                // Never "live" on a board it cannot read: say so and start over.
                snapshot.refusal = "this board's state could not be read; reconnecting"
                snapshot.refusals += 1
                publish()
                client.close(connection)
                return
            }
            if !live {
                // A connection's first state: say who acts here, then send again what is unanswered (same keys).
                live = true
                connectionState = .live
                if let name, token == nil { client.send(ClientMessage<Kind>.joinFrame(name: name, ref: nil), on: connection) }
                for entry in pending { client.send(entry.frame, on: connection) }
            }
            guard UInt64(version) >= snapshot.version || snapshot.state != .live else { return }   // never go back
            snapshot.board = board
            snapshot.version = UInt64(version)
            snapshot.clients = object["clients"] as? Int ?? 0
            snapshot.names = object["names"] as? [String] ?? []
        case "ack":
            guard let ref = object["ref"] as? String, let index = pending.firstIndex(where: { $0.ref == ref }) else { return }
            pending.remove(at: index)
            if let message = object["message"] as? String { answers.append(HubWords.printable(message)) }
        case "error" where object["code"] as? String == "rate_limited":
            // Dropped, not refused: it goes again in a second, under its key.
            resendAt = WebSocketClient.nowNanos() + 1_000_000_000
            return
        case "rejected", "error":
            if let ref = object["ref"] as? String { pending.removeAll { $0.ref == ref } }
            snapshot.refusal = HubWords.printable(object["message"] as? String ?? object["code"] as? String ?? "refused")
            snapshot.refusals += 1
        default:
            return
        }
        publish()
    }

    func disconnected(_ connection: ClientConnection, reason: String) {
        client.owner.check()
        self.connection = nil
        live = false
        if let denied = AccessDenial.of(connection) {
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
        if let at = resendAt, WebSocketClient.nowNanos() >= at {
            resendAt = nil
            if live, let connection, connection.isOpen { for entry in pending { client.send(entry.frame, on: connection) } }
        }
        if let at = reconnectAt, WebSocketClient.nowNanos() >= at {
            reconnectAt = nil
            connection = client.connect(to: url, bearerToken: token)
        }
    }

    private func publish() {
        snapshot.state = connectionState
        snapshot.unacknowledged = pending.count
        snapshot.answers = answers
        answers = []
        onChange(snapshot)
        snapshot.answers = []
    }
}
