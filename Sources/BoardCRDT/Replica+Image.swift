/// A replica written out whole: every field that decides what it does with
/// the next operation (clock, per-replica Lamport times, the out-of-order
/// buffer, retired replicas), not only the state it shows. Two replicas
/// restored from one image and fed the same operations in the same order
/// stay equal field for field; a checkpoint plus a log would not (a
/// restored replica would have forgotten, for instance, the last Lamport
/// time of a replica whose operations were all folded). Cluster hubs share
/// a board's order through such images (docs/CLUSTER.md).
public struct ReplicaImage<Kind: BoardKind>: Codable, Sendable {
    public var id: ReplicaID
    public var clock: UInt64
    public var checkpoint: Checkpoint<Kind>
    public var log: [Operation<Kind.Change>]
    public var versions: VersionVector
    public var pending: [Operation<Kind.Change>]
    public var lastLamport: [ReplicaID: UInt64]
    public var retired: [ReplicaID]
}

extension Replica {
    /// This replica, whole (see `ReplicaImage`).
    public var image: ReplicaImage<Kind> {
        let buffered = pending.values.flatMap(\.values).sorted { ($0.id.replica, $0.id.seq) < ($1.id.replica, $1.id.seq) }
        return ReplicaImage(id: id, clock: clock, checkpoint: checkpoint, log: log, versions: versions, pending: buffered,
                            lastLamport: lastLamport, retired: retired.sorted())
    }

    /// Restores a replica from `image`, replaying its log to rebuild state and
    /// outcomes. Returns nil for an image that cannot have been written by a
    /// replica (a log out of stamp order, versions behind the log): a store
    /// holding one is corrupt, and the caller says so.
    public init?(image: ReplicaImage<Kind>, limits: ReplicaLimits) {
        for (earlier, later) in zip(image.log, image.log.dropFirst()) where !(earlier.stamp < later.stamp) { return nil }
        for op in image.log where image.versions[op.id.replica] < op.id.seq { return nil }
        if let first = image.log.first, !(image.checkpoint.frontier < first.stamp) { return nil }
        self.init(id: image.id, checkpoint: image.checkpoint, limits: limits)
        clock = image.clock
        log = image.log
        versions = image.versions
        lastLamport = image.lastLamport
        retired = Set(image.retired)
        for op in image.pending {
            guard op.id.seq > versions[op.id.replica] + 1 else { return nil }
            pending[op.id.replica, default: [:]][op.id.seq] = op
        }
        pendingCount = image.pending.count
        replay()
    }
}
