/// One outgoing WebSocket connection, confined to the client loop's thread.
public final class ClientConnection: @unchecked Sendable {
    // Sendable: confined to the client loop's thread, checked by its client's `owner` (debug builds); the `let`s are immutable.
    public let id: UInt64
    public let url: WebSocketURL
    public internal(set) var isOpen: Bool {
        get { owner.check(); return told.isOpen }
        set { owner.check(); told.isOpen = newValue }
    }
    public internal(set) var isFinished: Bool {
        get { owner.check(); return told.isFinished }
        set { owner.check(); told.isFinished = newValue }
    }
    /// The HTTP status of an upgrade the hub refused (e.g. 401, 403); nil
    /// when the upgrade succeeded or no answer came.
    public internal(set) var refusedStatus: Int? {
        get { owner.check(); return told.refusedStatus }
        set { owner.check(); told.refusedStatus = newValue }
    }
    /// The hub's words with a refused upgrade: the `error_description` of its
    /// `WWW-Authenticate` header (RFC 6750), or "" when it gave none.
    public internal(set) var refusedReason: String {
        get { owner.check(); return told.refusedReason }
        set { owner.check(); told.refusedReason = newValue }
    }
    /// The close code and reason the hub sent (e.g. 4401 "token expired").
    public internal(set) var closeCode: Int? {
        get { owner.check(); return told.closeCode }
        set { owner.check(); told.closeCode = newValue }
    }
    public internal(set) var closeReason: String {
        get { owner.check(); return told.closeReason }
        set { owner.check(); told.closeReason = newValue }
    }
    /// What the TLS check found wrong with the hub's certificate, e.g.
    /// "self-signed certificate"; nil when it found nothing.
    public internal(set) var certificateProblem: String? {
        get { owner.check(); return told.certificateProblem }
        set { owner.check(); told.certificateProblem = newValue }
    }

    /// What the connection tells its delegate (the public properties above).
    private struct Told {
        var isOpen = false
        var isFinished = false
        var refusedStatus: Int?
        var refusedReason = ""
        var closeCode: Int?
        var closeReason = ""
        var certificateProblem: String?
    }
    private var told = Told()
    /// The client's: held by the loop's thread while `run` runs.
    let owner: ThreadOwner

    var wsi: OpaquePointer?
    /// `Authorization` header value of the upgrade (`Bearer TOKEN`), C string kept alive with the connection.
    var authorization: [CChar]?
    /// Client frames are masked in place by lws_write, so each is its own copy.
    var outgoing: [OutgoingFrame] = []
    var outgoingHead = 0
    var closeRequested = false
    var receiveBuffer: [UInt8] = []
    /// Bulk reader (`ClientReader.bulk`): the handshake until the hub's
    /// answer upgrades, when the answer is due, the answer's bytes so far,
    /// the frame reader, and the close handshake: a close frame queued (no
    /// data frame follows it), written, and the hub's close received.
    var isBulk = false
    var upgrade: ClientUpgrade?
    var answerDueNanos: UInt64 = 0
    var answer: [UInt8] = []
    var frames: HubFrameReader?
    var closeQueued = false
    var closeSent = false
    var closeReceived = false

    init(id: UInt64, url: WebSocketURL, owner: ThreadOwner) {
        self.id = id
        self.url = url
        self.owner = owner
    }

    public var queuedFrames: Int {
        owner.check()
        return outgoing.count - outgoingHead
    }

    /// Frames not yet started are dropped (each `lws_write` takes a frame whole).
    func dropQueuedFrames() {
        outgoing.removeAll(keepingCapacity: true)
        outgoingHead = 0
    }

    func takeNextFrame() -> OutgoingFrame? {
        guard outgoingHead < outgoing.count else { return nil }
        let frame = outgoing[outgoingHead]
        outgoingHead += 1
        if outgoingHead == outgoing.count {
            outgoing.removeAll(keepingCapacity: true)
            outgoingHead = 0
        }
        return frame
    }
}
