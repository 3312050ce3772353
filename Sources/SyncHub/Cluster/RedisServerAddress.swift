import Foundation

/// One `--redis` server: `redis://[:PASSWORD@]HOST:PORT[/DB]`. The password
/// is never printed: `description` leaves it out.
struct RedisServerAddress: Equatable, Sendable, CustomStringConvertible {
    var host: String
    var port: Int
    var database: Int
    var password: String?

    /// Parses `text`; `passwordFile` (its first line) supplies the password
    /// when the URL has none.
    static func parse(_ text: String, passwordFile: String? = nil) throws(ClusterConfigError) -> RedisServerAddress {
        guard text.hasPrefix("redis://") else {
            throw ClusterConfigError("--redis \(Self.redacted(text)): must start with redis:// (redis://[:PASSWORD@]HOST:PORT[/DB]; TLS to Redis is not supported)")
        }
        var rest = Substring(text.dropFirst("redis://".count))
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            // redis://:PASSWORD@ or redis://default:PASSWORD@ (the user is not used with Redis 7's default user).
            if let colon = credentials.firstIndex(of: ":") {
                password = String(credentials[credentials.index(after: colon)...]).removingPercentEncoding
            } else {
                password = String(credentials).removingPercentEncoding
            }
            if password?.isEmpty == true { password = nil }
        }
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let db = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
            if !db.isEmpty {
                guard let number = Int(db), number >= 0, number < 1_000_000 else {
                    throw ClusterConfigError("--redis \(Self.redacted(text)): the database must be a number, as in redis://HOST:PORT/0")
                }
                database = number
            }
        }
        guard let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...]), (1...65535).contains(port) else {
            throw ClusterConfigError("--redis \(Self.redacted(text)): needs HOST:PORT, as in redis://127.0.0.1:6379")
        }
        var host = String(rest[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw ClusterConfigError("--redis \(Self.redacted(text)): the host is empty") }
        if password == nil, let passwordFile {
            guard let contents = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                throw ClusterConfigError("--redis-password-file \(passwordFile): cannot be read")
            }
            let line = contents.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
            guard !line.isEmpty else { throw ClusterConfigError("--redis-password-file \(passwordFile): is empty") }
            password = line
        }
        return RedisServerAddress(host: host, port: port, database: database, password: password)
    }

    var description: String { "redis://\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)" }

    /// A URL as typed, with any password replaced, for error messages.
    static func redacted(_ text: String) -> String {
        guard text.hasPrefix("redis://"), let at = text.lastIndex(of: "@") else { return text }
        return "redis://***@" + text[text.index(after: at)...]
    }
}

/// A cluster flag that cannot work, said before anything starts (exit 64).
struct ClusterConfigError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
