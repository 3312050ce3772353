/// Bounded replica metadata. Every replica that ever made an operation has
/// an entry in the version vector; a long-lived board meets thousands (each
/// `watch` session, each client that rebased). The hub forgets the least
/// recently active ones once they are entirely folded into the checkpoint,
/// so a board's memory and its checkpoint stay bounded (docs/SEMANTICS.md,
/// "Forgetting replicas").
///
/// A forgotten replica id never makes another integrated operation: the hub
/// answers its `hello` with `unknown_replica` and the client starts again
/// under a fresh id. So a forgotten replica's operations are all at or
/// before `Checkpoint.forgetHorizon`, and a replica adopting that checkpoint
/// treats other replicas' operations there as folded, not as late.
extension Replica {
    /// Keeps the `limit` most recently active idle replicas and forgets the
    /// others. Never idle: this replica, those in `active` (connected now),
    /// and any replica with operations still in the log or the pending
    /// buffer. Returns how many were forgotten.
    @discardableResult
    public mutating func forgetReplicas(beyond limit: Int, keeping active: Set<ReplicaID>) -> Int {
        guard versions.entries.count > limit else { return 0 }
        var busy = active
        busy.insert(id)
        for op in log { busy.insert(op.id.replica) }
        for replica in pending.keys { busy.insert(replica) }
        let idle = versions.entries.keys.filter { !busy.contains($0) }
        guard idle.count > limit else { return 0 }
        let candidates = idle
            .map { (replica: $0, last: lastLamport[$0] ?? 0) }
            .sorted { ($0.last, $0.replica) < ($1.last, $1.replica) }
            .prefix(idle.count - max(0, limit))
        guard !candidates.isEmpty else { return 0 }
        for candidate in candidates {
            versions[candidate.replica] = 0
            checkpoint.versions[candidate.replica] = 0
            lastLamport[candidate.replica] = nil
            retired.remove(candidate.replica)
        }
        // Every operation of a replica with nothing in the log is folded, so
        // it lies at or before the frontier: the frontier is the horizon.
        // (Not the forgotten ones' last stamps: the horizon only grows with
        // the frontier, so a replica holding an older checkpoint can tell a
        // forgotten entry from a missing one, see `isContinued(by:)`.)
        checkpoint.forgetHorizon = checkpoint.frontier
        return candidates.count
    }

    /// Whether `replica` has an entry (it is neither new nor forgotten).
    public func knows(_ replica: ReplicaID) -> Bool { versions[replica] > 0 }
}
