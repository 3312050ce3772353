/// A refusal of an HTTP upgrade or request, sent before any WebSocket exists.
public struct HTTPRefusal: Error, Sendable {
    public var status: UInt32
    public var message: String
    public init(status: UInt32, message: String) {
        self.status = status
        self.message = message
    }
}

/// A complete HTTP response for plain GET requests.
public struct HTTPResponse: Sendable {
    public var status: UInt32
    public var contentType: String
    public var body: [UInt8]
    public var cacheable: Bool
    public init(status: UInt32, contentType: String, body: [UInt8], cacheable: Bool = false) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.cacheable = cacheable
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
    /// Answers a plain GET (pages, /healthz, /metrics).
    func respond(to request: RequestHead) -> HTTPResponse
    /// About four times a second, and once more when a stop begins.
    func tick(nowNanos: UInt64)
    /// After every turn of the service loop: the place to fold the turn's
    /// changes into one write batch and one state frame per board.
    func serviceLoopDidRun()
}

/// What the server counted, for /metrics.
public struct ServerStats: Sendable {
    public var framesWritten: UInt64 = 0
    /// Board states replaced before they were written (conflation).
    public var statesReplaced: UInt64 = 0
    /// Connections closed for not reading (1008).
    public var stalledClosed: UInt64 = 0
    /// Messages too large (1009).
    public var oversizedClosed: UInt64 = 0
    public init() {}
}
