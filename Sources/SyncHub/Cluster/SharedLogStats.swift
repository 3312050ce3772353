/// Counters and gauges of one Redis server, for /metrics (R11).
struct SharedLogStats: Sendable {
    var roundTrips: UInt64 = 0
    var roundTripSeconds: Double = 0
    /// Round trips by bucket upper bound in seconds (a Prometheus histogram).
    var buckets: [Int] = Array(repeating: 0, count: SharedLogStats.bounds.count)
    var errors: [String: UInt64] = [:]
    var reconnects: UInt64 = 0
    var behind: UInt64 = 0
    var up = false
    var folds: UInt64 = 0
    var foldsDeclined: UInt64 = 0
    /// R18: whether the server keeps an append-only file (nil: not known, CONFIG refused).
    var persistent: Bool?
    /// R13: promotions of another primary this hub followed.
    var failovers: UInt64 = 0
    /// R19: the server came back empty and was taken in its old place at start.
    var replaced: UInt64 = 0

    static let bounds: [Double] = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

    mutating func observe(seconds: Double) {
        roundTrips += 1
        roundTripSeconds += seconds
        for (index, bound) in Self.bounds.enumerated() where seconds <= bound { buckets[index] += 1 }
    }

    /// The bound under which 99 % of the round trips fell (cumulative buckets), or nil without any.
    var roundTripP99: Double? {
        guard roundTrips > 0 else { return nil }
        let wanted = Double(roundTrips) * 0.99
        return zip(Self.bounds, buckets).first { Double($0.1) >= wanted }?.0 ?? Self.bounds.last
    }

    mutating func count(_ failure: RedisFailure) {
        errors[failure.label, default: 0] += 1
    }
}
