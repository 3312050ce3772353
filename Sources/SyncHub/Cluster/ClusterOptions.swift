import ArgumentParser
import Foundation
import Logging

/// `synchub --redis ...`: cluster mode's flags (docs/CLUSTER.md, docs/OPERATIONS.md).
struct ClusterOptions: ParsableArguments {
    @Option(name: .customLong("redis"), help: ArgumentHelp(
        "Join a cluster: redis://[:PASSWORD@]HOST:PORT[/DB]. Repeat for several servers (boards are spread over them by a stable hash; " +
        "every hub must list the same servers in the same order). The embedded store is not used.",
        valueName: "url"))
    var redis: [String] = []
    @Option(help: ArgumentHelp("A file whose first line is the Redis password (for URLs without one).", valueName: "file"))
    var redisPasswordFile: String?
    @Option(help: "Seconds one Redis call, and one intent waiting for Redis, may take; then the intent is answered 'unavailable' (R8).")
    var redisTimeout: Double = 2
    @Option(help: "Redis replicas that must hold a change before it is acknowledged (WAIT); 0: the primary alone.")
    var redisWait = 0
    @Option(help: "Seconds to keep trying to reach every Redis at start before giving up (exit 69).")
    var redisConnectTimeout: Double = 30
    @Flag(help: "Share the port with other hubs on this machine (SO_REUSEPORT); the kernel spreads connections over them.")
    var reusePort = false
    @Option(help: "This hub's name in the cluster (logs, Redis client names, presence); default: random.")
    var hubId: String?
    @Option(help: ArgumentHelp(
        "Entries after which a board's log in Redis is folded into a snapshot; half as many (16 at least) stay behind it (R9). " +
        "Default: 128, or --kept-operations when smaller (the window travels in the snapshot).", valueName: "entries"))
    var foldEvery: Int?

    var isCluster: Bool { !redis.isEmpty }

    /// R9: a fold comes every 128 entries (fewer with a smaller
    /// --kept-operations), and half as many stay in the stream behind it. The
    /// window of operations (--kept-operations) travels in the snapshot,
    /// packed, so the stream only holds what came since the last fold or
    /// two: a busy board costs Redis tens of KiB, not a window's worth of
    /// entries twice (issue 33; docs/CLUSTER.md, "What a board costs Redis").
    func foldSpan(keptOperations: Int) -> Int { foldEvery ?? min(keptOperations, 128) }
    var timeoutNanos: UInt64 { UInt64(max(0.05, redisTimeout) * 1e9) }

    func check(inMemory: Bool) throws {
        guard isCluster else {
            if redisPasswordFile != nil || redisWait != 0 || hubId != nil || foldEvery != nil {
                throw ValidationError("--redis-password-file, --redis-wait, --hub-id and --fold-every need --redis")
            }
            return
        }
        if inMemory { throw ValidationError("--in-memory and --redis exclude each other: with --redis the boards live in Redis") }
        guard redisTimeout >= 0.2, redisTimeout <= 600 else { throw ValidationError("--redis-timeout must be 0.2...600 seconds") }
        if let foldEvery, !(16...10_000_000).contains(foldEvery) { throw ValidationError("--fold-every must be 16...10000000 entries") }
        guard redisWait >= 0 else { throw ValidationError("--redis-wait must be 0 or more") }
        guard redisConnectTimeout >= 0 else { throw ValidationError("--redis-connect-timeout must be 0 or more") }
        if let hubId, hubId.isEmpty || hubId.count > 64
            || hubId.contains(where: { !($0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-")) }) {
            throw ValidationError("--hub-id must be 1-64 characters of A-Z a-z 0-9 . _ -")
        }
        do {
            _ = try servers()
        } catch {
            throw ValidationError(error.description)
        }
    }

    func servers() throws(ClusterConfigError) -> [RedisServerAddress] {
        var out: [RedisServerAddress] = []
        for url in redis { out.append(try RedisServerAddress.parse(url, passwordFile: redisPasswordFile)) }
        if Set(out.map(\.description)).count != out.count {
            throw ClusterConfigError("--redis lists one server and database twice")
        }
        return out
    }

    /// Reaches every server (R3: before the hub listens) and checks the list
    /// (R1). Nil without --redis. Exits 64 for a list the cluster does not
    /// share, 69 when Redis stays out of reach.
    func connect(logger: Logger, keptOperations: Int, maxReplicasPerBoard: Int) throws -> SharedLog? {
        guard isCluster else { return nil }
        let addresses: [RedisServerAddress]
        do {
            addresses = try servers()
        } catch {
            throw ValidationError(error.description)
        }
        let id = hubId ?? String(UInt64.random(in: 1...UInt64.max), radix: 36)
        var settings = SharedLogConnectionSettings(hubID: id, timeoutMilliseconds: Int(redisTimeout * 1000), waitReplicas: redisWait)
        // A fold comes every foldSpan entries; half as many (16 at least) stay behind it.
        settings.keptBehindSnapshot = max(16, foldSpan(keptOperations: keptOperations) / 2)
        // The log's format too: hubs that link entries (R15, format 2) or
        // pack snapshots (format 3) and hubs that do not cannot share a log,
        // so a cluster is upgraded by stopping every hub.
        // --fold-every too: hubs that trim a log by different amounts would
        // leave a hub behind where it expects to read on.
        settings.agreedFlags = "--kept-operations \(keptOperations) --max-replicas-per-board \(maxReplicasPerBoard) " +
            "--fold-every \(foldSpan(keptOperations: keptOperations)) (log format 3)"
        let log = SharedLog(servers: addresses, settings: settings, logger: logger)
        do {
            try log.connectAtStart(deadline: Date().addingTimeInterval(redisConnectTimeout))
        } catch let error as ClusterConfigError {
            FileHandle.standardError.write(Data("synchub: \(error.description)\n".utf8))
            throw ExitCode(64)
        } catch {
            FileHandle.standardError.write(Data("synchub: cannot reach redis within \(redisConnectTimeout) s: \(error)\n".utf8))
            throw ExitCode(69)
        }
        return log
    }
}
