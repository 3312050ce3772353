import Foundation
import Logging

/// Cluster mode's store: every board's log in Redis, spread over the
/// `--redis` servers by a jump consistent hash of `KIND/NAME` (R1). The hub
/// core never sees it: the shell hands it proposals and folds, and it hands
/// back answers and entries (`SharedLogNews`). Reads for a joining
/// connection (`load`) run on the service thread over one connection per
/// server kept for that thread alone.
final class SharedLog {
    let shards: [SharedLogShard]
    /// One connection per server for reads on the service thread.
    private let readers: [RedisConnection]
    private var readerScripts: [ScriptHashes?]
    let settings: SharedLogConnectionSettings
    private let logger: Logger

    init(servers: [RedisServerAddress], settings: SharedLogConnectionSettings, logger: Logger) {
        self.settings = settings
        self.logger = logger
        shards = servers.map { SharedLogShard(address: $0, settings: settings, logger: logger) }
        readers = servers.map { RedisConnection(server: $0, timeoutMilliseconds: settings.timeoutMilliseconds) }
        readerScripts = Array(repeating: nil, count: servers.count)
    }

    /// The server holding `logName`'s board.
    func shardIndex(of logName: String) -> Int {
        Self.jumpHash(key: fnv1a(logName), buckets: shards.count)
    }

    func shard(of logName: String) -> SharedLogShard { shards[shardIndex(of: logName)] }

    /// Whether every server answers (healthz) / the board's server does (admission).
    var allUp: Bool { shards.allSatisfy(\.isUp) }
    func isUp(_ logName: String) -> Bool { shard(of: logName).isUp }

    /// R1/R3 at start: reaches every server, retrying until `deadline`, and
    /// checks that this hub's list of servers is the cluster's (the same
    /// servers in the same order). Throws `ClusterConfigError` for a list that
    /// disagrees, `RedisFailure` when a server stays out of reach.
    func connectAtStart(deadline: Date) throws {
        var ids: [String] = []
        while ids.count < readers.count {
            let index = ids.count
            do throws(RedisFailure) {
                try readers[index].connect(name: "synchub-\(settings.hubID)-reader")
                readerScripts[index] = try ScriptHashes.load(on: readers[index])
                let mine = String(UInt64.random(in: 1...UInt64.max), radix: 36)
                let replies = try readers[index].pipeline([["SET", "synchub:server-id", mine, "NX"], ["GET", "synchub:server-id"]])
                guard let id = replies[1].text else { throw RedisFailure(reason: .reply, message: "cannot read synchub:server-id") }
                ids.append(id)
            } catch {
                readers[index].close()
                if Date() >= deadline { throw error }
                logger.notice("waiting for redis", metadata: ["server": "\(readers[index].server)", "error": "\(error.message)"])
                Thread.sleep(forTimeInterval: 0.25)
            }
        }
        for shard in shards { shard.markUp() }
        let list = ids.joined(separator: ",")
        for (index, reader) in readers.enumerated() {
            let flags = try reader.pipeline([["SET", "synchub:flags", settings.agreedFlags, "NX"], ["GET", "synchub:flags"]])
            if let recorded = flags[1].text, recorded != settings.agreedFlags {
                throw ClusterConfigError(
                    "the cluster on \(reader.server) runs with \(recorded); this hub was given \(settings.agreedFlags): every hub "
                    + "applies each board's log the same way only with the same values (stop every hub to change them, then DEL synchub:flags)")
            }
            let replies = try reader.pipeline([["SET", "synchub:servers", list, "NX"], ["GET", "synchub:servers"]])
            guard let recorded = replies[1].text else { throw RedisFailure(reason: .reply, message: "cannot read synchub:servers") }
            guard recorded == list else {
                throw ClusterConfigError("""
                    --redis \(reader.server) (number \(index + 1)) belongs to a cluster whose servers were recorded as \(recorded.split(separator: ",").count) \
                    server(s) in another order or another set (this hub was given \(readers.count)): every hub must be given the same --redis \
                    list in the same order (server ids: recorded \(recorded), given \(list))
                    """)
            }
        }
    }

    /// Reads a board's log after `offset` on the service thread: the
    /// snapshot when `offset` is behind it, and the entries after.
    func load(_ logName: String, after offset: UInt64) throws(RedisFailure) -> SharedBoard {
        let index = shardIndex(of: logName)
        do {
            do {
                return try read(logName, after: offset, index: index)
            } catch where error.reason == .io || error.reason == .protocolError {
                // The connection was lost since its last use (Redis restarted):
                // once more on a fresh one before the client is refused.
                readers[index].close()
                return try read(logName, after: offset, index: index)
            }
        } catch {
            // New connections to this server's boards are refused at once
            // (503) until its follower reaches it again.
            shards[index].markDown(error)
            throw error
        }
    }

    private func read(_ logName: String, after offset: UInt64, index: Int) throws(RedisFailure) -> SharedBoard {
        let reader = readers[index]
        if !reader.isConnected || readerScripts[index] == nil {
            try reader.connect(name: "synchub-\(settings.hubID)-reader")
            readerScripts[index] = try ScriptHashes.load(on: reader)
        }
        guard let hashes = readerScripts[index] else { throw RedisFailure(reason: .script, message: "scripts not loaded") }
        let keys = SharedLogScripts.BoardKeys(logName: logName)
        var reply = try reader.command(["EVALSHA", hashes.load, "3", keys.meta, keys.log, keys.snapshot, String(offset)])
        if reply.errorText?.hasPrefix("NOSCRIPT") == true {
            reply = try reader.command(["EVAL", SharedLogScripts.load, "3", keys.meta, keys.log, keys.snapshot, String(offset)])
        }
        if let error = reply.errorText { throw RedisFailure(reason: .reply, message: error) }
        let parts = reply.elements
        guard parts.count == 5, let at = parts[1].integer, let epoch = parts[2].text else {
            throw RedisFailure(reason: .protocolError, message: "unexpected answer loading \(logName)")
        }
        let snapshot = parts[0].text
        let entries = SharedLogShard.entries(parts[4])
        // The script answers the snapshot only when the entries after `offset` are gone.
        let fromSnapshot = UInt64(at) > offset && (entries.first.map { $0.offset != offset + 1 } ?? true)
        if fromSnapshot, snapshot == nil {
            throw RedisFailure(reason: .reply, message: "board \(logName): the log says a snapshot at \(at) but none is stored")
        }
        return SharedBoard(snapshot: fromSnapshot ? snapshot : nil, snapshotOffset: fromSnapshot ? UInt64(at) : offset,
                           epoch: epoch, entries: entries)
    }

    /// A shop image's bytes (P4) under the board's hash tag, by SHA-256:
    /// `sh:{shop/NAME}:img:DIGEST`, a hash of `type` and `bytes`. Written on
    /// the service thread before the name is proposed (bounded by
    /// --redis-timeout), so every hub that sees the name can serve the bytes.
    func putImage(_ logName: String, digest: String, type: String, bytes: [UInt8]) throws(RedisFailure) {
        let key = "sh:{" + logName + "}:img:" + digest
        let reply = try onReader(logName) { reader throws(RedisFailure) in
            try reader.pipelineBytes([[Array("HSET".utf8), Array(key.utf8), Array("type".utf8), Array(type.utf8), Array("bytes".utf8), bytes]])[0]
        }
        if let error = reply.errorText { throw RedisFailure(reason: .reply, message: error) }
    }

    func image(_ logName: String, digest: String) throws(RedisFailure) -> (type: String, bytes: [UInt8])? {
        let key = "sh:{" + logName + "}:img:" + digest
        let reply = try onReader(logName) { reader throws(RedisFailure) in try reader.command(["HMGET", key, "type", "bytes"]) }
        if let error = reply.errorText { throw RedisFailure(reason: .reply, message: error) }
        let parts = reply.elements
        guard parts.count == 2, let type = parts[0].text, case let .bulk(bytes) = parts[1] else { return nil }
        return (type, bytes)
    }

    /// Runs `body` on the reader connection of `logName`'s server, once more on
    /// a fresh connection when the old one was lost (as `load` does).
    private func onReader(_ logName: String, _ body: (RedisConnection) throws(RedisFailure) -> RedisReply) throws(RedisFailure) -> RedisReply {
        let index = shardIndex(of: logName)
        let reader = readers[index]
        do {
            if !reader.isConnected { try reader.connect(name: "synchub-\(settings.hubID)-reader") }
            do {
                return try body(reader)
            } catch where error.reason == .io || error.reason == .protocolError {
                reader.close()
                try reader.connect(name: "synchub-\(settings.hubID)-reader")
                return try body(reader)
            }
        } catch {
            shards[index].markDown(error)
            throw error
        }
    }

    func start() { for shard in shards { shard.start() } }
    func stop() { for shard in shards { shard.stop() } }

    /// /metrics lines (R11): never a password (servers are shown without it).
    /// `counters`: the core's cluster counters.
    func metricsText(counters: HubCounters) -> String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String) { out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n" }
        for (name, help, value) in [
            ("synchub_redis_proposals_total", "changes this hub proposed to boards' logs", counters.proposals),
            ("synchub_redis_unavailable_total", "intents answered 'unavailable' (not confirmed by Redis in time, or refused by it)", counters.answeredUnavailable),
            ("synchub_redis_proposals_timed_out_total", "proposals past --redis-timeout without confirmation", counters.proposalsTimedOut),
            ("synchub_redis_reloads_total", "boards read again because this hub fell behind a fold of their log", counters.sharedGaps),
            ("synchub_redis_history_lost_total", "boards dropped because Redis lost their history (epoch changed)", counters.sharedHistoryLost),
            ("synchub_redis_entries_unreadable_total", "log entries no hub could read (skipped alike by every hub)", counters.sharedEntriesUnreadable),
        ] {
            family(name, "counter", help)
            out += "\(name) \(value)\n"
        }
        let all = shards.map { ($0.address.description, $0.currentStats) }
        family("synchub_redis_up", "gauge", "1 while the Redis server answers")
        for (server, stats) in all { out += "synchub_redis_up{server=\"\(server)\"} \(stats.up ? 1 : 0)\n" }
        family("synchub_redis_roundtrip_seconds", "histogram", "time of one pipelined batch of appends to Redis")
        for (server, stats) in all {
            for (bound, count) in zip(SharedLogStats.bounds, stats.buckets) {
                out += "synchub_redis_roundtrip_seconds_bucket{server=\"\(server)\",le=\"\(bound)\"} \(count)\n"
            }
            out += "synchub_redis_roundtrip_seconds_bucket{server=\"\(server)\",le=\"+Inf\"} \(stats.roundTrips)\n"
            out += "synchub_redis_roundtrip_seconds_sum{server=\"\(server)\"} \(stats.roundTripSeconds)\n"
            out += "synchub_redis_roundtrip_seconds_count{server=\"\(server)\"} \(stats.roundTrips)\n"
        }
        family("synchub_redis_errors_total", "counter", "Redis calls that failed, by reason (timeout, io, connect, oom, readonly, noscript, ...)")
        for (server, stats) in all {
            for (reason, count) in stats.errors.sorted(by: { $0.key < $1.key }) {
                out += "synchub_redis_errors_total{server=\"\(server)\",reason=\"\(reason)\"} \(count)\n"
            }
        }
        family("synchub_redis_reconnects_total", "counter", "connections to Redis made again after a failure")
        for (server, stats) in all { out += "synchub_redis_reconnects_total{server=\"\(server)\"} \(stats.reconnects)\n" }
        family("synchub_redis_behind_entries", "gauge", "entries of followed boards' logs not yet read by this hub (sampled each second)")
        for (server, stats) in all { out += "synchub_redis_behind_entries{server=\"\(server)\"} \(stats.behind)\n" }
        family("synchub_redis_folds_total", "counter", "snapshots this hub wrote into Redis (the log before them trimmed)")
        for (server, stats) in all { out += "synchub_redis_folds_total{server=\"\(server)\"} \(stats.folds)\n" }
        return out
    }

    /// Jump consistent hash (Lamping and Veach): a stable bucket for `key`
    /// among `buckets`, moving few keys when buckets are added.
    static func jumpHash(key: UInt64, buckets: Int) -> Int {
        var b: Int64 = -1
        var j: Int64 = 0
        var k = key
        while j < Int64(buckets) {
            b = j
            k = k &* 2_862_933_555_777_941_757 &+ 1
            j = Int64(Double(b + 1) * (Double(Int64(1) << 31) / Double((k >> 33) + 1)))
        }
        return Int(max(0, b))
    }
}

/// FNV-1a, 64 bits.
func fnv1a(_ text: String) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x0000_0100_0000_01b3
    }
    return hash
}
