import CHiredis
import Foundation

/// One synchronous connection to one Redis server (hiredis): the only Swift
/// file that calls hiredis. Used by exactly one thread (each appender,
/// follower or reader owns its own), so it needs no lock; the context is
/// freed with the object. Every call is bounded by the timeout: a server
/// that stops answering fails the call, and the connection is then closed
/// (a reply that might still come would answer the wrong command).
final class RedisConnection {
    let server: RedisServerAddress
    private var context: UnsafeMutablePointer<redisContext>?
    private let timeoutMilliseconds: Int

    init(server: RedisServerAddress, timeoutMilliseconds: Int) {
        self.server = server
        self.timeoutMilliseconds = max(1, timeoutMilliseconds)
    }

    deinit { close() }

    var isConnected: Bool { context != nil }

    func close() {
        if let context {
            // Reset, not FIN: a request that timed out and is still in the
            // socket's send queue must not reach Redis minutes later, when
            // the link comes back (an `unavailable` change taking effect
            // long after its answer). Redis has answered whatever mattered.
            var reset = linger(l_onoff: 1, l_linger: 0)
            _ = setsockopt(context.pointee.fd, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
            redisFree(context)
        }
        context = nil
        connectedTo = nil
        runID = ""
    }

    /// Where this connection went: the server itself, or the primary its
    /// Sentinels named when it connected.
    private(set) var connectedTo: RedisServerAddress.Endpoint?
    /// The run id of the server this connection reached ('' when unknown).
    private(set) var runID = ""
    /// Connections made so far (a new one: the server may have restarted or changed).
    private(set) var opened: UInt64 = 0
    /// Why `runID` is unknown (INFO refused), for the connection's owner to log.
    private(set) var runIDProblem: String?

    static func runID(in info: String) -> String {
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix("run_id:") {
            return String(line.dropFirst("run_id:".count)).trimmingCharacters(in: .whitespaces)
        }
        return ""
    }

    /// Connects (if not connected), authenticates and selects the database.
    /// Behind Sentinels (R13): asks them which server is the primary, and
    /// refuses one that says it is a replica (never write to a replica).
    func connect(name: String) throws(RedisFailure) {
        if context != nil { return }
        let target = server.isSentinel ? try primary() : RedisServerAddress.Endpoint(host: server.host, port: server.port)
        try open(target, name: name)
        if server.isSentinel {
            let role = try command(["ROLE"])
            guard role.elements.first?.text == "master" else {
                close()
                throw RedisFailure(reason: .connect,
                                   message: "\(target), named primary of \(server.masterName) by its Sentinels, is a " +
                                            "\(role.elements.first?.text ?? "server of no role") (failover under way?)")
            }
        }
        connectedTo = target
    }

    /// The primary the Sentinels name now (the first that answers).
    func primary() throws(RedisFailure) -> RedisServerAddress.Endpoint {
        var problems: [String] = []
        for sentinel in server.sentinels {
            let asked = RedisConnection(server: RedisServerAddress(host: sentinel.host, port: sentinel.port, database: 0, password: nil),
                                        timeoutMilliseconds: min(timeoutMilliseconds, 1_000))
            defer { asked.close() }
            do throws(RedisFailure) {
                try asked.open(sentinel, name: nil)
                let reply = try asked.command(["SENTINEL", "get-master-addr-by-name", server.masterName])
                if let host = reply.elements.first?.text, reply.elements.count == 2,
                   let port = reply.elements[1].text.flatMap({ Int($0) }) {
                    return RedisServerAddress.Endpoint(host: host, port: port)
                }
                problems.append("\(sentinel): \(reply.errorText ?? "does not know \(server.masterName)")")
            } catch {
                problems.append("\(sentinel): \(error.message)")
            }
        }
        throw RedisFailure(reason: .connect,
                           message: "no Sentinel names a primary for \(server.masterName) (\(problems.joined(separator: "; ")))")
    }

    /// Opens the socket to `target`: AUTH, SELECT and the client's name
    /// (none for a Sentinel) with the server's settings.
    private func open(_ target: RedisServerAddress.Endpoint, name: String?) throws(RedisFailure) {
        guard let made = shredis_connect(target.host, Int32(target.port), timeoutMilliseconds) else {
            throw RedisFailure(reason: .connect, message: "out of memory connecting to \(server)")
        }
        if made.pointee.err != 0 {
            let message = Self.errorText(made)
            redisFree(made)
            throw RedisFailure(reason: .connect, message: "cannot reach \(server): \(message)")
        }
        guard shredis_set_timeout(made, timeoutMilliseconds) == REDIS_OK else {
            redisFree(made)
            throw RedisFailure(reason: .connect, message: "cannot set a timeout on the connection to \(server)")
        }
        context = made
        guard let name else { return }
        var setup: [[String]] = []
        if let password = server.password { setup.append(["AUTH", password]) }
        if server.database != 0 { setup.append(["SELECT", String(server.database)]) }
        setup.append(["CLIENT", "SETNAME", name])
        // R15: the server's run id (a restart or a promotion changes it). A
        // server that refuses INFO has none: no fence after its restarts.
        setup.append(["INFO", "server"])
        let replies = try pipeline(setup)
        runID = Self.runID(in: replies.last?.text ?? "")
        runIDProblem = runID.isEmpty ? (replies.last?.errorText ?? "INFO server has no run_id") : nil
        opened &+= 1
        for (index, reply) in replies.dropLast().enumerated() {
            if let error = reply.errorText {
                close()
                // Never the password: only which setup step failed.
                let step = setup[index][0] == "AUTH" ? "AUTH (check the password)" : setup[index][0]
                throw RedisFailure(reason: .reply, message: "\(server) refused \(step): \(error)")
            }
        }
    }

    /// Sends one command and returns its reply (an error reply is a reply,
    /// not a throw: the caller decides).
    func command(_ arguments: [String]) throws(RedisFailure) -> RedisReply {
        try pipeline([arguments])[0]
    }

    /// Sends every command, then reads every reply (one round trip).
    func pipeline(_ commands: [[String]]) throws(RedisFailure) -> [RedisReply] {
        try pipelineBytes(commands.map { $0.map { Array($0.utf8) } })
    }

    func pipelineBytes(_ commands: [[[UInt8]]]) throws(RedisFailure) -> [RedisReply] {
        guard let context else { throw RedisFailure(reason: .io, message: "not connected to \(server)") }
        for arguments in commands {
            let status: Int32 = Self.withArgv(arguments) { argv, lengths in
                shredis_append(context, Int32(arguments.count), argv, lengths)
            }
            guard status == REDIS_OK else { throw failure(context) }
        }
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for _ in commands {
            guard let reply = shredis_next_reply(context) else { throw failure(context) }
            replies.append(Self.copy(reply))
            freeReplyObject(reply)
        }
        return replies
    }

    /// The failure of `context`, after which the connection is closed.
    private func failure(_ context: UnsafeMutablePointer<redisContext>) -> RedisFailure {
        let code = context.pointee.err
        let message = Self.errorText(context)
        close()
        if code == REDIS_ERR_IO, message.contains("temporarily unavailable") || message.contains("timed out") {
            return RedisFailure(reason: .timeout, message: "\(server) did not answer within \(timeoutMilliseconds) ms")
        }
        if code == REDIS_ERR_PROTOCOL { return RedisFailure(reason: .protocolError, message: "\(server): \(message)") }
        return RedisFailure(reason: .io, message: "\(server): \(message)")
    }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    private static func withArgv<R>(_ arguments: [[UInt8]],
                                    _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> R) -> R {
        // One buffer for all arguments, pointers into it.
        let total = arguments.reduce(0) { $0 + $1.count + 1 }
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(1, total))
        defer { buffer.deallocate() }
        var pointers: [UnsafePointer<CChar>?] = []
        var lengths: [Int] = []
        pointers.reserveCapacity(arguments.count)
        var offset = 0
        for argument in arguments {
            argument.withUnsafeBufferPointer { source in
                source.withMemoryRebound(to: CChar.self) { chars in
                    if let base = chars.baseAddress { (buffer + offset).update(from: base, count: chars.count) }
                }
            }
            (buffer + offset + argument.count).pointee = 0
            pointers.append(UnsafePointer(buffer + offset))
            lengths.append(argument.count)
            offset += argument.count + 1
        }
        // Every command has at least one argument, so neither buffer is empty.
        precondition(!arguments.isEmpty, "a Redis command has a name")
        return pointers.withUnsafeMutableBufferPointer { argv in
            lengths.withUnsafeBufferPointer { sizes in
                guard let argvBase = argv.baseAddress, let sizesBase = sizes.baseAddress else { preconditionFailure("empty command") }
                return body(argvBase, sizesBase)
            }
        }
    }

    private static func copy(_ reply: UnsafeMutablePointer<redisReply>) -> RedisReply {
        let r = reply.pointee
        switch r.type {
        case REDIS_REPLY_STATUS: return .status(text(r))
        case REDIS_REPLY_ERROR: return .error(text(r))
        case REDIS_REPLY_INTEGER: return .integer(r.integer)
        case REDIS_REPLY_STRING: return .bulk(bytes(r))
        case REDIS_REPLY_ARRAY:
            var items: [RedisReply] = []
            items.reserveCapacity(r.elements)
            for index in 0..<r.elements {
                if let element = shredis_element(reply, index) { items.append(copy(element)) } else { items.append(.null) }
            }
            return .array(items)
        default: return .null
        }
    }

    private static func bytes(_ r: redisReply) -> [UInt8] {
        guard let pointer = r.str, r.len > 0 else { return [] }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: r.len) { Array(UnsafeBufferPointer(start: $0, count: r.len)) }
    }

    private static func text(_ r: redisReply) -> String { String(decoding: bytes(r), as: UTF8.self) }
}
