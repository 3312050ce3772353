/// How long a link waits before it connects again after losing the hub
/// (pure; the links draw the jitter).
enum ReconnectDelay {
    /// O5: an operator put this connection out (close 4409): the client
    /// stays away this long, then comes back on its own.
    static let putOutCode = 4409
    static let putOutSeconds = 30.0

    /// Seconds to wait before try `attempt` (from 1): 0.25 s doubling up to
    /// 8 s, times `jitter` (0.7...1.3 spreads many clients' returns); 30 s
    /// flat after a close 4409.
    static func seconds(closeCode: Int?, attempt: Int, jitter: Double) -> Double {
        if closeCode == putOutCode { return putOutSeconds }
        return min(8.0, 0.25 * Double(1 << min(max(attempt, 1) - 1, 6))) * jitter
    }
}
