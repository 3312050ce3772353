import BoardCRDT
import Foundation
import SyncWire
import WebSocketLoop

/// How a one-shot command ended (the exit codes of K3, docs/rules/README.md).
enum RequestOutcome: Equatable {
    /// The hub acknowledged; carries the line to print, if any.
    case done(String?)
    /// The hub refused: its message goes to standard error, exit 1.
    case refused(String)
    /// Usage or connection error: exit 2.
    case failed(String)

    var exitCode: Int32 {
        switch self {
        case .done: 0
        case .refused: 1
        case .failed: 2
        }
    }
}

/// One thin-protocol exchange: connect, take the first `state`, send one
/// intent (if any), wait for its `ack` or `rejected`, close.
final class ThinRequest: ClientDelegate, @unchecked Sendable {
    // Sendable: confined to the thread of `run`, which runs `client`'s loop: checked by `client.owner` (debug builds).
    private let client: WebSocketClient
    private let url: WebSocketURL
    private let token: String?
    private let intentFrame: String?
    private var outcome: RequestOutcome = .failed("no answer from the hub")
    private var deadline: UInt64
    private let ref = "cli-\(UInt32.random(in: 0...UInt32.max))"
    private var connection: ClientConnection?
    /// Print the whole ack (its JSON line) instead of its `message` (the shop's one-shots).
    private let printsWholeAck: Bool

    /// `intentMembers` (the intent's JSON members, `"type":...` first; see
    /// `WireKind.intentMembers`) nil only reads the state (`syncclient state`).
    /// `key`: the intent's idempotency key, fresh when nil.
    /// `access`: the token and TLS trust (by default the command's, `HubAccess.chosen`).
    init(url: WebSocketURL, intentMembers: String?, key: String? = nil, timeoutSeconds: Double,
         access: HubAccess = HubAccess.chosen.withLock { $0 }, printsWholeAck: Bool = false) {
        self.url = url
        self.printsWholeAck = printsWholeAck
        client = WebSocketClient(fdLimit: 64, tls: access.tls)
        token = access.token
        // Every intent carries an idempotency key (docs/PROTOCOL.md); a
        // one-shot sends its frame once, so the key is fresh per command.
        var keyText = ""
        HubMessage.appendJSONString(key ?? "cli-\(UInt64.random(in: 0...UInt64.max))-\(UInt64.random(in: 0...UInt64.max))", to: &keyText)
        intentFrame = intentMembers.map { [ref] in "{\($0),\"ref\":\"\(ref)\",\"key\":\(keyText)}" }
        deadline = WebSocketClient.nowNanos() + UInt64(timeoutSeconds * 1e9)
    }

    func run() -> RequestOutcome {
        client.delegate = self
        guard client.start() else { return .failed("could not start the network loop") }
        client.post { [self] in connection = client.connect(to: url, bearerToken: token) }
        client.run()
        return outcome
    }

    private var finished = false

    private func finish(_ result: RequestOutcome) {
        client.owner.check()
        guard !finished else { return }
        finished = true
        outcome = result
        if let connection { client.close(connection) }
        client.stop()
    }

    func connected(_ connection: ClientConnection) {
        client.owner.check()
    }

    func received(_ connection: ClientConnection, message: UnsafeRawBufferPointer, isText: Bool) {
        client.owner.check()
        guard let object = try? JSONSerialization.jsonObject(with: Data(message)) as? [String: Any],
              let type = object["type"] as? String else { return }
        let line = String(decoding: message, as: UTF8.self)
        switch type {
        case "state":
            if let intentFrame {
                if object["version"] != nil, self.outcome == .failed("no answer from the hub") {
                    self.outcome = .failed("sent; waiting for the hub's answer")
                    client.send(intentFrame, on: connection)
                }
            } else {
                finish(.done(line))
            }
        case "ack" where object["ref"] as? String == ref:
            // A kind's ack may say something for people (a made juice, J3): print it.
            finish(.done(printsWholeAck ? line : object["message"] as? String))
        case "rejected" where object["ref"] as? String == ref:
            finish(.refused(object["message"] as? String ?? line))
        case "error":
            finish(.refused(object["message"] as? String ?? line))
        default:
            break
        }
    }

    func disconnected(_ connection: ClientConnection, reason: String) {
        client.owner.check()
        if let denial = AccessDenial.of(connection) {
            finish(.failed("\(url): \(denial.message)"))
        } else if connection.certificateProblem != nil {
            finish(.failed("cannot reach \(url): \(reason) (--ca FILE trusts the hub's CA; --insecure skips the check)"))
        } else {
            finish(.failed("cannot reach \(url): \(reason)"))
        }
    }

    func serviceLoopDidRun() {
        client.owner.check()
        if WebSocketClient.nowNanos() > deadline { finish(.failed("no answer from \(url) in time")) }
    }
}
