/// A refusal of an HTTP upgrade or request, sent before any WebSocket exists.
public struct HTTPRefusal: Error, Sendable {
    public var status: UInt32
    public var message: String
    public init(status: UInt32, message: String) {
        self.status = status
        self.message = message
    }
}

/// A complete answer to a plain HTTP request.
public struct HTTPResponse: Sendable {
    public var status: UInt32
    public var contentType: String
    public var body: [UInt8]
    /// False: `Cache-Control: no-store`. True: the `cacheControl` given, or none.
    public var cacheable: Bool
    /// `Cache-Control` when cacheable (a stored image: `public, max-age=...`).
    public var cacheControl: String?
    /// `ETag`, with its quotes.
    public var etag: String?
    /// `WWW-Authenticate` (a 401's challenge).
    public var challenge: String?
    /// `Content-Security-Policy` (what an uploaded image may do if opened as a page: nothing).
    public var contentSecurityPolicy: String?
    public init(status: UInt32, contentType: String, body: [UInt8], cacheable: Bool = false, cacheControl: String? = nil,
                etag: String? = nil, challenge: String? = nil, contentSecurityPolicy: String? = nil) {
        self.contentSecurityPolicy = contentSecurityPolicy
        self.status = status
        self.contentType = contentType
        self.body = body
        self.cacheable = cacheable
        self.cacheControl = cacheControl
        self.etag = etag
        self.challenge = challenge
    }

    /// A short text answer (errors, `/healthz`).
    public static func text(_ status: UInt32, _ message: String) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/plain; charset=utf-8", body: Array((message + "\n").utf8))
    }
}

/// The application side of the server. Every call comes on the service thread.
public protocol ServerDelegate: AnyObject {
    /// Decides, before the upgrade, whether a WebSocket request is let in and
    /// which endpoint it reaches. A refusal is answered with its HTTP status
    /// and message and the socket is closed; nothing is upgraded.
    /// Called exactly once per upgrade attempt (counting attempts is safe).
    func admit(upgrade request: RequestHead) -> Result<Admission, HTTPRefusal>
    func opened(_ connection: ServerConnection)
    func received(_ connection: ServerConnection, message: UnsafeRawBufferPointer, isText: Bool)
    func closed(_ connection: ServerConnection)
    /// Answers a plain HTTP request (pages, /healthz, /metrics, a kind's
    /// images): at once, or nil to answer later with `WebSocketServer.answer`
    /// naming `exchange` (when the answer waits for the store). `body`: a
    /// PUT's or POST's whole body (at most `maxRequestBodyBytes`), else empty.
    func respond(to request: RequestHead, body: [UInt8], exchange: UInt64) -> HTTPResponse?
    /// The largest request body taken; a longer one is answered 413.
    var maxRequestBodyBytes: Int { get }
    /// Decides from a PUT's or POST's head, before its body is read, whether
    /// the body is wanted: nil to read it, else the answer (404, 401, 403,
    /// ...), sent at once, the connection closed after it. Who may not send
    /// a body never holds one of the server's body slots.
    func admitBody(of request: RequestHead) -> HTTPResponse?
    /// About four times a second, and once more when a stop begins.
    func tick(nowNanos: UInt64)
    /// After every turn of the service loop: the place to fold the turn's
    /// changes into one write batch and one state frame per board.
    func serviceLoopDidRun()
}

/// What the server counted, for /metrics.
public struct ServerStats: Sendable {
    public var framesWritten: UInt64 = 0
    /// Writes to sockets (`lws_write` calls) that carried those frames:
    /// frames waiting together leave in one.
    public var writes: UInt64 = 0
    /// Board states replaced before they were written (conflation).
    public var statesReplaced: UInt64 = 0
    /// Connections closed for not reading (1008).
    public var stalledClosed: UInt64 = 0
    /// Messages too large (1009).
    public var oversizedClosed: UInt64 = 0
    public init() {}
}
