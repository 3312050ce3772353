import BoardCRDT
import SyncWire
import WebSocketLoop

/// What the link tells the screen.
struct LinkSnapshot: Equatable, Sendable {
    var order: [Letter]
    var state: ConnectionState
    var clients: Int
    var names: [String]
    var version: UInt64
    /// The newest refusal to show, e.g. "board full: at most 6 letters can be selected".
    var refusal: String?
    /// Own operations the hub has not acknowledged yet.
    var unacknowledged: Int
}

/// A replica client of one board: keeps a `Replica`, applies the person's
/// own intents at once, sends them as operations, merges everyone else's,
/// and survives a lost hub: it queues while away and resumes with `hello`
/// (the hub sends only what the replica lacks), reconnecting with
/// exponential backoff and jitter. Runs on the client loop's thread.
final class ReplicaLink: ClientDelegate, @unchecked Sendable {
    // Sendable: confined to the client loop's thread (input is posted there).
    let client: WebSocketClient
    let url: WebSocketURL
    let name: String?
    private(set) var replica = Replica<LetterBoard>(id: .random(), limits: ReplicaLimits(compacts: false))
    private var unacknowledged: [BoardOperation] = []
    private var sentUpTo: UInt64 = 0
    private var connection: ClientConnection?
    private var synced = false
    private var attempt = 0
    private var reconnectAt: UInt64?
    private(set) var snapshot: LinkSnapshot
    /// Called on the loop thread whenever `snapshot` changes.
    var onChange: (LinkSnapshot) -> Void = { _ in }

    init(client: WebSocketClient, url: WebSocketURL, name: String?) {
        self.client = client
        self.url = url
        self.name = name
        snapshot = LinkSnapshot(order: [], state: .connecting, clients: 0, names: [], version: 0, refusal: nil, unacknowledged: 0)
    }

    func start() { connection = client.connect(to: url) }

    /// A person's intent: applied to the local replica at once (own
    /// operations show immediately), refused locally if it must be.
    func perform(_ intent: LetterBoard.Intent) {
        do {
            if let operation = try replica.perform(intent) {
                unacknowledged.append(operation)
                snapshot.refusal = nil
                sendPending()
            }
        } catch {
            snapshot.refusal = ScreenModel.refusalText(error)
        }
        publish()
    }

    func close() {
        if let connection { client.close(connection) }
    }

    // MARK: ClientDelegate

    func connected(_ connection: ClientConnection) {
        attempt = 0
        synced = false
        snapshot.state = .live
        sendHello()
        publish()
    }

    func received(_ connection: ClientConnection, message: UnsafeRawBufferPointer, isText: Bool) {
        guard let frame = IncomingFrame.decode(message) else { return }
        if frame.type == "ops" || frame.type == "sync", let version = frame.version { snapshot.version = version }
        switch frame.type {
        case "state":
            snapshot.clients = frame.clients ?? snapshot.clients
            snapshot.names = frame.names ?? []
            snapshot.version = frame.version ?? snapshot.version
        case "sync":
            let idBefore = replica.id
            let (adopted, merged) = replica.apply(Delta(checkpoint: frame.checkpoint, operations: frame.operations ?? []),
                                                  freshID: { .random() })
            note(merged)
            if replica.id != idBefore {
                // Rebased after a compaction this replica missed: its late
                // operations were recorded again under a new id.
                unacknowledged = adopted.rebased
                sendHello()
            } else {
                synced = true
                sentUpTo = 0
                sendPending()
            }
        case "ops":
            note(replica.receive(frame.operations ?? []))
        case "checkpoint":
            if let checkpoint = frame.checkpoint {
                let idBefore = replica.id
                let report = try? replica.adopt(checkpoint, freshID: { .random() })
                if replica.id != idBefore, let report {
                    unacknowledged = report.rebased
                    sendHello()
                }
            }
        case "ack":
            if let ref = frame.ref, ref.hasPrefix("s"), let seq = UInt64(ref.dropFirst()) {
                let id = replica.id
                unacknowledged.removeAll { $0.id.replica == id && $0.id.seq <= seq }
            }
        case "error" where frame.code == "stale_operation":
            sendHello()
        case "error", "rejected":
            snapshot.refusal = frame.message.map { ScreenModel.refusalText(code: frame.code ?? "error", message: $0) }
        default:
            break
        }
        publish()
    }

    func disconnected(_ connection: ClientConnection, reason: String) {
        self.connection = nil
        synced = false
        attempt += 1
        let base = min(8.0, 0.25 * Double(1 << min(attempt - 1, 6)))
        let delay = base * Double.random(in: 0.7...1.3)
        reconnectAt = WebSocketClient.nowNanos() + UInt64(delay * 1e9)
        snapshot.state = .reconnecting(attempt: attempt)
        publish()
    }

    func serviceLoopDidRun() {
        if let at = reconnectAt, WebSocketClient.nowNanos() >= at {
            reconnectAt = nil
            connection = client.connect(to: url)
        }
    }

    // MARK: Sending

    private func sendHello() {
        guard let connection, connection.isOpen else { return }
        synced = false
        let hello = ClientMessage.Hello(replica: replica.id, name: name, versions: replica.versions,
                                        frontier: replica.checkpoint.frontier)
        client.send(ClientMessage.helloFrame(hello), on: connection)
    }

    /// Sends own operations not yet sent on this connection (all of them
    /// after a reconnect: the hub ignores the ones it already has).
    private func sendPending() {
        guard synced, let connection, connection.isOpen else { return }
        let id = replica.id
        let fresh = unacknowledged.filter { $0.id.replica == id && $0.id.seq > sentUpTo }
        var start = 0
        while start < fresh.count {
            let chunk = Array(fresh[start..<min(start + ClientMessage.maxOperationsPerFrame, fresh.count)])
            let last = chunk[chunk.count - 1].id.seq
            client.send(ClientMessage.operationsFrame(chunk, ref: "s\(last)"), on: connection)
            sentUpTo = last
            start += chunk.count
        }
    }

    /// Shows a refusal that merging revealed: a concurrent pick took the slot (C4).
    private func note(_ report: MergeReport<BoardRefusal>) {
        for (id, outcome) in report.changedOutcomes {
            if case let .refused(refusal) = outcome, let operation = replica.log.first(where: { $0.id == id }),
               case let .select(letter) = operation.change {
                snapshot.refusal = ScreenModel.refusalText(code: refusal.code, message: "your pick of \(letter) was refused: \(refusal.message)")
            }
        }
    }

    private func publish() {
        snapshot.order = replica.state.order
        snapshot.unacknowledged = unacknowledged.count
        onChange(snapshot)
    }
}
