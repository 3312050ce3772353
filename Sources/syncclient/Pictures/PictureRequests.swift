/// Which pictures a watch session fetches (pure, so tests drive it): each
/// wanted picture once; one that could not be fetched (the hub unreachable)
/// again after `retryNanos`; never more than `limit` pictures in all, so a
/// long session's memory stays bounded (a shop holds at most 200 images);
/// past it the screen is told why a picture does not come.
struct PictureRequests: Sendable {
    enum Entry: Equatable, Sendable {
        case pending
        case arrived
        /// Fetching failed at this time; it may be tried again.
        case unreachable(since: UInt64)
    }

    static let limit = 512
    static let retryNanos: UInt64 = 10_000_000_000

    private(set) var entries: [String: Entry] = [:]
    /// Pictures asked for past `limit`: told once that they will not come.
    private var refused: Set<String> = []

    /// The wanted pictures to fetch now (marked pending), and those past the
    /// limit, to be told so once (at most `limit` of them; more are ignored).
    mutating func toFetch(wanted: [String], now: UInt64) -> (fetch: [String], refused: [String]) {
        var fetch: [String] = [], over: [String] = []
        for name in wanted {
            let due: Bool
            switch entries[name] {
            case nil:
                due = entries.count < Self.limit
                if !due, refused.count < Self.limit, refused.insert(name).inserted { over.append(name) }
            case let .unreachable(since)?: due = now >= since && now - since >= Self.retryNanos
            case .pending?, .arrived?: due = false
            }
            guard due else { continue }
            entries[name] = .pending
            fetch.append(name)
        }
        return (fetch, over)
    }

    /// A fetch ended: `retry` when the hub could not be reached (or answered
    /// 5xx), so the picture may be asked for again later.
    mutating func finished(_ name: String, retry: Bool, now: UInt64) {
        entries[name] = retry ? .unreachable(since: now) : .arrived
    }
}
