import BoardCRDT
import SyncWire

/// One board held by the hub: its replica, who is on it, and what of it is durable.
/// A class so that merging into a board's replica never copies its log.
final class BoardRoom {
    let name: String
    var replica: Replica<LetterBoard>
    /// Grows with every change of the order (CONTRACT `version`).
    var version: UInt64
    /// The newest durable version and order: what `state` frames show.
    var durableVersion: UInt64
    var durableOrder: [Letter]
    /// The newest checkpoint the store holds: what a `sync` may send.
    var durableCheckpoint: Checkpoint<LetterBoard>
    var members: [UInt64: Member] = [:]
    /// The members whose `hello` was accepted (replica clients), kept apart
    /// so that relaying costs nothing on boards of thin clients.
    var replicaMembers: Set<UInt64> = []
    /// Records handed to the store and not yet back.
    var recordsInFlight = 0
    /// Per replica, how many of its newest integrated operations are in
    /// records not yet durable (records commit in order, so these are
    /// exactly its highest sequence numbers).
    private(set) var operationsInFlight: [ReplicaID: UInt64] = [:]
    /// The state frame needs sending (change, join or leave).
    var needsPublish = false
    var emptySince: UInt64?
    /// The checkpoint frontier last sent to the store.
    var storedFrontier: Stamp
    /// Idempotency keys of thin intents (at most once, KINDS "Frames").
    var keys: IntentKeys
    /// Replica clients whose `sync` waits for a compaction to become
    /// durable (see `catchUp`), with the frontier each said it holds.
    var awaitingSync: [(connection: UInt64, frontier: Stamp)] = []

    /// Whether the board compacted in memory and the store does not hold
    /// that checkpoint yet: the operations it folded are in neither the
    /// durable checkpoint nor the log, so a `sync` now would miss them.
    var compactionInFlight: Bool { replica.checkpoint.frontier != durableCheckpoint.frontier }

    init(name: String, hubReplica: ReplicaID, stored: StoredBoard?, keptOperations: Int, rememberedKeys: Int = 4096) {
        self.name = name
        let limits = ReplicaLimits(keptOperations: keptOperations)
        let checkpoint = stored?.checkpoint ?? .empty
        var replica = Replica<LetterBoard>(id: stored?.hubReplica ?? hubReplica, checkpoint: checkpoint, limits: limits)
        if let operations = stored?.operations {
            replica.receive(operations.sorted { $0.stamp < $1.stamp })
        }
        self.replica = replica
        version = stored?.version ?? 0
        durableVersion = version
        durableOrder = replica.state.order
        // Everything loaded is durable, so a compaction while loading (a
        // smaller --kept-operations than before) gives a durable checkpoint;
        // it is stored with the next record (the frontiers differ).
        durableCheckpoint = replica.checkpoint
        storedFrontier = checkpoint.frontier
        keys = IntentKeys(capacity: rememberedKeys, mayBeInStore: stored?.hasKeys ?? false)
    }

    /// The highest sequence number of `replica` the store holds.
    func durableSeq(of replica: ReplicaID) -> UInt64 {
        self.replica.versions[replica] - (operationsInFlight[replica] ?? 0)
    }

    /// Replicas with operations in records not yet durable.
    var replicasInFlight: Dictionary<ReplicaID, UInt64>.Keys { operationsInFlight.keys }

    func operationsRecorded(_ operations: [BoardOperation]) {
        for operation in operations { operationsInFlight[operation.id.replica, default: 0] += 1 }
    }

    func operationsCommitted(_ operations: [BoardOperation]) {
        for operation in operations {
            let replica = operation.id.replica
            guard let count = operationsInFlight[replica] else { continue }
            operationsInFlight[replica] = count > 1 ? count - 1 : nil
        }
    }

    /// What a replica client that holds a checkpoint at `frontier` needs:
    /// the durable checkpoint when its own is older, and every durable
    /// operation after the hub's checkpoint (it ignores those it has).
    /// Operations not yet durable reach it as relays once they are.
    /// Only while no compaction is in flight (`compactionInFlight`).
    func catchUp(from frontier: Stamp) -> Delta<LetterBoard> {
        let operations = replica.log.filter { $0.id.seq <= durableSeq(of: $0.id.replica) }
        return Delta(checkpoint: frontier < durableCheckpoint.frontier ? durableCheckpoint : nil, operations: operations)
    }

    /// Names of the replica clients that gave one, for presence; sorted once
    /// per change of who is named, not once per state frame.
    private(set) var names: [String] = []
    private var namedMembers: [UInt64: String] = [:]

    /// Records `connection`'s display name (nil when it leaves or has none).
    func setName(_ name: String?, for connection: UInt64) {
        guard namedMembers[connection] != name else { return }
        namedMembers[connection] = name
        names = namedMembers.values.sorted()
    }
}

/// A connection on a board.
struct Member {
    /// Set once the client's `hello` was accepted: it is a replica client.
    var replica: ReplicaID?
    var name: String?
    var messages: RateLimiter
    var badFrames: RateLimiter
}
