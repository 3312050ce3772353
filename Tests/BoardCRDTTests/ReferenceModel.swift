import BoardCRDT

/// The sequential reference the fuzzer compares every replica with, written
/// apart from the engine: take every operation that is still alive, sort by
/// (Lamport time, replica id) and apply the docs/rules/letters.md rules to a plain array.
enum ReferenceModel {
    struct Result: Equatable {
        /// Letters in order with the operation that selected each.
        var selections: [(Letter, OperationID)]
        var versions: [ReplicaID: UInt64]
        var outcomes: [OperationID: Outcome<BoardRefusal>]

        static func == (a: Result, b: Result) -> Bool {
            a.selections.map(\.0) == b.selections.map(\.0) && a.selections.map(\.1) == b.selections.map(\.1)
                && a.versions == b.versions && a.outcomes == b.outcomes
        }
    }

    /// `made`: every operation any replica ever recorded (rebased ones
    /// included). `checkpoints`: every compaction's frontier and versions.
    ///
    /// An operation dies when a checkpoint it is not part of has a frontier
    /// at or after its replica's first operation outside that checkpoint:
    /// that replica was away across the compaction, and all its operations
    /// outside the checkpoint are dropped (their intents were rebased under a
    /// new id by their author, which `made` holds separately).
    static func run(made: [BoardOp], checkpoints: [(frontier: Stamp, versions: VersionVector)]) -> Result {
        var byReplica: [ReplicaID: [BoardOp]] = [:]
        for op in made { byReplica[op.id.replica, default: []].append(op) }
        var cutoff: [ReplicaID: UInt64] = [:]
        for (frontier, versions) in checkpoints.sorted(by: { $0.frontier < $1.frontier }) {
            for (replica, ops) in byReplica where cutoff[replica] == nil {
                let first = ops.filter { $0.id.seq > versions[replica] }.min { $0.id.seq < $1.id.seq }
                if let first, !(frontier < first.stamp) { cutoff[replica] = versions[replica] }
            }
        }
        var live: [BoardOp] = []
        var versions: [ReplicaID: UInt64] = [:]
        for (replica, ops) in byReplica {
            let limit = cutoff[replica] ?? UInt64.max
            let kept = ops.filter { $0.id.seq <= limit }
            live += kept
            if let top = kept.map(\.id.seq).max() { versions[replica] = top }
        }
        live.sort { ($0.lamport, $0.id.replica.rawValue) < ($1.lamport, $1.id.replica.rawValue) }

        var order: [(Letter, OperationID)] = []
        var outcomes: [OperationID: Outcome<BoardRefusal>] = [:]
        for op in live {
            let before = order.map(\.1)
            var refused = false
            switch op.change {
            case let .select(letter):
                if !order.contains(where: { $0.0 == letter }) {
                    if order.count >= 6 { refused = true } else { order.append((letter, op.id)) }
                }
            case let .deselect(letter):
                order.removeAll { $0.0 == letter }
            case let .move(letter, anchor, side, place):
                if let from = order.firstIndex(where: { $0.0 == letter }) {
                    let moving = order.remove(at: from)
                    if anchor != letter, let at = order.firstIndex(where: { $0.0 == anchor }) {
                        order.insert(moving, at: side == .after ? at + 1 : at)
                    } else {
                        order.insert(moving, at: Swift.min(Swift.max(place - 1, 0), order.count))
                    }
                }
            case let .reset(seen):
                order.removeAll { seen.contains($0.1) }
            }
            outcomes[op.id] = refused ? .refused(.boardFull) : (order.map(\.1) == before ? .unchanged : .applied)
        }
        return Result(selections: order, versions: versions, outcomes: outcomes)
    }
}
