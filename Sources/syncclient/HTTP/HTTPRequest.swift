/// One HTTP/1.1 request to a hub as a command makes it: pure, so tests
/// compare what a command would send without sending it.
struct HTTPRequest: Equatable, Sendable {
    var method: String
    /// The path and query, escaped already.
    var path: String
    /// A JSON body, sent with its length; nil: none.
    var body: String?
    var accept = "application/json"

    init(method: String, path: String, body: String? = nil, accept: String = "application/json") {
        self.method = method
        self.path = path
        self.body = body
        self.accept = accept
    }

    /// The bytes to send to `host` (as a URL writes it: `[::1]` for IPv6)
    /// at `port`, with the token as `Authorization: Bearer` (checked by
    /// `HubAccess`: it cannot break the head). One request per connection.
    func bytes(host: String, port: Int, token: String?) -> [UInt8] {
        let hostField = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(hostField):\(port)\r\nUser-Agent: syncclient\r\nAccept: \(accept)\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
        head += "Connection: close\r\n\r\n"
        return Array((head + (body ?? "")).utf8)
    }
}
