/// A `ws://HOST:PORT/PATH` or `wss://HOST:PORT/PATH` address.
public struct WebSocketURL: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var path: String
    /// `wss://`: the connection runs over TLS and the hub's certificate is checked.
    public var isSecure: Bool

    public init(host: String, port: Int, path: String, isSecure: Bool = false) {
        self.host = host
        self.port = port
        self.path = path
        self.isSecure = isSecure
    }

    /// Parses `ws://HOST[:PORT]/PATH` (port 80 by default) or
    /// `wss://HOST[:PORT]/PATH` (port 443 by default); nil with anything else.
    public init?(_ text: String) {
        let rest: Substring
        if text.hasPrefix("ws://") {
            rest = text.dropFirst(5)
            isSecure = false
        } else if text.hasPrefix("wss://") {
            rest = text.dropFirst(6)
            isSecure = true
        } else {
            return nil
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        path = slash == rest.endIndex ? "/" : String(rest[slash...])
        if let colon = authority.lastIndex(of: ":") {
            guard let port = Int(authority[authority.index(after: colon)...]), (1...65535).contains(port) else { return nil }
            host = String(authority[..<colon])
            self.port = port
        } else {
            host = String(authority)
            port = isSecure ? 443 : 80
        }
        if host.isEmpty || host.contains("@") { return nil }
    }

    public var scheme: String { isSecure ? "wss" : "ws" }

    /// The same hub, another path (a bench's boards).
    public func with(path: String) -> WebSocketURL {
        WebSocketURL(host: host, port: port, path: path, isSecure: isSecure)
    }

    public var description: String { "\(scheme)://\(host):\(port)\(path)" }
}
