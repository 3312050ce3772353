/// One copy of a board: the hub holds one, every client replica holds one.
///
/// Construction (docs/SEMANTICS.md): every operation is stamped with a Lamport
/// time and its replica id; the board's state is what replaying all known
/// operations in stamp order through the kind's sequential rules gives. Two
/// replicas holding the same set of operations therefore hold the same state,
/// whatever order the operations arrived in and however often (C1). Late
/// operations are merged into the log at their places in one pass and the
/// log is replayed from the first of them: undo/redo by replay. No
/// sequencer is involved in ordering.
///
/// Memory is bounded by compaction: the prefix of the log becomes a
/// `Checkpoint` (see `Replica+Compaction.swift`).
public struct Replica<Kind: BoardKind>: Sendable {
    public typealias Op = Operation<Kind.Change>

    /// This replica's id; changes only when it rebases after a compaction it missed.
    public internal(set) var id: ReplicaID
    /// Lamport clock: greater than every stamp this replica has seen.
    public internal(set) var clock: UInt64 = 0
    public internal(set) var checkpoint: Checkpoint<Kind>
    /// Operations after the checkpoint, in stamp order.
    public internal(set) var log: [Op] = []
    /// What each operation of `log` did, same indexes.
    public internal(set) var outcomes: [Outcome<Kind.Refusal>] = []
    /// The operations integrated so far (checkpoint and log).
    public internal(set) var versions: VersionVector
    /// The current shared state: checkpoint state with the log replayed on it.
    public internal(set) var state: Kind.State
    public var limits: ReplicaLimits

    /// Operations that arrived before an earlier one of the same replica.
    var pending: [ReplicaID: [UInt64: Op]] = [:]
    var pendingCount = 0
    /// Lamport time of the last integrated operation of each replica, to
    /// refuse a replica whose clock runs backwards.
    var lastLamport: [ReplicaID: UInt64] = [:]
    /// Replicas whose history after the checkpoint was stale (see `adopt`).
    var retired: Set<ReplicaID> = []

    public init(id: ReplicaID, checkpoint: Checkpoint<Kind> = .empty, limits: ReplicaLimits = ReplicaLimits()) {
        self.id = id
        self.checkpoint = checkpoint
        self.versions = checkpoint.versions
        self.state = checkpoint.state
        self.clock = checkpoint.frontier.lamport
        self.limits = limits
    }

    /// The next sequence number this replica will use.
    public var nextSeq: UInt64 { versions[id] + 1 }

    /// Checks `intent` against the current state and, if it changes
    /// something, records and applies it at once (local-first). Returns the
    /// operation to send to the others, or `nil` for an idempotent no-op (B9).
    /// `author` is who acts (the kind's rules may depend on it).
    @discardableResult
    public mutating func perform(_ intent: Kind.Intent, by author: String = "") throws(Kind.Refusal) -> Op? {
        guard let change = try Kind.prepare(intent, by: author, in: state) else { return nil }
        return record(change, by: author)
    }

    /// Stamps `change` as this replica's newest operation and applies it.
    /// Its stamp is after every known one, so it goes at the end of the log.
    @discardableResult
    public mutating func record(_ change: Kind.Change, by author: String = "") -> Op {
        clock += 1
        let op = Op(id: OperationID(replica: id, seq: nextSeq), lamport: clock, author: author, change: change)
        versions[id] = op.id.seq
        lastLamport[id] = op.lamport
        log.append(op)
        outcomes.append(Kind.apply(op, to: &state))
        compactIfNeeded()
        return op
    }

    /// What replaying `id` did, if it is still in the log.
    public func outcome(of id: OperationID) -> Outcome<Kind.Refusal>? {
        guard let index = logIndex(of: id) else { return nil }
        return outcomes[index]
    }

    func logIndex(of id: OperationID) -> Int? {
        // Recent operations are at the end; the log is bounded by compaction.
        log.lastIndex { $0.id == id }
    }

    /// Recomputes `state` and `outcomes` from the checkpoint. Returns the
    /// outcomes of this replica's own operations that changed, so a refusal
    /// that only merging revealed (C4) reaches the person who made the pick.
    @discardableResult
    mutating func replay() -> [(OperationID, Outcome<Kind.Refusal>)] {
        var before: [OperationID: Outcome<Kind.Refusal>] = [:]
        for (op, outcome) in zip(log, outcomes) where op.id.replica == id {
            before[op.id] = outcome
        }
        var fresh = checkpoint.state
        var newOutcomes: [Outcome<Kind.Refusal>] = []
        newOutcomes.reserveCapacity(log.count)
        var changed: [(OperationID, Outcome<Kind.Refusal>)] = []
        for op in log {
            let outcome = Kind.apply(op, to: &fresh)
            newOutcomes.append(outcome)
            if op.id.replica == id, let old = before[op.id], old != outcome {
                changed.append((op.id, outcome))
            }
        }
        state = fresh
        outcomes = newOutcomes
        return changed
    }
}

/// Bounds that keep a replica's memory flat whatever its peers send.
public struct ReplicaLimits: Sendable, Equatable {
    /// The log is compacted to `keptOperations` once it holds twice as many.
    public var keptOperations: Int
    /// Out-of-order operations held while waiting for an earlier one.
    public var maxPending: Int
    /// Automatic compaction on; the hub keeps it on, a client replica leaves
    /// compaction to the hub and adopts its checkpoints.
    public var compacts: Bool
    /// An acknowledged operation is final (docs/SEMANTICS.md, "An ack is
    /// final"): the hub sets this, and an operation that would land before
    /// operations it already integrated is re-stamped after them instead
    /// (its change is applied to the current state, where the kind's rules
    /// accept or refuse it). Only its author has seen it before, so no other
    /// replica ever orders it differently; the author moves its copy when
    /// the hub's version comes back (`MergeReport.restamped`).
    public var sealsOrder: Bool
    /// This replica is a client of a hub that seals its order: its own
    /// operations a newer checkpoint passed before the hub integrated them
    /// are re-timed after the checkpoint, never rebased under a new id (the
    /// hub re-stamps them; rebasing would apply them twice).
    public var hubSealsOrder: Bool

    public init(keptOperations: Int = 1024, maxPending: Int = 4096, compacts: Bool = true, sealsOrder: Bool = false,
                hubSealsOrder: Bool = false) {
        self.keptOperations = max(1, keptOperations)
        self.maxPending = max(0, maxPending)
        self.compacts = compacts
        self.sealsOrder = sealsOrder
        self.hubSealsOrder = hubSealsOrder
    }
}
