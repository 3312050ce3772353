/// What one replica sends another so it catches up: the sender's checkpoint
/// when the receiver is behind it, and the operations the receiver lacks.
public struct Delta<Kind: BoardKind>: Equatable, Codable, Sendable {
    public var checkpoint: Checkpoint<Kind>?
    public var operations: [Operation<Kind.Change>]

    public init(checkpoint: Checkpoint<Kind>? = nil, operations: [Operation<Kind.Change>] = []) {
        self.checkpoint = checkpoint
        self.operations = operations
    }
}

/// What adopting a checkpoint did.
public struct AdoptReport<Change: Equatable & Codable & Sendable>: Sendable {
    /// False when the checkpoint was not newer than the replica's own.
    public var adopted = false
    /// This replica's own operations that had missed the checkpoint and were
    /// recorded again, as new operations under a new replica id.
    public var rebased: [Operation<Change>] = []
    /// Why the checkpoint was not adopted, when it was refused (`apply`
    /// reports it here rather than dropping it; the caller must act).
    public var refusal: CheckpointRefusal?
    /// This replica's own operations still in the log whose outcome the new
    /// checkpoint changed (a make re-timed after it, now refused): the
    /// caller tells the person, as for `MergeReport.changedOutcomes`;
    /// `Replica.outcome(of:)` gives the new outcome.
    public var changedOwn: [OperationID] = []
}

/// Why a checkpoint cannot be adopted.
public enum CheckpointRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// The checkpoint leaves out operations this replica's own checkpoint
    /// holds: it comes from another line of compactions.
    case divergent

    public var description: String {
        "this checkpoint lacks operations the board's own checkpoint holds; it was made from a different history"
    }
}

extension Replica {
    /// Folds all but the newest `limits.keptOperations` operations into the
    /// checkpoint once the log has grown to twice that, so compaction costs
    /// O(1) amortised per operation.
    mutating func compactIfNeeded() {
        guard limits.compacts, log.count >= 2 * limits.keptOperations else { return }
        compact(keeping: limits.keptOperations)
    }

    /// Folds the log's prefix into the checkpoint, keeping the newest `kept`
    /// operations. Operations stamped at or before the new frontier that
    /// arrive later are refused as stale (their senders rebase).
    public mutating func compact(keeping kept: Int = 0) {
        let cut = log.count - max(0, kept)
        guard cut > 0 else { return }
        var folded = checkpoint
        // A replica's operations are in the log in sequence order, so its
        // entry is the seq of its last folded operation; writing once per run
        // of one replica keeps hashing out of the loop.
        var run: OperationID?
        for op in log[..<cut] {
            _ = Kind.apply(op, to: &folded.state)
            if let current = run, current.replica != op.id.replica { folded.versions[current.replica] = current.seq }
            run = op.id
        }
        if let last = run { folded.versions[last.replica] = last.seq }
        folded.frontier = log[cut - 1].stamp
        checkpoint = folded
        log.removeFirst(cut)
        outcomes.removeFirst(cut)
        // Out-of-order operations now behind the frontier can never integrate
        // at their place. A sealing hub re-stamps them when their gap fills
        // (after the checkpoint), so it keeps them and their replica.
        if !limits.sealsOrder {
            let behind = pending.filter { $0.value.values.contains { $0.stamp <= folded.frontier } }
            for replica in behind.keys { retire(replica) }
        }
    }

    /// What a replica holding `remote` (and a checkpoint at `remoteFrontier`)
    /// lacks. The checkpoint is included when the remote's is older, so client
    /// replicas follow the hub's compactions and stay bounded too.
    public func delta(for remote: VersionVector, remoteFrontier: Stamp) -> Delta<Kind> {
        let includeCheckpoint = remoteFrontier < checkpoint.frontier
        let known = includeCheckpoint ? mergedCover(remote, checkpoint.versions) : remote
        return Delta(
            checkpoint: includeCheckpoint ? checkpoint : nil,
            operations: log.filter { !known.covers($0.id) }
        )
    }

    func mergedCover(_ a: VersionVector, _ b: VersionVector) -> VersionVector {
        var merged = a
        for (replica, seq) in b.entries where seq > merged[replica] { merged[replica] = seq }
        return merged
    }

    /// Catches up from another replica's delta: adopts its checkpoint when
    /// newer, then integrates its operations.
    @discardableResult
    public mutating func apply(
        _ delta: Delta<Kind>,
        freshID: () -> ReplicaID
    ) -> (adopt: AdoptReport<Kind.Change>, merge: MergeReport<Kind>) {
        var adoptReport = AdoptReport<Kind.Change>()
        var mergeReport = MergeReport<Kind>()
        if delta.checkpoint != nil {
            // Own operations the hub re-stamped first: the checkpoint is
            // judged against their final stamps, not as late ones to redo.
            let own = delta.operations.filter { $0.id.replica == id }
            if !own.isEmpty { mergeReport = receive(own) }
        }
        if let checkpoint = delta.checkpoint {
            do {
                adoptReport = try adopt(checkpoint, freshID: freshID)
            } catch {
                // Reported, not dropped: the operations may still merge, and
                // the caller decides (a client starts afresh from the hub).
                adoptReport.refusal = error
            }
        }
        let merged = receive(delta.operations)
        mergeReport.integratedOperations += merged.integratedOperations
        mergeReport.duplicates += merged.duplicates
        mergeReport.buffered += merged.buffered
        mergeReport.refused += merged.refused
        mergeReport.changedOutcomes += merged.changedOutcomes
        mergeReport.restamped += merged.restamped
        mergeReport.changedState = mergeReport.changedState || merged.changedState
        return (adoptReport, mergeReport)
    }

    /// Whether `newer` continues this replica's line of checkpoints: it holds
    /// every operation the current checkpoint holds, except those of
    /// replicas it forgot, which must all lie at or before its horizon.
    func isContinued(by newer: Checkpoint<Kind>) -> Bool {
        checkpoint.versions.entries.allSatisfy { replica, seq in
            if newer.versions[replica] >= seq { return true }
            guard newer.versions[replica] == 0, newer.forgetHorizon != .origin else { return false }
            // What this replica last saw of it: its last integrated operation,
            // or (known only through the checkpoint) the checkpoint's frontier.
            let last = lastLamport[replica] ?? checkpoint.frontier.lamport
            return last <= newer.forgetHorizon.lamport
        }
    }

    /// Replaces this replica's checkpoint with a newer one.
    ///
    /// Operations the new checkpoint holds leave the log. An operation stamped
    /// at or before its frontier that it does not hold was made by a replica
    /// that was away across the compaction: that replica's operations after
    /// the checkpoint are dropped here, exactly as `receive` refuses them, so
    /// every replica drops the same ones. If they are this replica's own, it
    /// takes a fresh id and records their changes again as new operations:
    /// the intents survive, stamped after the checkpoint (docs/SEMANTICS.md).
    /// A client of a sealing hub (`ReplicaLimits.hubSealsOrder`) instead
    /// keeps its own and re-times them after the frontier (§7c).
    @discardableResult
    public mutating func adopt(_ newCheckpoint: Checkpoint<Kind>,
                               freshID: () -> ReplicaID) throws(CheckpointRefusal) -> AdoptReport<Kind.Change> {
        var report = AdoptReport<Kind.Change>()
        guard newCheckpoint.frontier > checkpoint.frontier else { return report }
        guard isContinued(by: newCheckpoint) else { throw .divergent }

        let own = id
        let folded = { (op: Op) -> Bool in newCheckpoint.folds(op, of: own) }
        var late: Set<ReplicaID> = []
        for op in log where !folded(op) && op.stamp <= newCheckpoint.frontier {
            late.insert(op.id.replica)
        }
        // A sealing hub never refuses our operations as stale: it re-stamps
        // them after what it integrated. Ours the checkpoint passed are
        // therefore not late: they are re-timed after its frontier and keep
        // their ids, and the hub's versions replace them when they come back.
        let retimesOwn = limits.hubSealsOrder && late.remove(id) != nil
        var ownLate: [(change: Kind.Change, author: String)] = []
        var kept: [Op] = []
        for op in log where !folded(op) {
            if late.contains(op.id.replica) {
                if op.id.replica == id { ownLate.append((op.change, op.author)) }
            } else {
                kept.append(op)
            }
        }
        if retimesOwn {
            var next = newCheckpoint.frontier.lamport
            var retimed: [UInt64: UInt64] = [:]
            for op in kept.filter({ $0.id.replica == id }).sorted(by: { $0.id.seq < $1.id.seq }) {
                let lamport = max(op.lamport, next + 1)
                if lamport != op.lamport { retimed[op.id.seq] = lamport }
                next = lamport
            }
            for index in kept.indices where kept[index].id.replica == id {
                if let lamport = retimed[kept[index].id.seq] { kept[index].lamport = lamport }
            }
            kept.sort { $0.stamp < $1.stamp }
            clock = max(clock, next)
            lastLamport[id] = max(lastLamport[id] ?? 0, next)
        }
        var ownBefore: [OperationID: Outcome<Kind.Refusal>] = [:]
        for (op, outcome) in zip(log, outcomes) where op.id.replica == id { ownBefore[op.id] = outcome }
        checkpoint = newCheckpoint
        log = kept
        outcomes = Array(repeating: .unchanged, count: kept.count)
        var newVersions = newCheckpoint.versions
        for (replica, seq) in versions.entries where !late.contains(replica) && seq > newVersions[replica] {
            newVersions[replica] = seq
        }
        versions = newVersions
        for replica in late { retire(replica) }
        for (replica, ops) in pending {
            let remaining = ops.filter { !versions.covers($0.value.id) }
            pendingCount -= ops.count - remaining.count
            pending[replica] = remaining.isEmpty ? nil : remaining
        }
        clock = max(clock, newCheckpoint.frontier.lamport)
        replay()
        report.adopted = true
        let ready = takeReadyPending()
        if !ready.isEmpty { receive(ready) }
        for (op, outcome) in zip(log, outcomes) where op.id.replica == id {
            if let before = ownBefore[op.id], before != outcome { report.changedOwn.append(op.id) }
        }

        if late.contains(id) {
            id = freshID()
            for late in ownLate { report.rebased.append(record(late.change, by: late.author)) }
        }
        return report
    }
}
