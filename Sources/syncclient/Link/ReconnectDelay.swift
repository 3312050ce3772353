/// How long a link waits before it connects again after losing the hub
/// (pure; the links draw the jitter).
enum ReconnectDelay {
    /// O5: an operator put this connection out (close 4409): the client
    /// stays away this long, then comes back on its own.
    static let putOutCode = 4409
    static let putOutSeconds = 30.0

    /// Seconds to wait before try `attempt` (from 1): 0.25 s doubling up to
    /// 8 s, times `jitter` (0.7...1.3 spreads many clients' returns); after
    /// a close 4409, 30 s and up to 9 s more (the clients of a `sub` or a
    /// board put out together do not all come back in the same instant).
    static func seconds(closeCode: Int?, attempt: Int, jitter: Double) -> Double {
        if closeCode == putOutCode { return putOutSeconds * (1 + max(0, jitter - 0.7) / 2) }
        return min(8.0, 0.25 * Double(1 << min(max(attempt, 1) - 1, 6))) * jitter
    }
}
