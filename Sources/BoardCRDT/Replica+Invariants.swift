/// Consistency checks the tests run after every step, in the manner of
/// swift-collections' `_checkInvariants()`. They return what is wrong rather
/// than trap, so a fuzzer can print the seed that broke them.
extension Replica {
    /// Every broken engine invariant, empty when all hold.
    func engineViolations() -> [String] {
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
                if op.id.seq != seq || op.id.replica != replica { problems.append("pending operation \(op.id) filed under \(replica):\(seq)") }
                if versions.covers(op.id) { problems.append("pending operation \(op.id) is already integrated") }
            }
            if retired.contains(replica) { problems.append("retired replica \(replica) still has pending operations") }
        }
        if retired.contains(id) { problems.append("this replica's own id \(id) is retired") }
        var replayed = checkpoint.state
        var replayedOutcomes: [Outcome<Kind.Refusal>] = []
        for op in log { replayedOutcomes.append(Kind.apply(op.change, id: op.id, to: &replayed)) }
        if replayed != state { problems.append("state differs from a replay of the checkpoint and log") }
        if replayedOutcomes != outcomes { problems.append("outcomes differ from a replay of the checkpoint and log") }
        return problems
    }
}

extension LetterBoard.State {
    /// B2: 0 to 6 distinct letters A-Z, numbered 1...n by their place.
    func boardViolations() -> [String] {
        var problems: [String] = []
        if selections.count > LetterBoard.capacity { problems.append("\(selections.count) letters selected, more than 6") }
        var seen: UInt32 = 0
        for (index, selection) in selections.enumerated() {
            let letter = selection.letter
            if letter.index >= 26 {
                problems.append("tile \(letter.index) is not A-Z")
                continue
            }
            if seen & (1 << letter.index) != 0 { problems.append("\(letter) is selected twice: \(order)") }
            seen |= 1 << letter.index
            for other in selections[..<index] where other.selectedBy == selection.selectedBy {
                problems.append("\(other.letter) and \(letter) were selected by the same operation")
            }
        }
        // Numbers are places: 1...n with no gap, by construction of an array;
        // checked through the public accessor the hub uses.
        if let last = selections.last, place(of: last.letter) != selections.count {
            problems.append("\(last.letter) is not numbered \(selections.count)")
        }
        return problems
    }
}

extension Replica where Kind == LetterBoard {
    /// All invariants of the engine and of the letter board; empty when all hold.
    func checkInvariants() -> [String] {
        engineViolations() + state.boardViolations() + checkpoint.state.boardViolations()
    }
}
