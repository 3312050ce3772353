/// Limits and timers of the server's libwebsockets context.
public struct ServerOptions: Sendable {
    public var host: String = "127.0.0.1"
    public var port: Int = 8080
    /// SO_REUSEPORT: several hubs on one machine listen on the same port and
    /// the kernel spreads connections over them (cluster mode).
    public var reusePort = false
    /// Largest message accepted on a board connection; larger closes with 1009.
    public var maxMessageBytes = 16_384
    /// Largest message on the echo endpoint (Autobahn sends up to 16 MiB).
    public var echoMaxMessageBytes = 16 << 20
    /// Idle seconds before the hub pings a client, and before it hangs up.
    public var pingAfterSeconds: UInt16 = 20
    public var hangupAfterSeconds: UInt16 = 45
    /// Seconds lws waits on a half-done HTTP step (headers, handshake).
    public var handshakeTimeoutSeconds: UInt32 = 10
    /// File descriptors lws provisions for its service thread.
    public var fdLimit: UInt32 = 200_000
    /// Queued replies (acks, errors) per client before its reading is paused.
    public var maxQueuedReplies = 256
    /// Seconds a client may leave frames unread before it is disconnected.
    public var stallSeconds: UInt64 = 15
    /// How the service thread waits for sockets.
    public var eventLoop: EventLoopKind = .libev
    /// Writes a frame at once when nothing of the connection is buffered in
    /// lws, instead of asking the event loop to watch it for writability
    /// (with libev, two `epoll_ctl` per write: the paced fan-out's largest
    /// cost after `send` itself). A connection whose receive callback is
    /// running, or that is closing, waits for its writable callback; a
    /// reply queued at the end of a turn or in posted work waits for the
    /// state that follows it, or for that work to end (`holdingWrites`).
    public var directWrites = true
    /// With files, the server speaks only TLS (`wss://`, `https://`) on its port.
    public var tls: TLSFiles?
    /// Bytes of request headers lws keeps per request (a bearer token must fit).
    public var maxHeaderBytes: UInt16 = 8192
    public init() {}
}

/// How the service thread waits for sockets.
public enum EventLoopKind: String, Sendable, CaseIterable {
    /// lws's own loop: poll(2) over every socket on every turn.
    case poll
    /// A libev loop (epoll) that lws joins: cost per turn follows the sockets
    /// with events, not all of them.
    case libev
}
