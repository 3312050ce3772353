import BoardCRDT
import SyncWire

/// The replica protocol of one board as a client speaks it (docs/PROTOCOL.md,
/// replica protocol): a pure state machine, frames in and frames out, with
/// the clock passed in. `ReplicaLink` is its shell on a WebSocket.
///
/// It keeps the local replica, applies the person's intents at once, and
/// never forgets an own operation until an answer about **this** replica id
/// says the hub holds it (`have`): what a gap, a reconnect, a dropped frame
/// or the rate limiter lost is sent again. Answers meant for an id it no
/// longer uses (it rebased or started afresh since) move nothing.
struct ReplicaSession<Kind: WireKind> {
    /// What the shell must do.
    enum Output: Equatable {
        case send(String)
    }

    private(set) var replica: Replica<Kind>
    private(set) var unacknowledged: [BoardCRDT.Operation<Kind.Change>] = []
    /// Changes to record again once the hub's `sync` has arrived (after
    /// `unknown_replica` or a checkpoint from another history).
    private(set) var carried: [Kind.Change] = []
    private(set) var synced = false
    private(set) var refusal: String? {
        didSet { if refusal != nil { refusals &+= 1 } }
    }
    /// Counts refusals set, so the same words twice are shown twice.
    private(set) var refusals: UInt64 = 0
    private(set) var version: UInt64 = 0
    private(set) var clients = 0
    private(set) var names: [String] = []
    /// Who edits which item, from the newest `state` (kinds with presence).
    private(set) var editing: [String: String] = [:]
    private var settled: [Settled] = []
    /// The hub refused this connection's changes `forbidden` (a read-only
    /// token, A9): later intents are refused here, not shown then taken back.
    private(set) var readOnly: String?

    let name: String?
    private let freshID: () -> ReplicaID
    private var connected = false
    /// Own operations up to this seq were sent on the current connection.
    private var sentUpTo: UInt64 = 0
    /// The highest own seq ever sent under the current id (the `hello`'s `sent`).
    private var sentEver: UInt64 = 0
    /// Which replica id each `ops` frame still unanswered was sent under.
    private var frameReplica: [UInt64: ReplicaID] = [:]
    private var framesSent: UInt64 = 0
    /// Answers to frames numbered below this do not start another resend.
    private var resendBarrier: UInt64 = 0
    private var resendAt: UInt64?
    /// A `hello` the rate limiter dropped goes again at this time.
    private var helloAt: UInt64?

    /// Resend delay after `rate_limited`, in nanoseconds.
    static var rateLimitedDelay: UInt64 { 250_000_000 }

    init(name: String?, freshID: @escaping () -> ReplicaID = { .random() }) {
        self.name = name
        self.freshID = freshID
        replica = Self.emptyReplica(freshID())
    }

    private static func emptyReplica(_ id: ReplicaID) -> Replica<Kind> {
        Replica<Kind>(id: id, limits: ReplicaLimits(compacts: false, hubSealsOrder: true))
    }

    var pendingCount: Int { unacknowledged.count + carried.count }

    // MARK: Events

    mutating func connect() -> [Output] {
        connected = true
        synced = false
        readOnly = nil
        return [hello()]
    }

    mutating func disconnect() {
        connected = false
        synced = false
        frameReplica = [:]
        resendAt = nil
        helloAt = nil
    }

    /// A person's intent: applied at once, refused locally if it must be.
    mutating func perform(_ intent: Kind.Intent) -> [Output] {
        if let readOnly {
            refusal = ScreenModel.refusalText(code: "forbidden", message: readOnly)
            return []
        }
        do {
            guard let operation = try replica.perform(intent, by: name ?? "") else { return [] }
            unacknowledged.append(operation)
            refusal = nil
            if case let .refused(refused)? = replica.outcome(of: operation.id) {
                // Recorded but refused where it landed (the Set table's SC2,
                // told once): it still goes to the hub; the person is told now.
                refusal = ScreenModel.refusalText(code: refused.code, message: refused.message)
            }
            return sendPending()
        } catch {
            refusal = ScreenModel.refusalText(code: error.code, message: error.message)
            return []
        }
    }

    mutating func receive(_ frame: IncomingFrame<Kind>, now: UInt64) -> [Output] {
        if frame.type == "ops" || frame.type == "sync", let version = frame.version { self.version = version }
        switch frame.type {
        case "state", "presence":
            clients = frame.clients ?? clients
            names = frame.names ?? []
            editing = frame.editing ?? [:]
            // A presence frame may be written after newer `ops`: never back.
            version = max(version, frame.version ?? version)
            return []
        case "notice":
            // K9, TC2: someone's change overwrote this person's; say what won.
            refusal = frame.message.map { ScreenModel.refusalText(code: frame.code ?? "notice", message: $0) }
            return []
        case "sync":
            // An answer to a `hello` of an id given up since: the one for the
            // current id follows.
            if let id = frame.replica, id != replica.id { return [] }
            return caughtUp(frame)
        case "ops":
            note(replica.receive(frame.operations ?? []))
            return []
        case "checkpoint":
            guard let checkpoint = frame.checkpoint else { return [] }
            return adopt(checkpoint).outputs
        case "ack":
            return answered(frame, now: now)
        case "error":
            return failed(frame, now: now)
        case "rejected":
            refusal = frame.message.map { ScreenModel.refusalText(code: frame.code ?? "rejected", message: $0) }
            return []
        default:
            return []
        }
    }

    /// Timers: a delayed resend or `hello`.
    mutating func tick(now: UInt64) -> [Output] {
        var out: [Output] = []
        if let at = helloAt, now >= at {
            helloAt = nil
            out.append(hello())
        }
        if let at = resendAt, now >= at {
            resendAt = nil
            resendBarrier = framesSent + 1
            out += sendPending()
        }
        return out
    }

    // MARK: Answers

    /// The replica id the `ops` frame named by `ref` was sent under, if it
    /// is this session's and unanswered; forgets the frame.
    private mutating func frameNumber(_ ref: String?) -> (lastSeq: UInt64, frame: UInt64, current: Bool)? {
        guard let (lastSeq, number) = Self.parseRef(ref) else { return nil }
        let sentUnder = frameReplica.removeValue(forKey: number)
        return (lastSeq, number, sentUnder == replica.id)
    }

    /// An `ack` of an `ops` frame: forget what the hub holds, and send again
    /// what it does not, unless a resend already covers it.
    private mutating func answered(_ frame: IncomingFrame<Kind>, now: UInt64) -> [Output] {
        guard let (lastSeq, number, current) = frameNumber(frame.ref), current, let have = frame.have else { return [] }
        dropAcknowledged(upTo: have)
        guard have < lastSeq, number >= resendBarrier, resendAt == nil else { return [] }
        sentUpTo = min(sentUpTo, have)
        resendBarrier = framesSent + 1
        return sendPending()
    }

    private mutating func failed(_ frame: IncomingFrame<Kind>, now: UInt64) -> [Output] {
        let code = frame.code ?? "error"
        if code == "unknown_replica" {
            if let id = frame.replica, id != replica.id { return [] }
            return startAfresh(because: frame.message ?? "the hub does not know this replica")
        }
        if frame.ref == nil, code == "rate_limited", !synced {
            // The `hello` itself was dropped: greet again shortly.
            helloAt = now + Self.rateLimitedDelay
            return []
        }
        if let (_, _, current) = frameNumber(frame.ref) {
            guard current else { return [] }
            dropAcknowledged(upTo: frame.have)
            switch code {
            case "stale_operation":
                // Away across a compaction: the `sync` brings the checkpoint to rebase on.
                return [hello()]
            case "rate_limited", "too_far_ahead":
                sentUpTo = min(sentUpTo, frame.have ?? 0)
                resendBarrier = framesSent + 1
                resendAt = now + Self.rateLimitedDelay
                return []
            case "forbidden":
                // A read-only token: none of these will ever be taken. Take
                // them back by reloading the board from the hub.
                let message = frame.message ?? "your token lets you read this board, not change it"
                readOnly = message
                unacknowledged = []
                carried = []
                replica = Self.emptyReplica(freshID())
                sentEver = 0
                sentUpTo = 0
                refusal = ScreenModel.refusalText(code: code, message: message)
                return [hello()]
            default:
                break
            }
        }
        refusal = frame.message.map { ScreenModel.refusalText(code: code, message: $0) }
        return []
    }

    private mutating func dropAcknowledged(upTo have: UInt64?) {
        guard let have else { return }
        let id = replica.id
        for operation in unacknowledged where operation.id.replica == id && operation.id.seq <= have {
            // The hub relays its version of a re-stamped operation before
            // the answer, so the outcome here is the hub's: final (§7c).
            settled.append(Settled(change: operation.change, outcome: replica.outcome(of: operation.id)))
        }
        unacknowledged.removeAll { $0.id.replica == id && $0.id.seq <= have }
    }

    /// Own changes the hub acknowledged since the last `takeSettled()`,
    /// with their final outcome (nil when a checkpoint already folded it).
    struct Settled: Equatable, Sendable {
        var change: Kind.Change
        var outcome: Outcome<Kind.Refusal>?
    }

    /// The changes settled since the last call, each reported once.
    mutating func takeSettled() -> [Settled] {
        defer { settled = [] }
        return settled
    }

    // MARK: Catching up

    /// The hub's answer to `hello`: adopt its checkpoint if newer, merge its
    /// operations, then send what it does not hold yet.
    private mutating func caughtUp(_ frame: IncomingFrame<Kind>) -> [Output] {
        if let checkpoint = frame.checkpoint {
            // Own operations the hub re-stamped first: the checkpoint is
            // judged against their final stamps, not as late ones to redo.
            let own = (frame.operations ?? []).filter { $0.id.replica == replica.id }
            if !own.isEmpty { note(replica.receive(own)) }
            let (adopted, outputs) = adopt(checkpoint)
            guard adopted else { return outputs }
        }
        note(replica.receive(frame.operations ?? []))
        if !carried.isEmpty {
            // Recorded again under this replica's new id, after the board as the hub has it.
            unacknowledged = carried.map { replica.record($0, by: name ?? "") }
            carried = []
            // Recorded again on the board as it is now: a change that no
            // longer fits (a make the stock no longer covers) is told.
            noteRefused(unacknowledged.map(\.id))
        }
        dropAcknowledged(upTo: frame.have)
        synced = true
        sentUpTo = min(sentUpTo, frame.have ?? 0)
        resendBarrier = framesSent + 1
        return sendPending()
    }

    /// Adopts a checkpoint from the hub. `adopted` false when it rebased
    /// or started afresh instead (a new `hello` is among the outputs).
    private mutating func adopt(_ checkpoint: Checkpoint<Kind>) -> (adopted: Bool, outputs: [Output]) {
        let idBefore = replica.id
        do {
            let report = try replica.adopt(checkpoint, freshID: freshID)
            noteRefused(report.changedOwn)
            guard replica.id != idBefore else { return (true, []) }
            // Rebased after a compaction this replica missed: its late
            // operations were recorded again under a new id.
            unacknowledged = report.rebased
            sentEver = 0
            sentUpTo = 0
            return (false, [hello()])
        } catch {
            return (false, startAfresh(because: error.description))
        }
    }

    /// Drops the local replica and greets the hub as a new one; the
    /// unacknowledged changes are recorded again once the board has arrived.
    private mutating func startAfresh(because reason: String) -> [Output] {
        carried += unacknowledged.map(\.change)
        unacknowledged = []
        replica = Self.emptyReplica(freshID())
        sentEver = 0
        sentUpTo = 0
        refusal = ScreenModel.refusalText(code: "resynced", message: "the board was reloaded from the hub (\(reason))")
        return [hello()]
    }

    // MARK: Sending

    private mutating func hello() -> Output {
        synced = false
        // Presence in place of whole states: the operations carry the rest.
        let hello = ReplicaHello(replica: replica.id, name: name, frontier: replica.checkpoint.frontier, sent: sentEver,
                                 presenceOnly: true)
        return .send(ClientMessage<Kind>.helloFrame(hello))
    }

    /// Own operations not yet sent on this connection, in frames of at most
    /// 256 (the hub ignores those it already has).
    private mutating func sendPending() -> [Output] {
        guard synced, connected else { return [] }
        let id = replica.id
        let fresh = unacknowledged.filter { $0.id.replica == id && $0.id.seq > sentUpTo }
        var out: [Output] = []
        var start = 0
        while start < fresh.count {
            let chunk = Array(fresh[start..<min(start + ClientLimits.maxOperationsPerFrame, fresh.count)])
            let last = chunk[chunk.count - 1].id.seq
            framesSent += 1
            frameReplica[framesSent] = id
            out.append(.send(ClientMessage<Kind>.operationsFrame(chunk, ref: "s\(last).\(framesSent)")))
            sentUpTo = last
            sentEver = max(sentEver, last)
            start += chunk.count
        }
        return out
    }

    /// `s<last seq>.<frame number>` back into its parts.
    static func parseRef(_ ref: String?) -> (lastSeq: UInt64, frame: UInt64)? {
        guard let ref, ref.hasPrefix("s") else { return nil }
        let parts = ref.dropFirst().split(separator: ".")
        guard parts.count == 2, let seq = UInt64(parts[0]), let frame = UInt64(parts[1]) else { return nil }
        return (seq, frame)
    }

    /// Shows a refusal that only the total order revealed: a concurrent
    /// pick took the slot (C4), a set was taken first (SC2). The change
    /// shown at once is taken back by the replay; the person is told.
    private mutating func note(_ report: MergeReport<Kind>) {
        noteRefused(report.changedOutcomes.map(\.0))
    }

    /// Tells the person of each of `ids` (own operations) now refused.
    private mutating func noteRefused(_ ids: [OperationID]) {
        for id in ids {
            if case let .refused(refused)? = replica.outcome(of: id), let operation = replica.log.last(where: { $0.id == id }) {
                refusal = ScreenModel.refusalText(code: refused.code,
                                                  message: "\(Kind.summary(of: operation.change)) was refused: \(refused.message)")
            }
        }
    }

    /// Shown when a frame from the hub cannot be read (the shell reconnects).
    mutating func unreadable(_ error: FrameDecodingError) {
        refusal = ScreenModel.refusalText(code: "unreadable_frame", message: error.description)
    }
}
