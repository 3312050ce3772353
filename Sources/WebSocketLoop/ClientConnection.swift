/// One outgoing WebSocket connection, confined to the client loop's thread.
public final class ClientConnection: @unchecked Sendable {
    // Sendable: only touched on the client loop's service thread.
    public let id: UInt64
    public let url: WebSocketURL
    public internal(set) var isOpen = false
    public internal(set) var isFinished = false
    /// The HTTP status of an upgrade the hub refused (e.g. 401, 403); nil
    /// when the upgrade succeeded or no answer came.
    public internal(set) var refusedStatus: Int?
    /// The hub's words with a refused upgrade: the `error_description` of its
    /// `WWW-Authenticate` header (RFC 6750), or "" when it gave none.
    public internal(set) var refusedReason = ""
    /// The close code and reason the hub sent (e.g. 4401 "token expired").
    public internal(set) var closeCode: Int?
    public internal(set) var closeReason = ""
    /// What the TLS check found wrong with the hub's certificate, e.g.
    /// "self-signed certificate"; nil when it found nothing.
    public internal(set) var certificateProblem: String?

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

    init(id: UInt64, url: WebSocketURL) {
        self.id = id
        self.url = url
    }

    public var queuedFrames: Int { outgoing.count - outgoingHead }

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
