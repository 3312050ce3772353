import BoardCRDT
import SyncWire

/// One merged change on its way to the store. Its replies (acks, refusals)
/// and the board state after it are released only once it is durable, so
/// nobody is told of, or shown, a change a crash could still lose. Kind-free:
/// operations and checkpoints travel as the JSON their kind wrote.
struct DurableRecord: Sendable {
    /// The board's key (`BoardAddress.key`) and kind.
    var board: String
    var kind: String
    /// The board's own replica id (the hub's operations are made under it,
    /// the same across restarts); stored with the board.
    var hubReplica: ReplicaID
    /// Operations newly integrated by this change, including earlier ones of
    /// a replica that a gap had held back until now.
    var operations: [StoredOperation]
    /// The board's version after this change.
    var version: UInt64
    /// Frames for single connections, sent once durable.
    var replies: [(connection: UInt64, frame: String)]
    /// The connection whose replica made `operations` (not relayed back to it).
    var author: UInt64?
    /// Set when the board compacted: the store replaces its checkpoint and
    /// drops the operations it holds.
    var checkpoint: StoredCheckpoint?
    /// A keyed intent's key and first answer, stored in the same transaction
    /// as its change so that both are durable or neither is.
    var keyed: (key: String, answer: KeyedAnswer)?
    /// O7: the board was frozen (true) or thawed (false) by this record.
    var frozen: Bool?
}

/// An operation as the store keeps it.
struct StoredOperation: Sendable, Equatable {
    var id: OperationID
    var lamport: UInt64
    /// Written when read (on the store's thread; never in memory).
    let encode: @Sendable () -> String
    var json: String { encode() }
    init(id: OperationID, lamport: UInt64, json: String) {
        self.id = id
        self.lamport = lamport
        encode = { json }
    }
    init(id: OperationID, lamport: UInt64, encode: @escaping @Sendable () -> String) {
        self.id = id
        self.lamport = lamport
        self.encode = encode
    }
    static func == (a: StoredOperation, b: StoredOperation) -> Bool { a.id == b.id && a.lamport == b.lamport && a.json == b.json }
}

/// A checkpoint as the store keeps it; encoded by the store's thread when
/// it commits (an encoding failure is a store failure, never an empty row).
struct StoredCheckpoint: Sendable {
    var frontier: Stamp
    var encode: @Sendable () throws -> String
}

/// What the store hands back to load a board.
struct StoredBoard: Sendable {
    var version: UInt64
    /// The checkpoint's JSON; nil for none yet.
    var checkpoint: String?
    /// The operations after it, as JSON, in stamp order.
    var operations: [String]
    /// The board's own replica id; nil for a board stored before it was kept.
    var hubReplica: ReplicaID?
    /// Whether the store holds idempotency keys for this board.
    var hasKeys: Bool = false
    /// O7: frozen by an operator.
    var frozen = false
    /// Cluster mode: the board as its shared log holds it (the fields above are unused).
    var shared: SharedBoard?
}

extension StoredBoard {
    /// A board as a shared log holds it.
    init(shared: SharedBoard) {
        self.init(version: 0, checkpoint: nil, operations: [], hubReplica: nil, hasKeys: false, frozen: false, shared: shared)
    }
}
