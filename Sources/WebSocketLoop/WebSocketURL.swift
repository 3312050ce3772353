/// A `ws://HOST:PORT/PATH` address (TLS is for a reverse proxy in front).
public struct WebSocketURL: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var path: String

    public init(host: String, port: Int, path: String) {
        self.host = host
        self.port = port
        self.path = path
    }

    /// Parses `ws://HOST[:PORT]/PATH`; nil with anything else.
    public init?(_ text: String) {
        guard text.hasPrefix("ws://") else { return nil }
        let rest = text.dropFirst(5)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        path = slash == rest.endIndex ? "/" : String(rest[slash...])
        if let colon = authority.lastIndex(of: ":") {
            guard let port = Int(authority[authority.index(after: colon)...]), (1...65535).contains(port) else { return nil }
            host = String(authority[..<colon])
            self.port = port
        } else {
            host = String(authority)
            port = 80
        }
        if host.isEmpty { return nil }
    }

    public var description: String { "ws://\(host):\(port)\(path)" }
}
