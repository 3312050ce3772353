import Foundation
import Synchronization
import Logging
import WebSocketLoop

/// Cluster mode's store: every board's log in Redis, spread over the
/// `--redis` servers by a jump consistent hash of `KIND/NAME` (R1). The hub
/// core never sees it: the shell hands it the core's store actions
/// (proposals, folds, follows, loads) and it hands back answers and entries
/// (`StoreAnswer`). Each server has its own threads (`SharedLogShard`'s
/// appender and follower, and a reader for loads and images), so a server
/// that stops answering holds up only the boards it keeps (R16).
final class SharedLog: BoardLog, @unchecked Sendable {
    // Sendable: every stored property is a `let` of a Sendable type;
    // `delivery` is a Mutex; each reader's connection is confined to its
    // worker's thread (`StoreWorker` checks a ThreadOwner).
    let shards: [SharedLogShard]
    /// One reader per server: loads and images, on a connection of its own.
    private let readers: [StoreWorker<SharedLogReader>]
    let settings: SharedLogConnectionSettings
    private let logger: Logger
    private let delivery = Mutex<@Sendable ([StoreAnswer]) -> Void>({ _ in })
    /// O6: what the cluster's first server held at start (`synchub:revoked`).
    private let startRevocations = Mutex<[Revocations.Entry]>([])
    var revocationsAtStart: [Revocations.Entry] { startRevocations.withLock { $0 } }
    /// O9: the cluster's audit at start (`synchub:audit`, oldest first).
    private let startAudit = Mutex<[AuditEntry]>([])
    var auditAtStart: [AuditEntry] { startAudit.withLock { $0 } }
    /// O2-O4 through the first server.
    let console: ClusterConsole
    var clusterConsole: ClusterConsole? { console }
    private var deliver: @Sendable ([StoreAnswer]) -> Void { delivery.withLock { $0 } }

    init(servers: [RedisServerAddress], settings: SharedLogConnectionSettings, logger: Logger) {
        self.settings = settings
        self.logger = logger
        let console = ClusterConsole(hubID: settings.hubID)
        self.console = console
        shards = servers.enumerated().map {
            SharedLogShard(address: $1, settings: settings, logger: logger, keepsRevocations: $0 == 0, console: $0 == 0 ? console : nil)
        }
        // Reads wait for at most a few seconds' joins: past that a stalled
        // server's reads are answered `failed` at once.
        readers = shards.map { shard in
            StoreWorker(name: "redis-reader", resource: SharedLogReader(server: shard.address, settings: settings,
                                                                        primaryGeneration: { shard.currentPrimaryGeneration }),
                        maxQueued: 4096)
        }
    }

    /// The server holding `logName`'s board.
    func shardIndex(of logName: String) -> Int {
        Self.jumpHash(key: fnv1a(logName), buckets: shards.count)
    }

    func shard(of logName: String) -> SharedLogShard { shards[shardIndex(of: logName)] }

    /// Whether every server answers (healthz) / the board's server does (admission).
    var allUp: Bool { shards.allSatisfy(\.isUp) }
    func isUp(_ board: BoardAddress) -> Bool { shard(of: board.logName).isUp }
    var problem: String? { allUp ? nil : "redis unreachable" }

    /// R1/R3 at start: reaches every server, retrying until `deadline`, and
    /// checks that this hub's list of servers is the cluster's (the same
    /// servers in the same order). Throws `ClusterConfigError` for a list that
    /// disagrees, `RedisFailure` when a server stays out of reach.
    func connectAtStart(deadline: Date) throws {
        // Connections of the starting thread, closed before the hub runs
        // (each reader makes its own on its thread).
        let readers = shards.map { RedisConnection(server: $0.address, timeoutMilliseconds: settings.timeoutMilliseconds) }
        defer { for reader in readers { reader.close() } }
        var ids: [String] = []
        while ids.count < readers.count {
            let index = ids.count
            do throws(RedisFailure) {
                try readers[index].connect(name: "synchub-\(settings.hubID)-reader")
                _ = try ScriptHashes.load(on: readers[index])
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
        // R18 first, on every server, before anything is written.
        for (shard, reader) in zip(shards, readers) {
            if let settings = try RedisSettings.read(on: reader) {
                if let refusal = settings.refusal(server: reader.server) { throw ClusterConfigError(refusal) }
                if let warning = settings.warning(server: reader.server) { logger.warning("\(warning)") }
                shard.noteSettings(settings)
            } else {
                logger.warning("cannot read redis's settings (CONFIG GET refused): maxmemory-policy and appendonly are not checked",
                               metadata: ["server": "\(reader.server)"])
            }
        }
        // R17: one live hub per --hub-id. A start that fails after taking
        // some leases frees them: a retry is not refused by its own leases.
        var taken: [RedisConnection] = []
        do {
            for reader in readers {
                let lease = try reader.command(HubLease.takeCommand(hubID: settings.hubID, token: HubLease.token))
                if let left = lease.integer, left < 0 {
                    throw ClusterConfigError(
                        "--hub-id \(settings.hubID) is held by a live hub (its lease on \(reader.server) has \(-left) ms left): "
                        + "every live hub needs its own --hub-id; the id of a hub that died is free again within "
                        + "\(HubLease.milliseconds / 1000) s")
                } else if lease.integer != 1 {
                    throw RedisFailure(reason: .reply, message: "cannot take the lease on --hub-id: \(lease.errorText ?? "no answer")")
                }
                taken.append(reader)
            }
            try checkServers(ids: ids, on: readers)
        } catch {
            for reader in taken { _ = try? reader.command(HubLease.freeCommand(hubID: settings.hubID, token: HubLease.token)) }
            throw error
        }
        // O6: the first server keeps the cluster's revocations.
        let revoked = try readers[0].command(["HGETALL", SharedLogShard.revokedKey])
        startRevocations.withLock { $0 = SharedLogShard.revocations(in: revoked) }
        // O9: and its audit; the console reads on from the newest entry.
        let audit = try readers[0].command(["XREVRANGE", ClusterConsole.auditKey, "+", "-", "COUNT", String(AuditTrail.kept)])
        let entries = ClusterConsole.auditEntries(in: audit)
        startAudit.withLock { $0 = entries.map(\.entry).reversed() }
        console.readAudit(after: entries.first?.id ?? "0-0")
        for shard in shards { shard.markUp() }
    }

    /// R1/R19: this hub's servers, in its order, are the cluster's. The
    /// first hub records the servers' ids (`synchub:servers`) and flags on
    /// each. A server that came back empty (a new id, nothing recorded on
    /// it) is taken into the recorded list in its old place, logged and
    /// counted; any other difference exits 64.
    private func checkServers(ids: [String], on readers: [RedisConnection]) throws {
        let list = ids.joined(separator: ",")
        // Read everything first; nothing is written until every check passed.
        var recorded: [String?] = []
        for reader in readers {
            let flags = try reader.command(["GET", "synchub:flags"])
            if let recordedFlags = flags.text, recordedFlags != settings.agreedFlags {
                throw ClusterConfigError(
                    "the cluster on \(reader.server) runs with \(recordedFlags); this hub was given \(settings.agreedFlags): every hub "
                    + "applies each board's log the same way only with the same values (stop every hub to change them, then DEL "
                    + "synchub:flags)")
            }
            recorded.append(try reader.command(["GET", "synchub:servers"]).text)
        }
        let held = Set(recorded.compactMap { $0 })
        guard held.count <= 1 else {
            throw ClusterConfigError("the --redis servers disagree on the cluster's servers (\(held.sorted().joined(separator: " / "))): "
                + "they belong to different clusters")
        }
        var agreed = list
        if let known = held.first, known != list {
            let old = known.split(separator: ",").map(String.init)
            let emptied = ids.indices.filter { old.count == ids.count && old[$0] != ids[$0] }
            guard old.count == ids.count, !emptied.isEmpty, emptied.allSatisfy({ recorded[$0] == nil }) else {
                let index = ids.indices.first { recorded[$0] != nil && (old.count != ids.count || old[$0] != ids[$0]) } ?? 0
                throw ClusterConfigError("""
                    --redis \(readers[index].server) (number \(index + 1)) belongs to a cluster whose servers were recorded as \
                    \(old.count) server(s) in another order or another set (this hub was given \(readers.count)): every hub must be \
                    given the same --redis list in the same order (server ids: recorded \(known), given \(list))
                    """)
            }
            for index in emptied {
                // R19: its id is new and it recorded nothing: it came back empty.
                logger.error(
                    "redis came back empty (a new server id): taken into the cluster's list in its old place; its boards' logs are gone",
                    metadata: ["server": "\(readers[index].server)", "number": "\(index + 1)", "was": "\(old[index])",
                               "now": "\(ids[index])"])
                shards[index].noteReplaced()
            }
            agreed = list
        }
        for reader in readers {
            // (`synchub:run` is not written here: a server that came back
            // empty looks like a new one, and its fence must run, R15.)
            _ = try reader.pipeline([["SET", "synchub:flags", settings.agreedFlags, "NX"], ["SET", "synchub:servers", agreed]])
        }
    }

    /// Frees this hub's lease on its id on every server (a clean stop: the
    /// id is free again at once). Best effort: a server out of reach lets
    /// the lease run out instead.
    private func freeLease() {
        for shard in shards {
            let connection = RedisConnection(server: shard.address, timeoutMilliseconds: min(settings.timeoutMilliseconds, 1_000))
            defer { connection.close() }
            do throws(RedisFailure) {
                try connection.connect(name: "synchub-\(settings.hubID)-stopping")
                _ = try connection.command(HubLease.freeCommand(hubID: settings.hubID, token: HubLease.token))
            } catch {
                logger.notice("could not free the lease on --hub-id; it runs out by itself",
                              metadata: ["server": "\(shard.address)", "error": "\(error.message)"])
            }
        }
    }

    func start(deliver: @escaping @Sendable ([StoreAnswer]) -> Void) {
        delivery.withLock { $0 = deliver }
        for shard in shards {
            shard.deliver = { [shard] news in
                // R15: a write-back answered is a repair no longer in flight (the fence waits for them).
                for case .restored in news { shard.repairEnded() }
                deliver(news)
            }
            shard.start()
        }
        for reader in readers { reader.start() }
    }

    func stop() -> StoreError? {
        for shard in shards { shard.stop() }
        for reader in readers { reader.stop() }
        freeLease()
        return nil
    }

    func carry(_ request: StoreRequest) {
        switch request {
        case let .load(ticket, board, after, deadline):
            read(board, skipAfter: deadline) { reader throws(RedisFailure) in
                .loaded(ticket: ticket, board: board.key,
                        .success(StoredBoard(shared: try reader.load(board.logName, after: after, deadline: deadline))))
            } failed: {
                .loaded(ticket: ticket, board: board.key, .failure($0))
            }
        case let .propose(proposals):
            var jobs: [[SharedLogShard.Job]] = Array(repeating: [], count: shards.count)
            for proposal in proposals { jobs[shardIndex(of: proposal.logName)].append(.propose(proposal)) }
            for (shard, batch) in zip(shards, jobs) { shard.submit(batch) }
        case let .fold(fold):
            shard(of: fold.logName).submitFolds([fold])
        case let .restore(restore):
            let shard = shard(of: restore.logName)
            shard.repairStarted()
            shard.submitRestore(restore)
        case let .serverChecked(server):
            for shard in shards where "\(shard.address)" == server { shard.restartChecked() }
        case let .keepKeys(logName, answers):
            let keys = SharedLogScripts.BoardKeys(logName: logName)
            let logger = self.logger
            let board = BoardAddress(key: logName)
            let shard = shard(of: logName)
            shard.repairStarted()
            read(board) { reader throws(RedisFailure) in
                // Ended here when kept; `failed` ends it otherwise (never both).
                try reader.run(SharedLogScripts.keepKeys, keys: [keys.keys, keys.keyOrder],
                               arguments: answers.flatMap { [$0.key, $0.answer, String($0.offset)] })
                shard.repairEnded()
                return .keysKept
            } failed: { failure in
                shard.repairEnded()
                logger.error("the keys this hub remembers could not be added to a board written back",
                             metadata: ["board": "\(logName)", "error": "\(failure.message)"])
                return .keysKept
            }
        case let .revoke(entry):
            let (field, value) = Revocations.field(of: entry)
            let logger = self.logger
            let queued = readers[0].submit { reader in
                do throws(RedisFailure) {
                    try reader.keep(revocation: field, value: value)
                } catch {
                    logger.critical(
                        "a revocation could not be kept in redis: it holds on this hub until it stops, and the others do not learn it",
                        metadata: ["revocation": "\(entry)", "error": "\(error.message)"])
                }
            }
            if !queued { logger.critical("a revocation could not be queued for redis", metadata: ["revocation": "\(entry)"]) }
        case let .audit(entry):
            let logger = self.logger
            let queued = readers[0].submit { reader in
                do throws(RedisFailure) {
                    try reader.keep(audit: entry.json)
                } catch {
                    logger.error("an action of the console could not be kept in redis's audit",
                                 metadata: ["action": "\(entry.json)", "error": "\(error.message)"])
                }
            }
            if !queued {
                logger.error("an action of the console could not be queued for redis's audit", metadata: ["action": "\(entry.json)"])
            }
        case let .follow(board, logName, after):
            shard(of: logName).follow(logName, board: board, after: after)
        case let .unfollow(logName):
            shard(of: logName).unfollow(logName)
        case let .presence(boards):
            var perShard: [[String: (clients: Int, names: [String])]] = Array(repeating: [:], count: shards.count)
            for (logName, here) in boards { perShard[shardIndex(of: logName)][logName] = (here.clients, here.names) }
            for (shard, snapshot) in zip(shards, perShard) {
                shard.setPresence(snapshot)
                // Folds a submit could not hand over (the encoder was taking its queue) go now.
                shard.foldEncoder.submit([])
            }
        case let .putImage(board, digest, type, bytes, exchange):
            read(board) { reader throws(RedisFailure) in
                try reader.putImage(board.logName, digest: digest, type: type, bytes: bytes)
                return .imageStored(exchange: exchange, nil)
            } failed: {
                .imageStored(exchange: exchange, $0)
            }
        case let .readImage(board, digest, exchange):
            read(board) { reader throws(RedisFailure) in
                .imageRead(exchange: exchange, digest: digest, .success(try reader.image(board.logName, digest: digest)))
            } failed: {
                .imageRead(exchange: exchange, digest: digest, .failure($0))
            }
        case let .countBoards(exchange):
            countBoards(exchange: exchange)
        case .commit, .lookUpKey:
            // A cluster's boards are ordered by their logs: the core never asks these.
            logger.error("the shared log was asked for the embedded store's work", metadata: ["request": "\(request)"])
            assertionFailure("embedded-store work asked of the shared log")
        }
    }

    /// Runs `work` on the reader of `board`'s server. A failure marks the
    /// server down (new connections to its boards are refused, R8, until
    /// its follower reaches it again) and answers `failed`.
    /// `skipAfter`: nobody waits for the answer after then (monotonic
    /// nanoseconds): a stalled server's backlog does not hold up the reads
    /// that came after it.
    private func read(_ board: BoardAddress, skipAfter deadline: UInt64 = .max,
                      _ work: @escaping @Sendable (SharedLogReader) throws(RedisFailure) -> StoreAnswer,
                      failed: @escaping @Sendable (StoreFailure) -> StoreAnswer) {
        let index = shardIndex(of: board.logName)
        let (deliver, shard, logger) = (self.deliver, shards[index], self.logger)
        let queued = readers[index].submit { reader in
            guard WebSocketServer.nowNanos() < deadline else { return }
            do throws(RedisFailure) {
                deliver([try work(reader)])
            } catch {
                // A read that waited out a fence, or found a value it cannot
                // read, reached a server that answers: it is not down.
                if error.reason != .fenced, error.reason != .unreadable { shard.markDown(error) }
                logger.error("cannot read from redis",
                             metadata: ["board": "\(board)", "server": "\(shard.address)", "error": "\(error.message)"])
                deliver([failed(StoreFailure(message: error.message))])
            }
        }
        if !queued { deliver([failed(StoreFailure(message: "too many reads wait for \(shard.address)"))]) }
    }

    /// O3: the boards every server holds (`synchub:boards`, added to when a
    /// board's log starts), summed once each reader answered.
    private func countBoards(exchange: UInt64) {
        let (deliver, logger) = (self.deliver, self.logger)
        let tally = Mutex<(left: Int, total: Int, failure: StoreFailure?)>((readers.count, 0, nil))
        let finish: @Sendable (Int?, StoreFailure?) -> Void = { count, failure in
            let done: (total: Int, failure: StoreFailure?)? = tally.withLock { state in
                state.left -= 1
                state.total += count ?? 0
                if state.failure == nil { state.failure = failure }
                return state.left == 0 ? (state.total, state.failure) : nil
            }
            guard let done else { return }
            deliver([.boardsCounted(exchange: exchange, done.failure.map { .failure($0) } ?? .success(done.total))])
        }
        for (index, reader) in readers.enumerated() {
            let queued = reader.submit { reader in
                do throws(RedisFailure) {
                    finish(try reader.boardCount(), nil)
                } catch {
                    logger.warning("cannot count the boards in redis",
                                   metadata: ["server": "\(self.shards[index].address)", "error": "\(error.message)"])
                    finish(nil, StoreFailure(message: error.message))
                }
            }
            if !queued { finish(nil, StoreFailure(message: "too many reads wait for \(shards[index].address)")) }
        }
    }

    /// The console's view of Redis (O2): up when every server answers, the
    /// slowest server's append round trip p99, the entries not yet read.
    var adminRedisJSON: String? {
        let all = shards.map(\.currentStats)
        let p99 = all.compactMap(\.roundTripP99).max()
        return "{\"up\":\(all.allSatisfy(\.up)),\"roundtrip_p99_seconds\":" + (p99.map { String($0) } ?? "null")
            + ",\"behind\":\(all.reduce(0) { $0 + $1.behind })}"
    }

    /// /metrics lines (R11): never a password (servers are shown without it).
    /// `counters`: the core's cluster counters.
    func metricsText(counters: HubCounters) -> String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String) { out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n" }
        for (name, help, value) in [
            ("synchub_redis_proposals_total", "changes this hub proposed to boards' logs", counters.proposals),
            ("synchub_redis_unavailable_total", "intents answered 'unavailable' (not confirmed by Redis in time, or refused by it)",
             counters.answeredUnavailable),
            ("synchub_redis_proposals_timed_out_total", "proposals past --redis-timeout without confirmation", counters.proposalsTimedOut),
            ("synchub_redis_reloads_total", "boards read again because this hub fell behind a fold of their log", counters.sharedGaps),
            ("synchub_redis_history_lost_total", "times a board's log in Redis was found to have lost entries this hub applied (R15)",
             counters.sharedHistoryLost),
            ("synchub_redis_history_written_back_total", "boards this hub wrote back into a log that went back (R15)",
             counters.sharedWrittenBack),
            ("synchub_redis_history_not_written_back_total",
             "boards whose lost entries this hub could not write back (another history was written on the log): dropped and read "
                 + "again (R15)",
             counters.sharedNotWrittenBack),
            ("synchub_redis_entries_unreadable_total", "log entries no hub could read (skipped alike by every hub)",
             counters.sharedEntriesUnreadable),
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
        family("synchub_redis_errors_total", "counter",
               "Redis calls that failed, by reason (timeout, io, connect, oom, readonly, noscript, ...)")
        for (server, stats) in all {
            for (reason, count) in stats.errors.sorted(by: { $0.key < $1.key }) {
                out += "synchub_redis_errors_total{server=\"\(server)\",reason=\"\(reason)\"} \(count)\n"
            }
        }
        family("synchub_redis_reconnects_total", "counter", "connections to Redis made again after a failure")
        for (server, stats) in all { out += "synchub_redis_reconnects_total{server=\"\(server)\"} \(stats.reconnects)\n" }
        family("synchub_redis_behind_entries", "gauge", "entries of followed boards' logs not yet read by this hub (sampled each second)")
        for (server, stats) in all { out += "synchub_redis_behind_entries{server=\"\(server)\"} \(stats.behind)\n" }
        family("synchub_redis_persistent", "gauge",
               "1 while the Redis server keeps an append-only file (appendonly yes), 0 when not, -1 when its settings cannot be " +
               "read (R18)")
        for (server, stats) in all {
            out += "synchub_redis_persistent{server=\"\(server)\"} \(stats.persistent.map { $0 ? 1 : 0 } ?? -1)\n"
        }
        family("synchub_redis_servers_replaced_total", "counter",
               "servers that came back empty (a new server id) and were taken into the cluster's list in their old place at this " +
               "hub's start (R19)")
        for (server, stats) in all { out += "synchub_redis_servers_replaced_total{server=\"\(server)\"} \(stats.replaced)\n" }
        family("synchub_redis_failovers_total", "counter", "promotions of another primary by the Sentinels this hub followed (R13)")
        for (server, stats) in all { out += "synchub_redis_failovers_total{server=\"\(server)\"} \(stats.failovers)\n" }
        family("synchub_redis_folds_total", "counter", "snapshots this hub wrote into Redis (the log before them trimmed)")
        for (server, stats) in all { out += "synchub_redis_folds_total{server=\"\(server)\"} \(stats.folds)\n" }
        family("synchub_redis_folds_declined_total", "counter",
               "snapshots this hub offered that Redis declined (another hub's lease, or a newer snapshot stored)")
        for (server, stats) in all { out += "synchub_redis_folds_declined_total{server=\"\(server)\"} \(stats.foldsDeclined)\n" }
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
