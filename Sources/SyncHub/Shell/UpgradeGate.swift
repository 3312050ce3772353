import WebSocketLoop

/// The hub's transport rules: origins, per-address connect rates and the
/// limits on connections that have not yet presented a valid token
/// (flags in `TransportOptions`, explained in docs/SECURITY.md).
struct TransportPolicy: Sendable {
    /// Whether every board connection needs a valid token (any auth key is
    /// configured). Off, the pre-token limits below do not apply.
    var authRequired = false
    /// Origins a browser may connect from, normalised (`TransportPolicy.normalise`).
    /// Empty: any origin for an open hub, only the hub's own when auth is on.
    var allowedOrigins: Set<String> = []
    /// WebSocket upgrade attempts a minute from one address (0: no limit).
    /// Loopback peers are not counted: they are a local proxy or a load tool
    /// and one address for everyone behind it.
    var maxConnectsPerMinute = 300
    /// Addresses whose connect rate is remembered at once (bounded memory).
    var maxTrackedAddresses = 65_536
    /// Connections open without a valid token yet; upgrades beyond get 503.
    var maxUnauthenticated = 1000
    /// Seconds a connection has to present a valid token (A6), else 4401.
    var authTimeoutSeconds: UInt64 = 5
    /// Bytes a connection may send before it has presented a valid token, else 4401.
    var maxPreauthBytes = 16_384

    /// `Scheme://Host:Port` in lower case, without a default port or a
    /// trailing slash: how origins are compared.
    static func normalise(origin: String) -> String {
        var text = origin.lowercased()
        while text.hasSuffix("/") { text.removeLast() }
        if text.hasPrefix("https://"), text.hasSuffix(":443") { text.removeLast(4) }
        if text.hasPrefix("http://"), text.hasSuffix(":80") { text.removeLast(3) }
        return text
    }
}

/// What the gate refused or closed, for /metrics.
struct GateCounters: Sendable, Equatable {
    var connectsRateLimited: UInt64 = 0
    var queryTokensRefused: UInt64 = 0
    var originsRefused: UInt64 = 0
    var unauthenticatedRefused: UInt64 = 0
    var authTimeouts: UInt64 = 0
    var preauthOverruns: UInt64 = 0
}

/// The door of the hub, as a value with no I/O: decides upgrades by what
/// their request head says, and keeps the books of connections that have
/// not yet presented a valid token. The clock arrives with each call.
struct UpgradeGate {
    let policy: TransportPolicy
    private(set) var counters = GateCounters()
    /// Per-address token buckets and when each address last tried.
    private var buckets: [String: (limiter: RateLimiter, seen: UInt64)] = [:]
    private var lastSweep: UInt64 = 0
    /// Board connections that have not presented a valid token yet.
    private var waiting: [UInt64: (since: UInt64, bytes: Int)] = [:]

    init(policy: TransportPolicy) {
        self.policy = policy
    }

    /// Connections open that have not presented a valid token.
    var unauthenticatedCount: Int { waiting.count }
    /// Addresses whose connect rate is remembered.
    var trackedAddresses: Int { buckets.count }

    // MARK: Before the upgrade

    /// Nil to let the upgrade on (to the board checks and the token's),
    /// or the refusal. Every call counts as an attempt of its address.
    mutating func admit(_ request: RequestHead, now: UInt64) -> HTTPRefusal? {
        if !allowConnect(from: request.peerAddress, now: now) {
            counters.connectsRateLimited += 1
            return HTTPRefusal(status: 429, message: "too many connection attempts from \(request.peerAddress): " +
                                                     "at most \(policy.maxConnectsPerMinute) a minute")
        }
        if let refusal = refuseQueryToken(request) { return refusal }
        if !originAllowed(request) {
            counters.originsRefused += 1
            return HTTPRefusal(status: 403, message: "origin not allowed: \(request.origin ?? "")")
        }
        if policy.authRequired, request.bearerToken == nil, waiting.count >= policy.maxUnauthenticated {
            // A token in the header is checked before the upgrade; only
            // connections that will send theirs in a frame wait in the room.
            counters.unauthenticatedRefused += 1
            return HTTPRefusal(status: 503, message: "too many connections waiting to present a token; try again shortly")
        }
        return nil
    }

    /// A7: a token in the query string is refused, for pages as for boards
    /// (the value was never read, so it cannot be logged).
    mutating func refuseQueryToken(_ request: RequestHead) -> HTTPRefusal? {
        guard request.queryNames.contains(where: { ["token", "access_token"].contains($0.lowercased()) }) else { return nil }
        counters.queryTokensRefused += 1
        return HTTPRefusal(status: 400, message: "a token in the URL's query string is refused: send it as an Authorization: Bearer " +
                                                 "header, or as the first frame (pages take it after # in the address)")
    }

    func originAllowed(_ request: RequestHead) -> Bool {
        guard let origin = request.origin else { return true }  // not a browser
        let normalised = TransportPolicy.normalise(origin: origin)
        if !policy.allowedOrigins.isEmpty { return policy.allowedOrigins.contains(normalised) }
        if !policy.authRequired { return true }
        guard let host = request.host, !host.isEmpty else { return false }
        return normalised == TransportPolicy.normalise(origin: (request.isTLS ? "https://" : "http://") + host)
    }

    private mutating func allowConnect(from address: String, now: UInt64) -> Bool {
        guard policy.maxConnectsPerMinute > 0, !Self.isLoopback(address) else { return true }
        sweep(now: now)
        let perMinute = Double(policy.maxConnectsPerMinute)
        if var entry = buckets[address] {
            let allowed = entry.limiter.allow(now: now)
            entry.seen = now
            buckets[address] = entry
            return allowed
        }
        if buckets.count >= policy.maxTrackedAddresses {
            // Full of addresses that all tried within the minute: a flood
            // from many addresses. New ones wait rather than grow the table.
            sweep(now: now, force: true)
            if buckets.count >= policy.maxTrackedAddresses { return false }
        }
        var limiter = RateLimiter(rate: perMinute / 60, burst: perMinute, now: now)
        let allowed = limiter.allow(now: now)
        buckets[address] = (limiter, now)
        return allowed
    }

    /// Forgets addresses idle for a minute (their bucket is full again),
    /// at most once every ten seconds unless forced.
    mutating func sweep(now: UInt64, force: Bool = false) {
        guard force || now &- lastSweep >= 10_000_000_000 else { return }
        lastSweep = now
        buckets = buckets.filter { now &- $0.value.seen < 60_000_000_000 }
    }

    static func isLoopback(_ address: String) -> Bool {
        address.hasPrefix("127.") || address == "::1" || address.hasPrefix("::ffff:127.")
    }

    // MARK: Connections without a token

    /// A board connection opened; with auth on it starts waiting for its token.
    mutating func opened(_ connection: UInt64, now: UInt64) {
        if policy.authRequired { waiting[connection] = (now, 0) }
    }

    /// The connection presented a valid token: the pre-token limits end.
    mutating func authenticated(_ connection: UInt64) {
        waiting[connection] = nil
    }

    func isWaiting(_ connection: UInt64) -> Bool { waiting[connection] != nil }

    /// Counts bytes a waiting connection sent; true once it is over the
    /// limit (it is then forgotten here and must be closed).
    mutating func received(_ connection: UInt64, bytes: Int) -> Bool {
        guard var entry = waiting[connection] else { return false }
        entry.bytes += bytes
        if entry.bytes > policy.maxPreauthBytes {
            waiting[connection] = nil
            counters.preauthOverruns += 1
            return true
        }
        waiting[connection] = entry
        return false
    }

    mutating func closed(_ connection: UInt64) {
        waiting[connection] = nil
    }

    /// Connections whose time to present a token is up; forgotten here, to be closed with 4401.
    mutating func overdue(now: UInt64) -> [UInt64] {
        let bound = policy.authTimeoutSeconds * 1_000_000_000
        let late = waiting.filter { now &- $0.value.since >= bound }.map(\.key).sorted()
        for connection in late { waiting[connection] = nil }
        counters.authTimeouts += UInt64(late.count)
        return late
    }
}
