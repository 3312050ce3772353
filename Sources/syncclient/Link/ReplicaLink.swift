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
/// and survives a lost hub: it queues while away and resumes with `hello`,
/// reconnecting with exponential backoff and jitter. Runs on the client
/// loop's thread.
///
/// Delivery (docs/PROTOCOL.md, replica protocol): every answer from the hub
/// says up to which sequence number it holds this replica's operations
/// (`have`); anything after that which was sent is sent again, so a frame
/// lost to a gap, a reconnect or the rate limiter is never forgotten.
final class ReplicaLink: ClientDelegate, @unchecked Sendable {
    // Sendable: confined to the client loop's thread (input is posted there).
    let client: WebSocketClient
    let url: WebSocketURL
    let name: String?
    private(set) var replica = ReplicaLink.freshReplica()
    private var unacknowledged: [BoardOperation] = []
    /// Own operations up to this seq were sent on the current connection.
    private var sentUpTo: UInt64 = 0
    /// The highest own seq ever sent to the hub (the `hello`'s `sent`).
    private var sentEver: UInt64 = 0
    /// `ops` frames are numbered; answers to frames sent before the last
    /// resend do not trigger another one.
    private var framesSent: UInt64 = 0
    private var resendBarrier: UInt64 = 0
    private var resendAt: UInt64?
    /// Changes to record again under a new replica id once the hub's `sync`
    /// has arrived (after `unknown_replica` or a divergent checkpoint).
    private var carried: [LetterBoard.Change] = []
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

    private static func freshReplica() -> Replica<LetterBoard> {
        Replica<LetterBoard>(id: .random(), limits: ReplicaLimits(compacts: false))
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
        let frame: IncomingFrame
        switch IncomingFrame.decode(message) {
        case let .success(decoded):
            frame = decoded
        case let .failure(error):
            // Never "live" on a board it cannot follow: say so and start over.
            snapshot.refusal = ScreenModel.refusalText(code: "unreadable_frame", message: error.description)
            client.close(connection)
            publish()
            return
        }
        if frame.type == "ops" || frame.type == "sync", let version = frame.version { snapshot.version = version }
        switch frame.type {
        case "state":
            snapshot.clients = frame.clients ?? snapshot.clients
            snapshot.names = frame.names ?? []
            snapshot.version = frame.version ?? snapshot.version
        case "sync":
            caughtUp(frame)
        case "ops":
            note(replica.receive(frame.operations ?? []))
        case "checkpoint":
            if let checkpoint = frame.checkpoint { adopt(checkpoint) }
        case "ack":
            answered(frame)
        case "error" where frame.code == "unknown_replica":
            startAfresh(because: frame.message ?? "the hub does not know this replica")
        case "error" where frame.code == "stale_operation":
            dropAcknowledged(upTo: frame.have)
            sendHello()
        case "error" where frame.code == "rate_limited" && frame.have != nil:
            // Dropped: send it again a little later, not at once.
            dropAcknowledged(upTo: frame.have)
            sentUpTo = min(sentUpTo, frame.have ?? 0)
            resendAt = WebSocketClient.nowNanos() + 250_000_000
        case "error" where frame.code == "too_far_ahead":
            answered(frame)
        case "error", "rejected":
            dropAcknowledged(upTo: frame.have)
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
        let now = WebSocketClient.nowNanos()
        if let at = reconnectAt, now >= at {
            reconnectAt = nil
            connection = client.connect(to: url)
        }
        if let at = resendAt, now >= at {
            resendAt = nil
            resendBarrier = framesSent + 1
            sendPending()
        }
    }

    // MARK: Catching up

    /// The hub's answer to `hello`: adopt its checkpoint if newer, merge its
    /// operations, then send what it does not hold yet.
    private func caughtUp(_ frame: IncomingFrame) {
        if let checkpoint = frame.checkpoint {
            guard adopt(checkpoint) else { return }
        }
        note(replica.receive(frame.operations ?? []))
        if !carried.isEmpty {
            // Recorded again under this replica's new id, after the board as the hub has it.
            unacknowledged = carried.map { replica.record($0) }
            carried = []
        }
        dropAcknowledged(upTo: frame.have)
        synced = true
        sentUpTo = min(sentUpTo, frame.have ?? 0)
        resendBarrier = framesSent + 1
        sendPending()
    }

    /// Adopts a checkpoint from the hub. Returns false when the link had to
    /// start afresh instead (a checkpoint from another history).
    @discardableResult
    private func adopt(_ checkpoint: Checkpoint<LetterBoard>) -> Bool {
        let idBefore = replica.id
        do {
            let report = try replica.adopt(checkpoint, freshID: { .random() })
            if replica.id != idBefore {
                // Rebased after a compaction this replica missed: its late
                // operations were recorded again under a new id.
                unacknowledged = report.rebased
                sentEver = 0
                sentUpTo = 0
                sendHello()
                return false
            }
            return true
        } catch {
            startAfresh(because: error.description)
            return false
        }
    }

    /// Drops the local replica and greets the hub as a new one; the
    /// unacknowledged changes are recorded again once the board has arrived.
    private func startAfresh(because reason: String) {
        carried += unacknowledged.map(\.change)
        unacknowledged = []
        replica = Self.freshReplica()
        sentEver = 0
        sentUpTo = 0
        snapshot.refusal = ScreenModel.refusalText(code: "resynced", message: "the board was reloaded from the hub (\(reason))")
        sendHello()
    }

    /// An answer to an `ops` frame: forget what the hub holds, and send
    /// again what it does not, unless a resend already covers it.
    private func answered(_ frame: IncomingFrame) {
        dropAcknowledged(upTo: frame.have)
        guard let have = frame.have, let (lastSeq, number) = Self.parseRef(frame.ref) else { return }
        if have < lastSeq, number >= resendBarrier {
            sentUpTo = min(sentUpTo, have)
            resendBarrier = framesSent + 1
            sendPending()
        }
    }

    private func dropAcknowledged(upTo have: UInt64?) {
        guard let have else { return }
        let id = replica.id
        unacknowledged.removeAll { $0.id.replica == id && $0.id.seq <= have }
    }

    // MARK: Sending

    private func sendHello() {
        guard let connection, connection.isOpen else { return }
        synced = false
        let hello = ClientMessage.Hello(replica: replica.id, name: name, frontier: replica.checkpoint.frontier, sent: sentEver)
        client.send(ClientMessage.helloFrame(hello), on: connection)
    }

    /// Sends own operations not yet sent on this connection (the hub
    /// ignores the ones it already has).
    private func sendPending() {
        guard synced, let connection, connection.isOpen else { return }
        let id = replica.id
        let fresh = unacknowledged.filter { $0.id.replica == id && $0.id.seq > sentUpTo }
        var start = 0
        while start < fresh.count {
            let chunk = Array(fresh[start..<min(start + ClientMessage.maxOperationsPerFrame, fresh.count)])
            let last = chunk[chunk.count - 1].id.seq
            framesSent += 1
            client.send(ClientMessage.operationsFrame(chunk, ref: "s\(last).\(framesSent)"), on: connection)
            sentUpTo = last
            sentEver = max(sentEver, last)
            start += chunk.count
        }
    }

    /// `s<last seq>.<frame number>` back into its parts.
    static func parseRef(_ ref: String?) -> (lastSeq: UInt64, frame: UInt64)? {
        guard let ref, ref.hasPrefix("s") else { return nil }
        let parts = ref.dropFirst().split(separator: ".")
        guard parts.count == 2, let seq = UInt64(parts[0]), let frame = UInt64(parts[1]) else { return nil }
        return (seq, frame)
    }

    /// Shows a refusal that merging revealed: a concurrent pick took the slot (C4).
    private func note(_ report: MergeReport<LetterBoard>) {
        for (id, outcome) in report.changedOutcomes {
            if case let .refused(refusal) = outcome, let operation = replica.log.first(where: { $0.id == id }),
               case let .select(letter) = operation.change {
                snapshot.refusal = ScreenModel.refusalText(code: refusal.code, message: "your pick of \(letter) was refused: \(refusal.message)")
            }
        }
    }

    private func publish() {
        snapshot.order = replica.state.order
        snapshot.unacknowledged = unacknowledged.count + carried.count
        onChange(snapshot)
    }
}
