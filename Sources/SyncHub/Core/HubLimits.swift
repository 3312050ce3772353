/// The hub's protocol limits (flags in `SyncHubCommand`, listed in docs/OPERATIONS.md).
struct HubLimits: Sendable {
    /// Messages a second one connection may send, and how many it may save up.
    var messagesPerSecond: Double = 1000
    var messageBurst: Double = 2000
    /// Refused frames (errors, rate-limited) a connection may cause a second
    /// before it is closed with 1008.
    var badFramesPerSecond: Double = 10
    var badFrameBurst: Double = 50
    /// Boards held at once; joins beyond get HTTP 503.
    var maxBoards = 100_000
    /// Connections on one board; joins beyond get HTTP 503.
    var maxClientsPerBoard = 20_000
    /// Seconds an empty board stays in memory before it is dropped (it comes
    /// back from the store on the next join). Ignored with `--in-memory`.
    var evictAfterSeconds: UInt64 = 30
    /// Operations each board keeps after its checkpoint.
    var keptOperations = 1024
    /// Replica ids a board remembers beyond those connected or in its log;
    /// the least recently active are forgotten when it compacts.
    var maxReplicasPerBoard = 512
    /// Idempotency keys a board keeps in memory (older ones are asked of the store).
    var rememberedKeysPerBoard = 4096
}
