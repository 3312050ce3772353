/// Why a received operation was not integrated. None of these change the
/// replica's state; each says what the sender should do.
public enum MergeRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// Stamped at or before the checkpoint, and not part of it: its sender
    /// was away across a compaction and must adopt the checkpoint and rebase.
    case stale(OperationID, frontier: Stamp)
    /// Sequence number or Lamport time 0 or beyond `Replica.maxLamport`.
    case malformed(OperationID, reason: String)
    /// The replica's clock ran backwards between two of its operations.
    case clockWentBack(OperationID)
    /// Too many out-of-order operations are waiting; this one was dropped
    /// and will come again with the next sync.
    case pendingFull(OperationID)

    public var description: String {
        switch self {
        case let .stale(id, frontier):
            "operation \(id) predates the board's checkpoint at \(frontier); fetch the checkpoint and send it again as a new operation"
        case let .malformed(id, reason): "operation \(id) is malformed: \(reason)"
        case let .clockWentBack(id): "operation \(id) has an older Lamport time than its replica's previous operation"
        case let .pendingFull(id): "operation \(id) arrived too far ahead of its predecessors; send the earlier ones first"
        }
    }
}

/// What a merge did.
public struct MergeReport<Kind: BoardKind>: Sendable {
    public typealias Refusal = Kind.Refusal
    /// Operations newly integrated, in the order they were integrated: those
    /// of this call and buffered ones an earlier gap held back until now.
    public var integratedOperations: [Operation<Kind.Change>] = []
    /// The ids of `integratedOperations`.
    public var integrated: [OperationID] { integratedOperations.map(\.id) }
    /// Already known: ignored (C1, duplicate delivery).
    public var duplicates = 0
    /// Held until an earlier operation of the same replica arrives.
    public var buffered = 0
    public var refused: [MergeRefusal] = []
    /// This replica's own operations whose outcome changed because of the
    /// merge, for instance a select refused because concurrent ones filled the board (C4).
    public var changedOutcomes: [(OperationID, Outcome<Refusal>)] = []

    public var changedState: Bool = false

    /// Operations whose stamp changed. On the hub (`ReplicaLimits.sealsOrder`):
    /// operations that would have landed before integrated ones and were
    /// re-stamped after them. On their author: its own operations whose
    /// hub version came back with that new stamp and were moved there.
    public var restamped: [OperationID] = []
}

extension Replica {
    /// Lamport times above this are refused so the clock can never overflow.
    public static var maxLamport: UInt64 { UInt64.max >> 2 }

    /// Integrates operations from another replica, in any order, with
    /// duplicates. Never traps on any input.
    @discardableResult
    public mutating func receive(_ operations: [Op]) -> MergeReport<Kind> {
        var report = MergeReport<Kind>()
        let stateBefore = state
        var late: [Op] = []
        var moved: [OperationID: Outcome<Kind.Refusal>] = [:]
        var earliestMoved = Int.max
        for op in operations {
            // Our own operations coming back re-stamped: only on a client
            // (the hub never takes a version of its own operations from anyone).
            if !limits.sealsOrder, op.id.replica == id, op.id.seq <= versions[id],
               let waiting = late.firstIndex(where: { $0.id == op.id }) {
                // Moved earlier in this batch (it followed a re-stamped one):
                // the hub's own version wins.
                if late[waiting].stamp != op.stamp {
                    late[waiting] = op
                    retimeOwn(after: op, late: &late, moved: &moved, earliest: &earliestMoved)
                }
                continue
            }
            if !limits.sealsOrder, op.id.replica == id, op.id.seq <= versions[id], let index = logIndex(of: op.id),
               log[index].stamp != op.stamp {
                // The hub re-stamped one of ours after operations it had
                // acknowledged: take its version (only we had seen ours).
                moved[op.id] = outcomes[index]
                earliestMoved = min(earliestMoved, index)
                log.remove(at: index)
                outcomes.remove(at: index)
                lastLamport[id] = max(lastLamport[id] ?? 0, op.lamport)
                clock = max(clock, op.lamport)
                report.restamped.append(op.id)
                late.append(op)
                retimeOwn(after: op, late: &late, moved: &moved, earliest: &earliestMoved)
                continue
            }
            receiveOne(op, report: &report, late: &late)
        }
        if !late.isEmpty {
            report.changedOutcomes = mergeLate(late, from: earliestMoved, outcomesBefore: moved)
        }
        compactIfNeeded()
        report.changedState = state != stateBefore
        return report
    }

    /// After the hub's version of our own `op` came back with a new stamp:
    /// our later operations follow it. A replica's Lamport times grow with
    /// its sequence numbers, at the hub too, so each later one takes at
    /// least the previous one's time + 1; the hub re-stamps those it has not
    /// integrated the same way or later, and its versions replace these when
    /// they come back. Those moved leave the log for `late`.
    private mutating func retimeOwn(after op: Op, late: inout [Op], moved: inout [OperationID: Outcome<Kind.Refusal>],
                                    earliest: inout Int) {
        var next = op.lamport
        var laterOwn: [(seq: UInt64, lamport: UInt64)] = log.filter { $0.id.replica == id && $0.id.seq > op.id.seq }
            .map { ($0.id.seq, $0.lamport) }
        laterOwn += late.filter { $0.id.replica == id && $0.id.seq > op.id.seq }.map { ($0.id.seq, $0.lamport) }
        var retimed: [UInt64: UInt64] = [:]
        for entry in laterOwn.sorted(by: { $0.seq < $1.seq }) {
            let lamport = max(entry.lamport, next + 1)
            if lamport != entry.lamport { retimed[entry.seq] = lamport }
            next = lamport
        }
        clock = max(clock, next)
        lastLamport[id] = max(lastLamport[id] ?? 0, next)
        guard !retimed.isEmpty else { return }
        for index in late.indices where late[index].id.replica == id {
            if let lamport = retimed.removeValue(forKey: late[index].id.seq) { late[index].lamport = lamport }
        }
        var index = log.count - 1
        while index >= 0, !retimed.isEmpty {
            if log[index].id.replica == id, let lamport = retimed.removeValue(forKey: log[index].id.seq) {
                var follower = log.remove(at: index)
                moved[follower.id] = outcomes.remove(at: index)
                earliest = min(earliest, index)
                follower.lamport = lamport
                late.append(follower)
            }
            index -= 1
        }
    }

    /// Integrates one operation; see `receive(_:)`.
    @discardableResult
    public mutating func receive(_ operation: Op) -> MergeReport<Kind> {
        receive([operation])
    }

    private mutating func receiveOne(_ op: Op, report: inout MergeReport<Kind>, late: inout [Op]) {
        let replica = op.id.replica
        guard op.id.seq > 0, op.id.seq <= Self.maxLamport, op.lamport > 0, op.lamport <= Self.maxLamport else {
            report.refused.append(.malformed(op.id, reason: "sequence numbers and Lamport times start at 1 and stay below 2^62"))
            return
        }
        let known = versions[replica]
        if op.id.seq <= known {
            report.duplicates += 1
            return
        }
        if !retired.isEmpty, retired.contains(replica) {
            report.refused.append(.stale(op.id, frontier: checkpoint.frontier))
            return
        }
        if op.id.seq > known + 1 {
            if pending[replica]?[op.id.seq] != nil {
                report.duplicates += 1
            } else if pendingCount >= limits.maxPending {
                report.refused.append(.pendingFull(op.id))
            } else {
                pending[replica, default: [:]][op.id.seq] = op
                pendingCount += 1
                report.buffered += 1
            }
            return
        }
        var next: Op? = op
        while let current = next {
            guard integrate(current, report: &report, late: &late) else { break }
            guard pendingCount > 0 else { break }
            // A copy buffered earlier may have become ready through a checkpoint.
            _ = takePending(replica, seq: current.id.seq)
            next = takePending(replica, seq: current.id.seq + 1)
        }
    }

    /// Removes and returns a buffered operation, dropping the replica's
    /// entry when it empties so the buffer holds nothing for idle replicas.
    mutating func takePending(_ replica: ReplicaID, seq: UInt64) -> Op? {
        guard let op = pending[replica]?.removeValue(forKey: seq) else { return nil }
        pendingCount -= 1
        if pending[replica]?.isEmpty == true { pending[replica] = nil }
        return op
    }

    /// Buffered operations whose predecessor is now integrated (a checkpoint
    /// can cover the gap they waited on), removed from the buffer.
    mutating func takeReadyPending() -> [Op] {
        var ready: [Op] = []
        for replica in Array(pending.keys) {
            if let op = takePending(replica, seq: versions[replica] + 1) { ready.append(op) }
        }
        return ready
    }

    /// Integrates the next operation of its replica. Returns false when the
    /// replica's history stops here. An operation stamped after the whole log
    /// is applied at once; one that belongs earlier joins `late`, merged into
    /// the log in one pass at the end of the batch (see `mergeLate`).
    private mutating func integrate(_ op: Op, report: inout MergeReport<Kind>, late: inout [Op]) -> Bool {
        let replica = op.id.replica
        var op = op
        if limits.sealsOrder, op.stamp <= (log.last?.stamp ?? checkpoint.frontier) || op.lamport <= (lastLamport[replica] ?? 0) {
            // An ack is final: nothing lands before what was integrated.
            op.lamport = max(clock, lastLamport[replica] ?? 0) + 1
            report.restamped.append(op.id)
        }
        if let last = lastLamport[replica], op.lamport <= last {
            report.refused.append(.clockWentBack(op.id))
            return false
        }
        if op.stamp <= checkpoint.frontier {
            report.refused.append(.stale(op.id, frontier: checkpoint.frontier))
            retire(replica)
            return false
        }
        versions[replica] = op.id.seq
        lastLamport[replica] = op.lamport
        clock = max(clock, op.lamport)
        report.integratedOperations.append(op)
        if late.isEmpty, log.last.map({ $0.stamp < op.stamp }) ?? true {
            log.append(op)
            outcomes.append(Kind.apply(op, to: &state))
        } else {
            late.append(op)
        }
        return true
    }

    /// Undo/redo by replay, in one pass: sorts the late operations, merges
    /// them into the log from the first place one belongs, and replays from
    /// there. Inserting them one by one would cost O(log x late) moves; this
    /// is O(log + late x log(late)). Returns this replica's own operations
    /// whose outcome changed (C4: a pick refused because of concurrent ones).
    /// `earliest` is where an operation was taken out of the log (to move,
    /// see `receive`): replay starts there at the latest; `outcomesBefore`
    /// holds the moved operations' outcomes, so a change of theirs is told.
    mutating func mergeLate(_ late: [Op], from earliest: Int = .max,
                            outcomesBefore: [OperationID: Outcome<Kind.Refusal>] = [:]) -> [(OperationID, Outcome<Kind.Refusal>)] {
        let incoming = late.sorted { $0.stamp < $1.stamp }
        let start = min(insertionIndex(for: incoming[0].stamp), earliest)
        var merged: [Op] = []
        var previous: [Outcome<Kind.Refusal>?] = []
        merged.reserveCapacity(log.count - start + incoming.count)
        previous.reserveCapacity(merged.capacity)
        var old = start, new = 0
        while old < log.count || new < incoming.count {
            if new == incoming.count || (old < log.count && log[old].stamp < incoming[new].stamp) {
                merged.append(log[old])
                previous.append(outcomes[old])
                old += 1
            } else {
                merged.append(incoming[new])
                previous.append(outcomesBefore[incoming[new].id])
                new += 1
            }
        }
        // The state where the merged part begins: the unchanged prefix replayed.
        var fresh = checkpoint.state
        for op in log[..<start] { _ = Kind.apply(op, to: &fresh) }
        log.replaceSubrange(start..., with: merged)
        outcomes.removeSubrange(start...)
        var changed: [(OperationID, Outcome<Kind.Refusal>)] = []
        for (op, before) in zip(merged, previous) {
            let outcome = Kind.apply(op, to: &fresh)
            outcomes.append(outcome)
            if op.id.replica == id, let before, before != outcome { changed.append((op.id, outcome)) }
        }
        state = fresh
        return changed
    }

    /// A replica whose history crossed a checkpoint it was not part of: its
    /// later operations are refused until it comes back under a new id.
    mutating func retire(_ replica: ReplicaID) {
        retired.insert(replica)
        if let dropped = pending.removeValue(forKey: replica) { pendingCount -= dropped.count }
    }

    /// Binary search: the first index whose stamp is greater than `stamp`.
    func insertionIndex(for stamp: Stamp) -> Int {
        var low = 0, high = log.count
        while low < high {
            let mid = (low + high) / 2
            if log[mid].stamp < stamp { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
