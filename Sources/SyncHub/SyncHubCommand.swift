import ArgumentParser
import Foundation
import Logging
import WebSocketLoop

/// `synchub`: hosts many boards of every kind over WebSocket (docs/PROTOCOL.md;
/// its flags: docs/OPERATIONS.md).
@main
struct SyncHubCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "synchub",
        abstract: "Hosts shared boards of every kind over WebSocket: ws://HOST:PORT/KIND/NAME, KIND one of "
                  + HostedKinds.all.map { $0.pathSegment }.joined(separator: ", ") + ".",
        discussion: """
            Boards are kept in an embedded SQLite store under --data (default ./data) and survive \
            restarts; an ack is sent only once its change is on disk. --in-memory keeps nothing. \
            Also serves GET /healthz, GET /metrics (Prometheus) and the browser client at / and /b/NAME. \
            Every limit below is documented in docs/OPERATIONS.md.
            """,
        subcommands: [TokenCommand.self])

    @Option(help: "TCP port to listen on (0 picks a free one).") var port: Int = 8080
    @Option(help: "Address to listen on (0.0.0.0 for all).") var host: String = "127.0.0.1"
    @Option(help: "Directory of the embedded store.") var data: String = "./data"
    @Flag(help: "Keep boards in memory only; nothing is written to disk.") var inMemory = false
    @Option(help: """
        full: fsync every commit (an ack survives power loss); normal: an ack survives a crash of the hub (kill -9) but not of the \
        machine, with no fsync wait.
        """)
    var sync: String = "full"
    @Flag(help: "Serve ws://HOST:PORT/echo, which echoes every message (protocol conformance tests).") var echo = false
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel: String = "info"

    @Option(help: "Largest message accepted on a board connection, in bytes (larger closes with 1009).") var maxMessageBytes = 16_384
    @Option(help: "Messages a second one connection may send (sustained).") var rate: Double = 1000
    @Option(help: "Messages one connection may send in a burst.") var burst: Double = 2000
    @Option(help: "Refused frames (errors) a second one connection may cause before it is closed with 1008.")
    var badFramesPerSecond: Double = 10
    @Option(help: "Refused frames one connection may cause in a burst.") var badFrameBurst: Double = 50
    @Option(help: "Seconds lws waits for a request's headers or a handshake step.") var handshakeTimeoutSeconds: UInt32 = 10
    @Option(help: "Idle seconds before the hub pings a client.") var pingSeconds: UInt16 = 20
    @Option(help: "Idle seconds before the hub hangs up on a client that answers nothing.") var idleTimeoutSeconds: UInt16 = 45
    @Option(help: "Seconds a client may leave frames unread before it is closed with 1008.") var stallSeconds: UInt64 = 15
    @Option(help: "Replies (acks, errors) queued per client before the hub stops reading from it.") var maxQueuedReplies = 256
    @Option(help: "Boards held in memory at once; joins beyond get HTTP 503.") var maxBoards = 100_000
    @Option(help: "Connections on one board; joins beyond get HTTP 503.") var maxClientsPerBoard = 20_000
    @Option(help: "Seconds an empty board stays in memory before it is dropped (it reloads from the store).")
    var evictAfterSeconds: UInt64 = 30
    @Option(help: "Operations a board keeps after its checkpoint (compaction window).") var keptOperations = 1024
    @Option(help: """
        Replica ids a board remembers besides connected ones; when it compacts it forgets the least recently active beyond this (their \
        clients start again under a new id).
        """)
    var maxReplicasPerBoard = 512
    @Option(help: "Idempotency keys a board keeps in memory; older ones are looked up in the store (kept 7 days).")
    var rememberedKeysPerBoard = 4096
    @Option(help: """
        How the service thread waits for sockets: libev (epoll; cost per turn follows the busy sockets) or poll (lws's own loop; polls \
        every socket each turn).
        """)
    var eventLoop: String = "libev"
    @Option(help: "File descriptors provisioned for the service thread (lws fd_limit_per_thread).") var fdLimit: UInt32 = 200_000
    @Option(help: "Seconds a drain (the console's, or --drain-on-stop) waits for clients to leave before the hub exits anyway.")
    var drainSeconds: UInt64 = 60
    @Flag(help: """
        SIGTERM drains the hub (no new connections, clients closed with 1012 at most 200 a second so they move to other hubs) and exits 0 \
        when it is empty; a second SIGTERM stops at once.
        """)
    var drainOnStop = false
    @OptionGroup(title: "Cluster mode (several hubs sharing boards through Redis; docs/CLUSTER.md)") var cluster: ClusterOptions
    @OptionGroup(title: "Authentication") var auth: AuthOptions
    @OptionGroup(title: "TLS, origins and abuse limits") var transport: TransportOptions

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        try auth.checkOpenMode(host: host)
        if echo, !auth.isOpen {
            throw ValidationError("--echo serves an endpoint that takes no token; it cannot be combined with --auth-secret-file or " +
                                  "--auth-public-key")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        guard maxMessageBytes >= 256 else { throw ValidationError("--max-message-bytes must be at least 256") }
        guard rate > 0, burst >= 1 else { throw ValidationError("--rate must be > 0 and --burst >= 1") }
        guard badFramesPerSecond > 0, badFrameBurst >= 1 else {
            throw ValidationError("--bad-frames-per-second must be > 0 and --bad-frame-burst >= 1")
        }
        guard idleTimeoutSeconds > pingSeconds else { throw ValidationError("--idle-timeout-seconds must exceed --ping-seconds") }
        guard EventLoopKind(rawValue: eventLoop) != nil else { throw ValidationError("--event-loop must be libev or poll") }
        guard sync == "full" || sync == "normal" else { throw ValidationError("--sync must be full or normal") }
        guard keptOperations >= 16 else { throw ValidationError("--kept-operations must be at least 16") }
        guard maxReplicasPerBoard >= 1 else { throw ValidationError("--max-replicas-per-board must be at least 1") }
        guard rememberedKeysPerBoard >= 1 else { throw ValidationError("--remembered-keys-per-board must be at least 1") }
        try cluster.check(inMemory: inMemory)
    }

    func run() throws {
        raiseOpenFileLimit()
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "synchub")

        var options = ServerOptions()
        options.host = host
        options.port = port
        options.maxMessageBytes = maxMessageBytes
        options.pingAfterSeconds = pingSeconds
        options.hangupAfterSeconds = idleTimeoutSeconds
        options.stallSeconds = stallSeconds
        options.maxQueuedReplies = maxQueuedReplies
        options.fdLimit = fdLimit
        options.eventLoop = EventLoopKind(rawValue: eventLoop) ?? .libev
        options.handshakeTimeoutSeconds = handshakeTimeoutSeconds
        options.tls = transport.tlsFiles
        options.reusePort = cluster.reusePort
        var limits = HubLimits()
        limits.messagesPerSecond = rate
        limits.messageBurst = burst
        limits.badFramesPerSecond = badFramesPerSecond
        limits.badFrameBurst = badFrameBurst
        limits.maxBoards = maxBoards
        limits.maxClientsPerBoard = maxClientsPerBoard
        limits.evictAfterSeconds = evictAfterSeconds
        limits.keptOperations = keptOperations
        limits.maxReplicasPerBoard = maxReplicasPerBoard
        limits.rememberedKeysPerBoard = rememberedKeysPerBoard

        // Block SIGINT/SIGTERM before any thread starts, so only the
        // signal thread takes them (a thread started earlier would inherit
        // an unblocked mask and die by the default action).
        let stopRequest = StopRequest()
        StopSignals.install { stopRequest.fire() }
        let sharedLog = try cluster.connect(logger: logger, keptOperations: keptOperations, maxReplicasPerBoard: maxReplicasPerBoard)
        let hub: HubServer
        do {
            let verifier = try auth.makeVerifier()
            var sequencing = Sequencing.local
            let log: BoardLog?
            if let sharedLog {
                sequencing = .shared(SharedLogSettings(hubID: sharedLog.settings.hubID, timeoutNanos: cluster.timeoutNanos,
                                                       foldEvery: UInt64(cluster.foldSpan(keptOperations: keptOperations))))
                log = sharedLog
            } else if inMemory {
                log = nil
            } else {
                log = try EmbeddedBoardLog(directory: data, fsyncEachCommit: sync == "full", logger: logger)
            }
            // A board's load is bounded as a whole: --redis-timeout in a
            // cluster, 10 s for the embedded file (R16).
            hub = HubServer(options: options, limits: limits, policy: transport.policy(authRequired: verifier != nil),
                            verifier: verifier, metricsToken: auth.metricsToken, log: log, sequencing: sequencing,
                            loadTimeoutNanos: sharedLog == nil ? 10_000_000_000 : cluster.timeoutNanos, echo: echo, logger: logger)
        } catch {
            throw ValidationError("\(error)")
        }
        hub.startStore()
        hub.drainSeconds = drainSeconds
        let drainOnStop = self.drainOnStop
        stopRequest.set {
            // O8: the first SIGTERM drains (with --drain-on-stop); another stops at once.
            guard drainOnStop else { return hub.server.stop() }
            hub.server.post { if !hub.startDrain(by: "SIGTERM") { hub.server.stop() } }
        }
        do throws(HTTPRefusal) {
            try hub.server.run { boundPort in
                if hub.server.eventLoopFallback {
                    logger.warning("libev plugin for libwebsockets not found (install libwebsockets-evlib-ev); using poll")
                }
                let store = sharedLog.map { "cluster on \($0.shards.map(\.address.description).joined(separator: ", ")), " +
                                            "hub \($0.settings.hubID)" }
                    ?? (inMemory ? "in memory" : "store \(data)/boards.sqlite")
                let scheme = options.tls == nil ? "ws" : "wss"
                FileHandle.standardError.write(Data("synchub listening on \(scheme)://\(host):\(boundPort) (\(store))\n".utf8))
            }
        } catch {
            throw ValidationError(error.message)
        }
        hub.stopStore()
        if let failure = hub.storeFailure {
            logger.critical("stopped after a store failure; changes after it were not acknowledged", metadata: ["error": "\(failure)"])
            throw ExitCode(3)
        }
        logger.info("stopped cleanly")
    }
}
