@testable import BoardCRDT

/// The hub's side, shared by the inbox and connection topologies: what it
/// integrates and acks, its book, and the checks after every step and at
/// the end.
extension ConvergenceFuzz {
    /// The hub takes `ops` from client `index`, with compaction held back
    /// until each integrated operation's outcome is read (compaction runs
    /// at the end of `receive`; it runs just after instead).
    mutating func hubReceives(_ ops: [Op], from index: Int) throws(FuzzFailure) -> MergeReport<K> {
        let frontier = hub.checkpoint.frontier
        touched.insert(Self.hub)
        replicas[0].limits.compacts = false
        let report = replicas[0].receive(ops)
        note("\(replicas[index].id) sends \(stamps(ops)) -> integrated \(stamps(report.integratedOperations)) restamped " +
             "\(report.restamped) buffered \(report.buffered) duplicates \(report.duplicates)")
        replicas[0].limits.compacts = true
        if !report.refused.isEmpty { throw fail(["the hub refused honest operations of \(replicas[index].id): \(report.refused)"]) }
        if !report.changedOutcomes.isEmpty { throw fail(["the hub's own operations changed outcome: \(report.changedOutcomes)"]) }
        counts.bump("re-stamped by the hub", by: report.restamped.count)
        counts.bump("duplicates", by: report.duplicates)
        counts.bump("buffered", by: report.buffered)
        try integrated(report.integratedOperations, frontierBefore: frontier)
        return report
    }

    /// A thin client's intent, or the kind's `opening`, made on the hub
    /// itself; returns the operation, integrated and booked.
    mutating func hubIntent(_ intent: K.Intent, by name: String) throws(FuzzFailure) -> Op? {
        let frontier = hub.checkpoint.frontier
        replicas[0].limits.compacts = false
        let op = try perform(intent, by: name, at: Self.hub)
        replicas[0].limits.compacts = true
        if let op { try integrated([op], frontierBefore: frontier) } else { replicas[0].compactIfNeeded() }
        return op
    }

    /// Books what the hub integrated, in order: replays it on the mirror,
    /// checks it was prepared once, lets the kind book it; then compacts.
    mutating func integrated(_ ops: [Op], frontierBefore: Stamp) throws(FuzzFailure) {
        var problems: [String] = []
        for op in ops {
            if acked[op.id] != nil { problems.append("the hub integrated \(op.id) twice") }
            let before = mirror
            let outcome = K.apply(op, to: &mirror)
            if let onHub = hub.outcome(of: op.id) {
                if onHub != outcome {
                    problems.append("\(op.id) \(op.change) is \(onHub) on the hub, \(outcome) replayed in the order it was integrated")
                }
            } else {
                problems.append("the hub integrated \(op.id) but it is not in its log")
            }
            acked[op.id] = outcome
            hubStamp[op.id] = op.stamp
            integratedOrder.append(op.id)
            if case let .refused(refusal) = outcome { counts.bump("refused by the hub: \(refusal.code)") }
            problems += K.book(op, outcome: outcome, before: before, after: mirror, in: &ledger, counts: &counts)
            note("hub integrates \(op.id)@\(op.lamport) \(op.change) by \(op.author): \(outcome) \(K.describe(mirror))")
            if op.id.replica == hub.id { continue }
            // Applied once: each client operation is one prepared intent.
            guard let origin = prepared[op.id] else {
                problems.append("the hub integrated \(op.id), which no client prepared")
                continue
            }
            if origin.change != op.change || origin.author != op.author {
                problems.append("the hub integrated \(op.id) as \(op.change) by \(op.author), prepared as \(origin.change) by " +
                                "\(origin.author)")
            }
            if !integratedIntents.insert(origin.intent).inserted {
                problems.append("intent \(origin.intent) of client \(origin.client) (\(op.change)) was integrated twice, " +
                                "the second time as \(op.id)")
            }
        }
        replicas[0].compactIfNeeded()
        if !problems.isEmpty { throw fail(problems) }
        if hub.checkpoint.frontier != frontierBefore { note("hub compacts to \(hub.checkpoint.frontier), keeping \(hub.log.count)") }
    }

    /// What the hub sends a client that says hello or catches up: its
    /// checkpoint when the client's is older, and its whole log.
    func syncDelta(for index: Int) -> Delta<K> {
        Delta(checkpoint: replicas[index].checkpoint.frontier < hub.checkpoint.frontier ? hub.checkpoint : nil, operations: hub.log)
    }

    // MARK: A client takes what the hub sent

    mutating func relayed(_ ops: [Op], to index: Int) throws(FuzzFailure) {
        touched.insert(index)
        let report = replicas[index].receive(ops)
        note("relay to \(replicas[index].id): \(stamps(ops)) moved \(report.restamped) changed " +
             "\(report.changedOutcomes.map { "\($0.0) \($0.1)" }) -> \(K.describe(replicas[index].state))")
        try merged(report, at: index)
    }

    /// A checkpoint (`delta` holds only it) or a `sync`, applied as
    /// `ReplicaSession` does: never refused, never a rebase.
    mutating func adopt(_ delta: Delta<K>, at index: Int) throws(FuzzFailure) {
        touched.insert(index)
        let before = replicas[index]
        let id = before.id
        var rebasedTo: ReplicaID?
        let (adopt, merge) = replicas[index].apply(delta, freshID: {
            rebasedTo = ReplicaID(1_000_000 + UInt64(index))
            return rebasedTo!
        })
        var retimed = 0
        if adopt.adopted {
            counts.bump("checkpoints adopted by clients")
            var stampOf: [OperationID: UInt64] = [:]
            for op in before.log where op.id.replica == id { stampOf[op.id] = op.lamport }
            for op in replicas[index].log where op.id.replica == id {
                if let old = stampOf[op.id], old != op.lamport, !merge.restamped.contains(op.id) { retimed += 1 }
            }
            counts.bump("own re-timed on adopt", by: retimed)
        }
        note("\(id) takes \(delta.checkpoint.map { "checkpoint \($0.frontier)" } ?? "no checkpoint") adopted \(adopt.adopted), "
            + "\(delta.operations.count) operations, re-timed \(retimed) own, moved \(merge.restamped) -> " +
              "\(K.describe(replicas[index].state))")
        if let refusal = adopt.refusal {
            throw fail(["\(id) could not adopt the hub's checkpoint \(delta.checkpoint?.frontier as Any): \(refusal)"])
        }
        if rebasedTo != nil || !adopt.rebased.isEmpty || replicas[index].id != id {
            // A sealing hub re-stamps late operations; rebasing them under a
            // new id would apply their changes twice.
            throw fail(["\(id) rebased to \(replicas[index].id) on the hub's checkpoint \(delta.checkpoint?.frontier as Any): " +
                        "\(adopt.rebased.map { "\($0.id) \($0.change)" })"])
        }
        try merged(merge, at: index)
    }

    mutating func merged(_ report: MergeReport<K>, at index: Int) throws(FuzzFailure) {
        let client = replicas[index]
        if !report.refused.isEmpty { throw fail(["\(client.id) refused the hub's operations: \(report.refused)"]) }
        counts.bump("moved back on their author", by: report.restamped.count)
        for (id, outcome) in report.changedOutcomes {
            if id.replica != client.id { throw fail(["\(client.id) reports a changed outcome of \(id), not its own"]) }
            if let change = client.log.first(where: { $0.id == id })?.change { K.tookBack(change, now: outcome, counts: &counts) }
        }
    }

    // MARK: Checks

    mutating func checkHub() throws(FuzzFailure) {
        var problems: [String] = []
        defer { touched = [] }
        for index in touched {
            let replica = replicas[index]
            problems += (replica.checkInvariants() + K.replicaProblems(replica)).map { "\(replica.id): \($0)" }
        }
        // The hub is checked every step, touched or not (a step that changed
        // it without saying so would otherwise go unchecked).
        do {
            // K14: an ack is final (while the operation is in the log;
            // compaction folds it in the same order).
            for (op, outcome) in zip(hub.log, hub.outcomes) {
                guard let ack = acked[op.id] else {
                    problems.append("the hub holds \(op.id), which it never reported integrated")
                    continue
                }
                if ack != outcome { problems.append("K14: \(op.id) \(op.change) by \(op.author) was acked \(ack) but is now \(outcome)") }
                if hubStamp[op.id] != op.stamp {
                    problems.append("\(op.id) was integrated at \(hubStamp[op.id] as Any), now at \(op.stamp)")
                }
            }
            let inLog = Set(hub.log.map(\.id))
            for id in integratedOrder where !inLog.contains(id) && !hub.checkpoint.versions.covers(id) {
                problems.append("the hub integrated \(id), which is neither in its log nor in its checkpoint")
            }
            if hub.checkpoint.frontier != hubFrontier {
                counts.bump("hub compactions")
                hubFrontier = hub.checkpoint.frontier
            }
            // The hub only appends: its state is what it integrated, in that order.
            if hub.state != mirror {
                problems.append("the hub shows \(K.describe(hub.state)), its integrated operations in order give \(K.describe(mirror))")
            }
            problems += K.hubProblems(hub, ledger: ledger)
        }
        for index in touched where index != Self.hub {
            let client = replicas[index]
            // Another replica's operation comes only through the hub, so
            // only with the hub's final stamp.
            for op in client.log where op.id.replica != client.id && hubStamp[op.id] != op.stamp {
                problems.append("\(client.id) holds \(op.id) at \(op.stamp), the hub integrated it at \(hubStamp[op.id] as Any)")
            }
            guard client.versions == hub.versions, client.state != hub.state else { continue }
            if client.log.allSatisfy({ hubStamp[$0.id] == $0.stamp }) {
                problems.append("\(client.id) holds every operation at the hub's stamps but shows \(K.describe(client.state)), " +
                                "the hub \(K.describe(hub.state))")
            } else if client.checkpoint.frontier == hub.checkpoint.frontier, client.log.map(\.stamp) == hub.log.map(\.stamp) {
                problems.append("\(client.id) holds the hub's checkpoint and log but shows another state")
            }
        }
        if !problems.isEmpty { throw fail(problems) }
    }

    /// After full delivery: every intent reached the hub and no buffer is
    /// left; every client holds the hub's operations at its stamps and shows
    /// its state; then, after a last `sync`, its checkpoint and log, outcome
    /// by outcome as acked.
    mutating func finalHubChecks() throws(FuzzFailure) {
        touched = Set(replicas.indices)
        try checkHub()
        var problems: [String] = []
        if hub.pendingCount != 0 { problems.append("the hub still buffers \(hub.pendingCount) operations after everything was sent") }
        for prepared in prepared.values where !integratedIntents.contains(prepared.intent) {
            problems.append("intent \(prepared.intent) of client \(prepared.client) (\(prepared.change)) never reached the hub")
        }
        for client in replicas.dropFirst() {
            if client.versions != hub.versions {
                problems.append("\(client.id) versions \(client.versions.entries), the hub's \(hub.versions.entries)")
            }
            if client.state != hub.state {
                problems.append("\(client.id) shows \(K.describe(client.state)), the hub \(K.describe(hub.state))")
            }
            for op in client.log where hubStamp[op.id] != op.stamp {
                problems.append("\(client.id) holds \(op.id) at \(op.stamp), the hub's stamp is \(hubStamp[op.id] as Any)")
            }
            if client.pendingCount != 0 { problems.append("\(client.id) still buffers \(client.pendingCount) operations") }
        }
        if !problems.isEmpty { throw fail(problems) }
        // A last sync brings every client to the hub's checkpoint: then
        // each holds the hub's log, operation by operation.
        for index in clientIndices { try adopt(syncDelta(for: index), at: index) }
        touched = Set(clientIndices)
        try checkHub()
        for client in replicas.dropFirst() {
            if client.checkpoint != hub.checkpoint {
                problems.append("\(client.id) checkpoint at \(client.checkpoint.frontier), the hub's at \(hub.checkpoint.frontier)")
            }
            if client.log.map(\.stamp) != hub.log.map(\.stamp) {
                problems.append("\(client.id) orders its log unlike the hub: \(stamps(client.log)) vs \(stamps(hub.log))")
            }
            if client.state != hub.state { problems.append("\(client.id) shows \(K.describe(client.state)) after the last sync") }
            for (op, outcome) in zip(client.log, client.outcomes) where acked[op.id] != outcome {
                problems.append("\(client.id): \(op.id) \(op.change) by \(op.author) is \(outcome), acked \(acked[op.id] as Any)")
            }
        }
        if !problems.isEmpty { throw fail(problems) }
    }
}
