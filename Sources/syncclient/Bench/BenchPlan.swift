import WebSocketLoop

/// What one `syncclient bench` run does.
struct BenchPlan: Sendable {
    /// The first hub (the only one unless several URLs were given).
    var hub: WebSocketURL
    /// Further hubs of the same cluster (R12): each board's clients are
    /// spread over `hubs` round-robin by slot, see `hubIndex(slot:)`.
    var moreHubs: [WebSocketURL] = []
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
    /// `--raw-bytes`: each message to the broadcaster padded to this many
    /// bytes (a `"pad"` member), so the frames it relays are as large as a
    /// hub's states; 0: no padding (BENCHMARKS.md, "A ceiling that carries
    /// the hub's bytes").
    var rawBytes = 0
    /// The kind of the boards (`--kind`), whose driver sends, reads and counts.
    var kind: BenchKind = .first
    /// The token and TLS trust every client uses (`--token`, `--ca`, `--insecure`).
    var access = HubAccess()
    /// `--connect-only`: measure connection setup (upgrade, TLS, token check) instead of operations.
    var connectOnly = false
    /// `--kind todo`: the items each list is filled to at the start and kept near.
    var todoItems = 50
    /// `--connect-only --token-list`: connection i presents token i mod count (distinct tokens miss the hub's cache).
    var tokens: [String] = []
    /// `--read-batch-micros`: each client thread pauses this long before it
    /// waits for sockets again, so that one wake-up reads many frames (as a
    /// network card coalesces interrupts). 0: read every frame at once.
    var readBatchMicros: UInt32 = 0
    /// `--histogram`: the report carries the visibility samples, bucketed,
    /// so runs can be pooled (Benchmarks/paced_letters.py `--slices`).
    var histogram = false
    /// `--reader`: how the clients read their frames (`ws://` only; `wss://`
    /// always uses libwebsockets' client).
    var reader: BenchReader = .bulk

    var totalClients: Int { boardNames.count * clientsPerBoard }

    /// Every hub, the first one first.
    var hubs: [WebSocketURL] { [hub] + moreHubs }
    var hubCount: Int { 1 + moreHubs.count }

    /// The hub (index into `hubs`) a board's client `slot` connects to:
    /// round-robin, so slot 0 (the board's first client and first sender)
    /// is on the first hub, slot 1 on the second, and so on. The senders,
    /// the first slots, are spread the same way.
    func hubIndex(slot: Int) -> Int { slot % hubCount }

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

    /// The board's address on hub `hub` (an index into `hubs`; the first hub by default).
    func url(board: Int, hub index: Int = 0) -> WebSocketURL {
        let base = index > 0 && index <= moreHubs.count ? moreHubs[index - 1] : hub
        return base.with(path: "/\(kind.pathSegment)/" + boardNames[board])
    }

    func sourceAddress(board: Int, slot: Int) -> String? {
        guard sources > 1 else { return nil }
        return "127.0.0.\(1 + (board * clientsPerBoard + slot) % sources)"
    }
}
