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
    var members: [UInt64: Member] = [:]
    /// The members that said `hello` (replica clients), kept apart so that
    /// relaying costs nothing on boards of thin clients.
    var replicaMembers: Set<UInt64> = []
    /// Records handed to the store and not yet back.
    var recordsInFlight = 0
    /// The state frame needs sending (change, join or leave).
    var needsPublish = false
    var emptySince: UInt64?
    /// The checkpoint frontier last sent to the store.
    var storedFrontier: Stamp

    init(name: String, hubReplica: ReplicaID, stored: StoredBoard?, keptOperations: Int) {
        self.name = name
        let limits = ReplicaLimits(keptOperations: keptOperations)
        var replica = Replica<LetterBoard>(id: hubReplica, checkpoint: stored?.checkpoint ?? .empty, limits: limits)
        if let operations = stored?.operations {
            replica.receive(operations.sorted { $0.stamp < $1.stamp })
        }
        self.replica = replica
        version = stored?.version ?? 0
        durableVersion = version
        durableOrder = replica.state.order
        storedFrontier = replica.checkpoint.frontier
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
    /// Set once the client said `hello`: it is a replica client.
    var replica: ReplicaID?
    var name: String?
    var messages: RateLimiter
    var badFrames: RateLimiter
}
