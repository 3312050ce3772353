import Prometheus
import WebSocketLoop

/// The `/metrics` page: Prometheus text format from swift-prometheus. The
/// hot path only bumps plain integers (`HubCounters`, `ServerStats`); they
/// are carried into the registry when the page is scraped.
final class HubMetrics {
    private let registry = PrometheusCollectorRegistry()
    private let connections: Gauge
    private let boards: Gauge
    private let messagesIn: Counter
    private let messagesOut: Counter
    private let socketWrites: Counter
    private let applied: Counter
    private let refused: Counter
    private let errors: Counter
    private let rateLimited: Counter
    private let drops: Counter
    private let stalled: Counter
    private let oversized: Counter
    private let committed: Counter
    private let evicted: Counter
    private let forgotten: Counter
    private let keyedResends: Counter
    private let encodingFailures: Counter
    private let restamped: Counter
    private let unreadable: Counter
    private let boardReads: Counter
    private let loadsTimedOut: Counter
    private let connectsRateLimited: Counter
    private let queryTokensRefused: Counter
    private let originsRefused: Counter
    private let unauthenticatedRefused: Counter
    private let authTimeouts: Counter
    private let preauthOverruns: Counter
    private let authAccepted: Counter
    private let authRefused: Counter
    private let authForbidden: Counter
    private let authExpired: Counter
    private let unauthenticated: Gauge
    private let trackedAddresses: Gauge
    private var lastGate = GateCounters()
    private var lastCounters = HubCounters()
    private var lastStats = ServerStats()

    init() {
        connections = registry.makeGauge(name: "synchub_connections", help: "Open WebSocket connections")
        boards = registry.makeGauge(name: "synchub_boards", help: "Boards held in memory")
        messagesIn = registry.makeCounter(name: "synchub_messages_in_total", help: "Frames received from clients")
        authAccepted = registry.makeCounter(name: "synchub_auth_accepted_total", help: "Valid tokens that put a connection on its board")
        authRefused = registry.makeCounter(
            name: "synchub_auth_refused_total",
            help: "Tokens refused: missing, bad, expired, wrong audience (401 or 4401; refreshes refused bad_token)")
        authForbidden = registry.makeCounter(name: "synchub_auth_forbidden_total",
                                             help: "No role on the board (403, 4403) and changes refused to read-only connections")
        authExpired = registry.makeCounter(name: "synchub_auth_expired_total", help: "Connections closed at their token's expiry (4401)")
        messagesOut = registry.makeCounter(name: "synchub_messages_out_total", help: "Frames written to clients")
        socketWrites = registry.makeCounter(name: "synchub_socket_writes_total",
                                            help: "Writes to client sockets that carried those frames (frames due together leave in one)")
        applied = registry.makeCounter(name: "synchub_operations_applied_total", help: "Operations merged into boards")
        refused = registry.makeCounter(name: "synchub_operations_refused_total",
                                       help: "Intents or operations refused (board full, stale, ...)")
        errors = registry.makeCounter(name: "synchub_errors_sent_total", help: "error frames sent for malformed input")
        rateLimited = registry.makeCounter(name: "synchub_rate_limited_total", help: "Frames dropped by the per-connection rate limit")
        drops = registry.makeCounter(name: "synchub_send_queue_drops_total",
                                     help: "Board states replaced by a newer one before a slow client took them")
        stalled = registry.makeCounter(name: "synchub_slow_clients_closed_total", help: "Connections closed for leaving frames unread")
        oversized = registry.makeCounter(name: "synchub_oversized_messages_total", help: "Connections closed for a too large message")
        committed = registry.makeCounter(name: "synchub_records_committed_total", help: "Changes made durable (or merged, in memory)")
        evicted = registry.makeCounter(name: "synchub_boards_evicted_total", help: "Idle boards dropped from memory")
        forgotten = registry.makeCounter(name: "synchub_replicas_forgotten_total",
                                         help: "Inactive replica ids boards forgot when compacting")
        keyedResends = registry.makeCounter(name: "synchub_keyed_resends_total",
                                            help: "Keyed intents answered with their first answer instead of applied again")
        encodingFailures = registry.makeCounter(name: "synchub_encoding_failures_total",
                                                help: "Frames the hub could not encode (connections closed with 1011)")
        restamped = registry.makeCounter(name: "synchub_operations_restamped_total",
                                         help: "Replica operations re-stamped after ones already integrated (an ack is final)")
        unreadable = registry.makeCounter(name: "synchub_boards_unreadable_total",
                                          help: "Boards whose stored data could not be loaded (joins closed with 1011)")
        boardReads = registry.makeCounter(
            name: "synchub_board_reads_after_token_total",
            help: "Boards read from the store (or Redis, in cluster mode) for a connection once its auth frame brought a valid token " +
                  "with a role on the board, never before; counted when the read starts")
        loadsTimedOut = registry.makeCounter(
            name: "synchub_board_loads_timed_out_total",
            help: "Board loads and key lookups that waited past their bound (--redis-timeout in a cluster, 10 s on the embedded store); " +
                  "their connections were closed with 1011 (R16)")
        connectsRateLimited = registry.makeCounter(name: "synchub_connects_rate_limited_total",
                                                   help: "Upgrades refused with 429: over --max-connects-per-minute from one address")
        queryTokensRefused = registry.makeCounter(name: "synchub_query_tokens_refused_total",
                                                  help: "Requests refused with 400 for a token in the query string")
        originsRefused = registry.makeCounter(name: "synchub_origins_refused_total",
                                              help: "Upgrades refused with 403 for an Origin not allowed")
        unauthenticatedRefused = registry.makeCounter(
            name: "synchub_unauthenticated_refused_total",
            help: "Upgrades refused with 503: --max-unauthenticated connections already wait for a token")
        authTimeouts = registry.makeCounter(name: "synchub_auth_timeouts_total",
                                            help: "Connections closed with 4401 for presenting no valid token in time")
        preauthOverruns = registry.makeCounter(
            name: "synchub_preauth_bytes_exceeded_total",
            help: "Connections closed with 4401 for sending more than --max-preauth-bytes before a valid token")
        unauthenticated = registry.makeGauge(name: "synchub_unauthenticated_connections",
                                             help: "Board connections open that have not presented a valid token yet (auth on)")
        trackedAddresses = registry.makeGauge(name: "synchub_connect_rate_addresses",
                                              help: "Peer addresses whose connect rate is remembered")
    }

    /// Brings the registry up to date and renders it.
    func render(counters: HubCounters, stats: ServerStats, gate: UpgradeGate, connectionCount: Int, boardCount: Int) -> [UInt8] {
        connections.set(Int64(connectionCount))
        unauthenticated.set(Int64(gate.unauthenticatedCount))
        trackedAddresses.set(Int64(gate.trackedAddresses))
        boards.set(Int64(boardCount))
        func bump(_ counter: Counter, _ now: UInt64, _ before: UInt64) {
            if now > before { counter.increment(by: Int64(now - before)) }
        }
        bump(messagesIn, counters.messagesIn, lastCounters.messagesIn)
        bump(applied, counters.operationsApplied, lastCounters.operationsApplied)
        bump(forgotten, counters.replicasForgotten, lastCounters.replicasForgotten)
        bump(keyedResends, counters.keyedResends, lastCounters.keyedResends)
        bump(encodingFailures, counters.encodingFailures, lastCounters.encodingFailures)
        bump(restamped, counters.operationsRestamped, lastCounters.operationsRestamped)
        bump(authAccepted, counters.authAccepted, lastCounters.authAccepted)
        bump(authRefused, counters.authRefused, lastCounters.authRefused)
        bump(authForbidden, counters.authForbidden, lastCounters.authForbidden)
        bump(authExpired, counters.authExpired, lastCounters.authExpired)
        bump(unreadable, counters.boardsUnreadable, lastCounters.boardsUnreadable)
        bump(boardReads, counters.boardReads, lastCounters.boardReads)
        bump(loadsTimedOut, counters.loadsTimedOut, lastCounters.loadsTimedOut)
        bump(refused, counters.operationsRefused, lastCounters.operationsRefused)
        bump(errors, counters.errorsSent, lastCounters.errorsSent)
        bump(rateLimited, counters.rateLimited, lastCounters.rateLimited)
        bump(committed, counters.recordsCommitted, lastCounters.recordsCommitted)
        bump(evicted, counters.boardsEvicted, lastCounters.boardsEvicted)
        bump(messagesOut, stats.framesWritten, lastStats.framesWritten)
        bump(socketWrites, stats.writes, lastStats.writes)
        bump(drops, stats.statesReplaced, lastStats.statesReplaced)
        bump(stalled, stats.stalledClosed, lastStats.stalledClosed)
        bump(oversized, stats.oversizedClosed, lastStats.oversizedClosed)
        let door = gate.counters
        bump(connectsRateLimited, door.connectsRateLimited, lastGate.connectsRateLimited)
        bump(queryTokensRefused, door.queryTokensRefused, lastGate.queryTokensRefused)
        bump(originsRefused, door.originsRefused, lastGate.originsRefused)
        bump(unauthenticatedRefused, door.unauthenticatedRefused, lastGate.unauthenticatedRefused)
        bump(authTimeouts, door.authTimeouts, lastGate.authTimeouts)
        bump(preauthOverruns, door.preauthOverruns, lastGate.preauthOverruns)
        lastGate = door
        lastCounters = counters
        lastStats = stats
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return buffer
    }
}
