import BoardCRDT
import SyncWire

/// One merged change on its way to the store. Its replies (acks, refusals)
/// and the board state after it are released only once it is durable, so
/// nobody is told of, or shown, a change a crash could still lose.
struct DurableRecord: Sendable {
    var board: String
    /// The board's own replica id (the hub's operations are made under it,
    /// the same across restarts); stored with the board.
    var hubReplica: ReplicaID
    /// Operations newly integrated by this change, including earlier ones of
    /// a replica that a gap had held back until now.
    var operations: [BoardOperation]
    /// The board's version and order after this change.
    var version: UInt64
    var order: [Letter]
    /// Frames for single connections, sent once durable.
    var replies: [(connection: UInt64, frame: String)]
    /// The connection whose replica made `operations` (not relayed back to it).
    var author: UInt64?
    /// Set when the board compacted: the store replaces its checkpoint and
    /// drops the operations it holds.
    var checkpoint: Checkpoint<LetterBoard>?
    /// A keyed intent's key and first answer, stored in the same transaction
    /// as its change so that both are durable or neither is.
    var keyed: (key: String, answer: KeyedAnswer)?

    init(board: String, hubReplica: ReplicaID, operations: [BoardOperation], version: UInt64, order: [Letter],
         replies: [(connection: UInt64, frame: String)], author: UInt64? = nil,
         checkpoint: Checkpoint<LetterBoard>? = nil, keyed: (key: String, answer: KeyedAnswer)? = nil) {
        self.board = board
        self.hubReplica = hubReplica
        self.operations = operations
        self.version = version
        self.order = order
        self.replies = replies
        self.author = author
        self.checkpoint = checkpoint
        self.keyed = keyed
    }
}

/// What the store hands back to load a board.
struct StoredBoard: Sendable {
    var version: UInt64
    var checkpoint: Checkpoint<LetterBoard>
    var operations: [BoardOperation]
    /// The board's own replica id; nil for a board stored before it was kept.
    var hubReplica: ReplicaID?
    /// Whether the store holds idempotency keys for this board.
    var hasKeys: Bool = false
}
