import WebSocketLoop

/// What one `syncclient bench` run does.
struct BenchPlan: Sendable {
    var hub: WebSocketURL
    var boardNames: [String]
    var clientsPerBoard: Int
    /// Clients per board that send operations (the first ones of each board).
    var sendersPerBoard: Int
    var threads: Int
    /// Loopback source addresses 127.0.0.1 ... 127.0.0.N.
    var sources: Int
    var connectionsPerSecond: Double
    /// Aggregate operations a second over all boards; 0 means as fast as the hub absorbs.
    var rate: Double
    /// Saturation mode: operations in flight per board.
    var inFlightPerBoard: Int
    var warmupNanos: UInt64
    var durationNanos: UInt64
    /// Against a plain broadcaster (Benchmarks/RawBroadcaster), the ceiling:
    /// each message carries its send time and is echoed to every client.
    var raw = false
    /// Letter boards (moves) or Set tables (named players choosing cards).
    var kind: BenchKind = .letters
    /// The token and TLS trust every client uses (`--token`, `--ca`, `--insecure`).
    var access = HubAccess()
    /// `--connect-only`: measure connection setup (upgrade, TLS, token check) instead of operations.
    var connectOnly = false
    /// `--kind todo`: the items each list is filled to at the start and kept near.
    var todoItems = 50
    /// `--connect-only --token-list`: connection i presents token i mod count (distinct tokens miss the hub's cache).
    var tokens: [String] = []

    var totalClients: Int { boardNames.count * clientsPerBoard }

    /// The (board, slot) pairs worker `index` owns.
    func slots(forWorker index: Int) -> [(board: Int, slot: Int)] {
        var mine: [(Int, Int)] = []
        for board in boardNames.indices {
            for slot in 0..<clientsPerBoard where (board * clientsPerBoard + slot) % threads == index {
                mine.append((board, slot))
            }
        }
        return mine
    }

    func url(board: Int) -> WebSocketURL {
        hub.with(path: "/\(kind.pathSegment)/" + boardNames[board])
    }

    func sourceAddress(board: Int, slot: Int) -> String? {
        guard sources > 1 else { return nil }
        return "127.0.0.\(1 + (board * clientsPerBoard + slot) % sources)"
    }
}
