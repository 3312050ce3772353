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
    /// Decides, before the upgrade, which endpoint a path reaches.
    func route(path: String) -> Result<Route, HTTPRefusal>
    func opened(_ connection: ServerConnection)
    func received(_ connection: ServerConnection, message: UnsafeRawBufferPointer, isText: Bool)
    func closed(_ connection: ServerConnection)
    func respond(toGET path: String) -> HTTPResponse
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
