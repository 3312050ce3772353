/// Consistency checks the tests run after every step, in the manner of
/// swift-collections' `_checkInvariants()`. They return what is wrong rather
/// than trap, so a fuzzer can print the seed that broke them.
extension Replica {
    /// Every broken engine invariant, empty when all hold.
    public func engineViolations() -> [String] {
        var problems: [String] = []
        if outcomes.count != log.count {
            problems.append("outcomes has \(outcomes.count) entries for \(log.count) operations")
        }
        for (earlier, later) in zip(log, log.dropFirst()) where !(earlier.stamp < later.stamp) {
            problems.append("log out of stamp order: \(earlier.stamp) before \(later.stamp)")
        }
        for op in log {
            if !(checkpoint.frontier < op.stamp) {
                problems.append("operation \(op.id) at \(op.stamp) is not after the frontier \(checkpoint.frontier)")
            }
            if !versions.covers(op.id) { problems.append("operation \(op.id) is in the log but not in versions") }
            if checkpoint.versions.covers(op.id) { problems.append("operation \(op.id) is both in the log and in the checkpoint") }
            if op.lamport > clock { problems.append("clock \(clock) is behind operation \(op.id) at \(op.lamport)") }
        }
        if !versions.dominates(checkpoint.versions) { problems.append("versions do not cover the checkpoint") }
        if clock < checkpoint.frontier.lamport { problems.append("clock \(clock) is behind the frontier \(checkpoint.frontier)") }
        let buffered = pending.values.reduce(0) { $0 + $1.count }
        if buffered != pendingCount { problems.append("pendingCount \(pendingCount) but \(buffered) operations buffered") }
        if pendingCount > limits.maxPending { problems.append("pending buffer over its limit") }
        for (replica, ops) in pending {
            if ops.isEmpty { problems.append("empty pending entry for \(replica)") }
            for (seq, op) in ops {
                if op.id.seq != seq || op.id.replica != replica {
                    problems.append("pending operation \(op.id) filed under \(replica):\(seq)")
                }
                if versions.covers(op.id) { problems.append("pending operation \(op.id) is already integrated") }
            }
            if retired.contains(replica) { problems.append("retired replica \(replica) still has pending operations") }
        }
        if retired.contains(id) { problems.append("this replica's own id \(id) is retired") }
        var replayed = checkpoint.state
        var replayedOutcomes: [Outcome<Kind.Refusal>] = []
        for op in log { replayedOutcomes.append(Kind.apply(op, to: &replayed)) }
        if replayed != state { problems.append("state differs from a replay of the checkpoint and log") }
        if replayedOutcomes != outcomes { problems.append("outcomes differ from a replay of the checkpoint and log") }
        return problems
    }
}

extension Replica {
    /// All invariants of the engine and of the board's kind; empty when all hold.
    public func checkInvariants() -> [String] {
        engineViolations() + Kind.violations(of: state) + Kind.violations(of: checkpoint.state)
    }
}
