import Foundation

/// One `--redis` server: `redis://[:PASSWORD@]HOST:PORT[/DB]`, or a primary
/// that Sentinels name (R13):
/// `redis+sentinel://[:PASSWORD@]HOST:PORT,HOST:PORT,.../MASTER[/DB]` (the
/// password is the primary's; Sentinels are asked without one). The
/// password is never printed: `description` leaves it out.
struct RedisServerAddress: Equatable, Sendable, CustomStringConvertible {
    var host: String
    var port: Int
    var database: Int
    var password: String?
    /// The Sentinels to ask which server is the primary, and the name they
    /// know it by; empty for a plain `redis://` server.
    var sentinels: [Endpoint] = []
    var masterName = ""

    struct Endpoint: Equatable, Sendable, CustomStringConvertible {
        var host: String
        var port: Int
        var description: String { "\(host.contains(":") ? "[\(host)]" : host):\(port)" }
    }

    var isSentinel: Bool { !sentinels.isEmpty }

    /// Parses `text`; `passwordFile` (its first line) supplies the password
    /// when the URL has none.
    static func parse(_ text: String, passwordFile: String? = nil) throws(ClusterConfigError) -> RedisServerAddress {
        if text.hasPrefix("redis+sentinel://") { return try parseSentinel(text, passwordFile: passwordFile) }
        guard text.hasPrefix("redis://") else {
            throw ClusterConfigError("--redis \(Self.redacted(text)): must start with redis:// or redis+sentinel:// "
                + "(redis://[:PASSWORD@]HOST:PORT[/DB], redis+sentinel://HOST:PORT,HOST:PORT/MASTER[/DB]; TLS to Redis is not supported)")
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

    /// `redis+sentinel://H:P,H:P/MASTER[/DB]`: the primary's password as for
    /// `redis://`; at least one Sentinel and a master name.
    private static func parseSentinel(_ text: String, passwordFile: String?) throws(ClusterConfigError) -> RedisServerAddress {
        var rest = Substring(text.dropFirst("redis+sentinel://".count))
        var credentials = ""
        if let at = rest.lastIndex(of: "@") {
            credentials = String(rest[..<at]) + "@"
            rest = rest[rest.index(after: at)...]
        }
        let usage = "as in redis+sentinel://10.0.0.1:26379,10.0.0.2:26379/mymaster"
        guard let slash = rest.firstIndex(of: "/") else {
            throw ClusterConfigError("--redis \(Self.redacted(text)): needs the master's name after the Sentinels, \(usage)")
        }
        let list = rest[..<slash]
        let path = rest[rest.index(after: slash)...].split(separator: "/", omittingEmptySubsequences: false)
        guard let name = path.first, !name.isEmpty, path.count <= 2 else {
            throw ClusterConfigError("--redis \(Self.redacted(text)): needs the master's name after the Sentinels, \(usage)")
        }
        var sentinels: [Endpoint] = []
        for item in list.split(separator: ",") {
            // Each Sentinel is read as a plain server's HOST:PORT.
            let one = try parse("redis://" + item, passwordFile: nil)
            sentinels.append(Endpoint(host: one.host, port: one.port))
        }
        guard !sentinels.isEmpty else { throw ClusterConfigError("--redis \(Self.redacted(text)): names no Sentinel, \(usage)") }
        // The password and database read as a plain URL's, on the first Sentinel's place.
        var address = try parse("redis://" + credentials + list.split(separator: ",")[0] + "/" + (path.count == 2 ? path[1] : ""),
                                passwordFile: passwordFile)
        address.sentinels = sentinels
        address.masterName = String(name)
        return address
    }

    var description: String {
        guard isSentinel else { return "redis://\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)" }
        return "redis+sentinel://\(sentinels.map(\.description).joined(separator: ","))/\(masterName)/\(database)"
    }

    /// A URL as typed, with any password replaced, for error messages.
    static func redacted(_ text: String) -> String {
        for scheme in ["redis://", "redis+sentinel://"] where text.hasPrefix(scheme) {
            guard let at = text.lastIndex(of: "@") else { return text }
            return scheme + "***@" + text[text.index(after: at)...]
        }
        return text
    }
}

/// A cluster flag that cannot work, said before anything starts (exit 64).
struct ClusterConfigError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
