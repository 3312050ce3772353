import Foundation

/// The reads of one Redis server (a board's log for a join or a catch-up,
/// a shop image's bytes), on one connection that only its `StoreWorker`'s
/// thread uses (`SharedLog.carry`). A connection lost since its last use
/// (Redis restarted) is made again once before a read is given up.
final class SharedLogReader {
    private let connection: RedisConnection
    private var scripts: ScriptHashes?
    private let settings: SharedLogConnectionSettings
    /// R13: the server's primary generation (`SharedLogShard`); another than
    /// this connection's means connecting to the new primary first.
    private let primaryGeneration: @Sendable () -> UInt64
    private var generation: UInt64 = 0

    init(server: RedisServerAddress, settings: SharedLogConnectionSettings, primaryGeneration: @escaping @Sendable () -> UInt64) {
        connection = RedisConnection(server: server, timeoutMilliseconds: settings.timeoutMilliseconds)
        self.settings = settings
        self.primaryGeneration = primaryGeneration
    }

    /// A board's log after `offset`: the snapshot when `offset` is behind
    /// it, and the entries after.
    /// `deadline` (monotonic nanoseconds): when nobody waits for the read
    /// any more (the join's own deadline).
    func load(_ logName: String, after offset: UInt64, deadline: UInt64 = .max) throws(RedisFailure) -> SharedBoard {
        // R15: while the server's fence (or the board's hold) runs, the read
        // waits it out: what it would show may yet be written back. It
        // lasts 3/4 of --redis-timeout at most; past the read's deadline (or
        // twice that), it is given up, without calling the server down.
        let ceiling = UInt64(2 * settings.fenceCeilingMilliseconds) * 1_000_000
        let until = min(deadline, DispatchTime.now().uptimeNanoseconds + ceiling)
        while true {
            switch try retrying({ () throws(RedisFailure) in try read(logName, after: offset) }) {
            case let .board(board): return board
            case let .fenced(milliseconds):
                let now = DispatchTime.now().uptimeNanoseconds
                guard now < until else {
                    throw RedisFailure(reason: .fenced, message: "board \(logName) stays fenced (a hub that was live has not checked it)")
                }
                Thread.sleep(forTimeInterval: Double(min(milliseconds, 1_000, (until - now) / 1_000_000 + 1)) / 1000)
            }
        }
    }

    private enum Read { case board(SharedBoard), fenced(UInt64) }

    /// A shop image's bytes (P4) under the board's hash tag, by SHA-256:
    /// `sh:{shop/NAME}:img:DIGEST`, a hash of `type` and `bytes`, written
    /// before the name is proposed, so every hub that sees the name can
    /// serve the bytes.
    func putImage(_ logName: String, digest: String, type: String, bytes: [UInt8]) throws(RedisFailure) {
        let key = "sh:{" + logName + "}:img:" + digest
        let reply = try retrying { () throws(RedisFailure) in
            try connection.pipelineBytes([[Array("HSET".utf8), Array(key.utf8), Array("type".utf8), Array(type.utf8),
                                           Array("bytes".utf8), bytes]])[0]
        }
        if let error = reply.errorText { throw RedisFailure(reason: .reply, message: error) }
    }

    func image(_ logName: String, digest: String) throws(RedisFailure) -> StoredImage? {
        let key = "sh:{" + logName + "}:img:" + digest
        let reply = try retrying { () throws(RedisFailure) in try connection.command(["HMGET", key, "type", "bytes"]) }
        if let error = reply.errorText { throw RedisFailure(reason: .reply, message: error) }
        let parts = reply.elements
        guard parts.count == 2, let type = parts[0].text, case let .bulk(bytes) = parts[1] else { return nil }
        return StoredImage(type: type, bytes: bytes)
    }

    /// Runs a script (sent whole: EVAL caches it) on this server.
    func run(_ script: String, keys: [String], arguments: [String]) throws(RedisFailure) {
        let reply = try retrying { () throws(RedisFailure) in
            try connection.command(["EVAL", script, String(keys.count)] + keys + arguments)
        }
        if let error = reply.errorText { throw RedisFailure(reason: .reply, message: error) }
    }

    /// O6: keeps a revocation in the cluster's first server (a later one of
    /// the same `sub` replaces an earlier one, never the other way round).
    func keep(revocation field: String, value: Int64) throws(RedisFailure) {
        let script = """
            local v = redis.call('HGET', KEYS[1], ARGV[1])
            if not v or tonumber(v) < tonumber(ARGV[2]) then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
            return 1
            """
        let reply = try retrying { () throws(RedisFailure) in
            try connection.command(["EVAL", script, "1", SharedLogShard.revokedKey, field, String(value)])
        }
        if let error = reply.errorText { throw RedisFailure(reason: .reply, message: error) }
    }

    /// O3: how many boards this server holds (`synchub:boards`).
    func boardCount() throws(RedisFailure) -> Int {
        let reply = try retrying { () throws(RedisFailure) in try connection.command(["SCARD", "synchub:boards"]) }
        if let error = reply.errorText { throw RedisFailure(reason: .reply, message: error) }
        return Int(reply.integer ?? 0)
    }

    /// O9: keeps an action of the console in the cluster's audit (the last
    /// 10,000 or so: trimmed approximately, as Redis does it cheaply).
    func keep(audit json: String) throws(RedisFailure) {
        let reply = try retrying { () throws(RedisFailure) in
            try connection.command(["XADD", ClusterConsole.auditKey, "MAXLEN", "~", String(AuditTrail.kept), "*", "e", json])
        }
        if let error = reply.errorText { throw RedisFailure(reason: .reply, message: error) }
    }

    /// Runs `body` connected; once more on a fresh connection when the old
    /// one was lost.
    private func retrying<T>(_ body: () throws(RedisFailure) -> T) throws(RedisFailure) -> T {
        try ready()
        do {
            return try body()
        } catch where error.reason == .io || error.reason == .protocolError {
            connection.close()
            scripts = nil
            try ready()
            do {
                return try body()
            } catch {
                connection.close()
                scripts = nil
                throw error
            }
        }
    }

    private func ready() throws(RedisFailure) {
        let now = primaryGeneration()
        if connection.isConnected, scripts != nil, generation == now { return }
        connection.close()
        generation = now
        do throws(RedisFailure) {
            try connection.connect(name: "synchub-\(settings.hubID)-reader")
            // R18: a server that may evict a board's log is not read as if it kept it.
            if let found = try RedisSettings.read(on: connection), found.refusal(server: connection.server) != nil {
                throw RedisFailure(reason: .reply, message: "maxmemory-policy \(found.maxmemoryPolicy) refused")
            }
            scripts = try ScriptHashes.load(on: connection)
        } catch {
            connection.close()
            scripts = nil
            throw error
        }
    }

    private func read(_ logName: String, after offset: UInt64) throws(RedisFailure) -> Read {
        guard let hashes = scripts else { throw RedisFailure(reason: .script, message: "scripts not loaded") }
        let keys = SharedLogScripts.BoardKeys(logName: logName)
        let arguments = ["5", keys.meta, keys.log, keys.snapshot, SharedLogShard.runKey, SharedLogShard.fenceKey,
                         String(offset), connection.runID, settings.fenceSpans]
        var reply = try connection.command(["EVALSHA", hashes.load] + arguments)
        if reply.errorText?.hasPrefix("NOSCRIPT") == true {
            reply = try connection.command(["EVAL", SharedLogScripts.load] + arguments)
        }
        if let error = reply.errorText { throw RedisFailure(reason: .reply, message: error) }
        let parts = reply.elements
        if parts.count == 2, parts[0].text == "fence" { return .fenced(UInt64(max(1, parts[1].integer ?? 1))) }
        guard parts.count == 6, let at = parts[1].text.flatMap({ UInt64($0) }), let epoch = parts[2].text else {
            throw RedisFailure(reason: .protocolError, message: "unexpected answer loading \(logName)")
        }
        let snapshot: String?
        do {
            snapshot = if case let .bulk(bytes) = parts[0] { try PackedSnapshot.unpack(bytes) } else { nil }
        } catch {
            throw RedisFailure(reason: .unreadable, message: "board \(logName): \(error.description)")
        }
        let entries = SharedLogShard.entries(parts[4])
        // The script answers the snapshot only when the entries after `offset` are gone.
        let fromSnapshot = at > offset && (entries.first.map { $0.offset != offset + 1 } ?? true)
        if fromSnapshot, snapshot == nil {
            throw RedisFailure(reason: .reply, message: "board \(logName): the log says a snapshot at \(at) but none is stored")
        }
        return .board(SharedBoard(snapshot: fromSnapshot ? snapshot : nil, snapshotOffset: fromSnapshot ? at : offset,
                                  epoch: epoch, entries: entries,
                                  snapshotLink: fromSnapshot ? (parts[5].text.flatMap { UInt64($0) } ?? 0) : 0))
    }
}
