/// A token bucket: `rate` tokens a second, at most `burst` saved up.
struct RateLimiter {
    var rate: Double
    var burst: Double
    private var tokens: Double
    private var last: UInt64

    init(rate: Double, burst: Double, now: UInt64) {
        self.rate = rate
        self.burst = max(1, burst)
        tokens = self.burst
        last = now
    }

    /// Takes one token if there is one.
    mutating func allow(now: UInt64) -> Bool {
        if now > last {
            tokens = min(burst, tokens + Double(now - last) / 1e9 * rate)
            last = now
        }
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
