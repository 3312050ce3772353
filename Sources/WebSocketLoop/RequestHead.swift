/// What the hub sees of an HTTP request (a WebSocket upgrade or a GET)
/// before it answers: enough to decide admission, nothing of the body.
///
/// A secret put in a URL (a token) must never travel further than the one
/// file that reads lws headers: the value of a parameter whose name holds
/// `token` is never read, only its name passed on. `description` leaves the bearer
/// token out, so logging a request never leaks it.
public struct RequestHead: Sendable, CustomStringConvertible {
    /// The path without its query string, e.g. `/boards/kitchen`.
    public var path: String
    /// The names of the query parameters (url-decoded), in order.
    public var queryNames: [String]
    /// Their values, except any parameter whose name holds `token` (never read).
    public var queryValues: [String: String] = [:]
    /// The `Origin` header, when the client (a browser) sent one.
    public var origin: String?
    /// The `Host` header as the client sent it, e.g. `hub.example:8443`.
    public var host: String?
    /// The token of an `Authorization: Bearer TOKEN` header, if any.
    public var bearerToken: String?
    /// The peer's IP address as text (`127.0.0.1`, `::1`, ...), or "" if unknown.
    public var peerAddress: String
    /// Whether the request came over TLS (`wss://`, `https://`).
    public var isTLS: Bool
    /// `GET`, `POST`, `PUT` (plain HTTP; an upgrade is a GET).
    public var method: String = "GET"
    /// `If-None-Match`, as sent.
    public var ifNoneMatch: String?
    /// `Content-Length` of a request with a body.
    public var contentLength: Int?
    /// `Content-Type`, as sent.
    public var contentType: String?
    /// `X-Forwarded-For`, as a proxy in front sent it (the first address is the client's).
    public var forwardedFor: String?

    public init(path: String, queryNames: [String] = [], origin: String? = nil, host: String? = nil,
                bearerToken: String? = nil, peerAddress: String = "", isTLS: Bool = false) {
        self.path = path
        self.queryNames = queryNames
        self.origin = origin
        self.host = host
        self.bearerToken = bearerToken
        self.peerAddress = peerAddress
        self.isTLS = isTLS
    }

    public var description: String {
        "\(path) from \(peerAddress.isEmpty ? "?" : peerAddress)"
            + (origin.map { " origin \($0)" } ?? "")
            + (bearerToken == nil ? "" : " (bearer token present)")
    }

    /// The token of an `Authorization` header value, when its scheme is Bearer.
    public static func bearerToken(fromAuthorization value: String) -> String? {
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingSpaces
        return token.isEmpty ? nil : token
    }
}

/// The hub's yes to an upgrade: where the connection goes, and whatever the
/// hub decided about it at the door.
public struct Admission: Sendable {
    /// The endpoint the connection reaches.
    public var route: Route
    /// Opaque to the server: the hub's own record of this connection's
    /// admission (for example a verified token's grant), handed back as
    /// `ServerConnection.admission.grant` when the connection opens.
    public var grant: (any Sendable)?
    /// The upgrade's `Origin` header (a browser sends one), for the hub's books.
    public var origin: String?
    /// What the client said it is (`?client=NAME` on the upgrade), for the hub's books.
    public var client: String?

    public init(route: Route, grant: (any Sendable)? = nil, origin: String? = nil, client: String? = nil) {
        self.route = route
        self.grant = grant
        self.origin = origin
        self.client = client
    }
}

private extension Substring {
    /// Without leading and trailing spaces and tabs, trimmed on UTF-8 bytes
    /// (trimming by Character, reversed twice, took a third of the hub's time
    /// accepting connections with tokens: BENCHMARKS.md, issue 13).
    var trimmingSpaces: String {
        let bytes = utf8
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start = bytes.index(after: start) }
        while end > start {
            let last = bytes.index(before: end)
            guard bytes[last] == 0x20 || bytes[last] == 0x09 else { break }
            end = last
        }
        return String(self[start..<end])
    }
}
