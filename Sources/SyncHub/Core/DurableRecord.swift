import BoardCRDT
import SyncWire

/// One merged change on its way to the store. Its replies (acks, refusals)
/// and the board state after it are released only once it is durable, so
/// nobody is told of, or shown, a change a crash could still lose.
struct DurableRecord: Sendable {
    var board: String
    /// New operations to store (none for an idempotent no-op or a refusal).
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
}

/// What the store hands back to load a board.
struct StoredBoard: Sendable {
    var version: UInt64
    var checkpoint: Checkpoint<LetterBoard>
    var operations: [BoardOperation]
}
