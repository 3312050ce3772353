import Testing
@testable import BoardCRDT

/// What the stock schedules exercised (`BOARDCRDT_STOCK_STATS=1` prints it).
struct StockFuzzStatistics: CustomStringConvertible {
    var schedules = 0, steps = 0, operations = 0, hubIntents = 0, restamped = 0, duplicates = 0, buffered = 0
    var compactions = 0, checkpointsAdopted = 0, syncs = 0
    /// JC2: makes a client showed as made that the hub's order refused, taken back on their author.
    var makesTakenBack = 0
    /// Other own operations whose outcome changed on their author (restocks, edits).
    var otherOutcomesChanged = 0
    var makesApplied = 0, stepsWithAnEmptyFruit = 0, stepsWithAFullFruit = 0, lateStarts = 0
    /// Refusal codes met locally (prepare) and on the hub (the total order).
    var refusedLocally: [String: Int] = [:]
    var refusedByHub: [String: Int] = [:]

    mutating func add(_ other: StockFuzzStatistics) {
        schedules += other.schedules; steps += other.steps; operations += other.operations; hubIntents += other.hubIntents
        restamped += other.restamped; duplicates += other.duplicates; buffered += other.buffered
        compactions += other.compactions; checkpointsAdopted += other.checkpointsAdopted; syncs += other.syncs
        makesTakenBack += other.makesTakenBack; otherOutcomesChanged += other.otherOutcomesChanged
        makesApplied += other.makesApplied; stepsWithAnEmptyFruit += other.stepsWithAnEmptyFruit
        stepsWithAFullFruit += other.stepsWithAFullFruit; lateStarts += other.lateStarts
        refusedLocally.merge(other.refusedLocally, uniquingKeysWith: +)
        refusedByHub.merge(other.refusedByHub, uniquingKeysWith: +)
    }

    var description: String {
        "\(schedules) schedules, \(steps) steps, \(operations) client operations, \(hubIntents) thin intents on the hub, "
            + "\(makesApplied) makes applied by the hub, \(restamped) re-stamped, \(duplicates) duplicates, \(buffered) buffered, "
            + "\(compactions) hub compactions, \(checkpointsAdopted) checkpoints adopted by clients (\(syncs) syncs), "
            + "\(makesTakenBack) makes taken back on their author (JC2), \(otherOutcomesChanged) other own outcomes changed, "
            + "\(stepsWithAnEmptyFruit) steps with a fruit at 0, \(stepsWithAFullFruit) with a fruit at 999, "
            + "\(lateStarts) schedules from a played stock; refused locally \(refusedLocally.sorted { $0.key < $1.key }), "
            + "by the hub \(refusedByHub.sorted { $0.key < $1.key })"
    }
}

struct StockFuzzFailure: Error, CustomStringConvertible {
    var seed: UInt64
    var gaps: Bool
    var step: Int
    var problems: [String]
    var trace: [String]
    var description: String {
        "Stock convergence failure, reproduce with BOARDCRDT_STOCK_SEED=\(seed) BOARDCRDT_STOCK_GAPS=\(gaps ? 1 : 0) BOARDCRDT_STOCK_SCHEDULES=1 BOARDCRDT_STOCK_TRACE=1 swift test --filter StockConvergence\n"
            + "step \(step): " + problems.joined(separator: "\n  ")
            + (trace.isEmpty ? "" : "\ntrace:\n" + trace.joined(separator: "\n"))
    }
}

/// One random schedule of SyncHub's shape for the juice bar: 2 to 4 client
/// replicas (`ReplicaLimits(compacts: false, hubSealsOrder: true)`) under
/// player names (sometimes two under one name) making juices, restocking
/// (+1, -1, large, absurd), editing counts from what they see and resetting;
/// and a hub replica that seals its order and compacts with a tiny
/// `keptOperations` (docs/SEMANTICS.md §7, §7c), which also takes thin
/// intents of its own.
///
/// Clients perform intents at once (local-first) and send them in random
/// batches, reordered, with resends. The hub relays each batch it
/// integrated to every other client, and to the author only when it
/// re-stamped something (`MergeReport.restamped`); it also pushes
/// checkpoints and `sync`s (its checkpoint when the client's is older, and
/// its whole log). Every message to a client waits in that client's inbox
/// and is delivered in random order, some twice.
///
/// After every step: every touched replica's invariants (engine and
/// `FruitStock.violations`: no count below 0 or above 999 anywhere, JC1);
/// every local intent does what `StockModel` says; the hub's outcome of an
/// operation never changes once integrated (an ack is final); the hub's
/// state is its integrated operations replayed in the order it integrated
/// them; **conservation** on the hub: per fruit, the start count plus
/// applied restocks, edits (`to - from`) and resets, less the fruit applied
/// makes used, is the count, and `made` and `recent` are the applied makes;
/// a client holding every operation with the hub's stamps shows the hub's
/// state. At the end, after full delivery, every client equals the hub.
struct StockFuzzSchedule {
    enum Message {
        case ops([BarOp])
        case checkpoint(Checkpoint<FruitStock>)
        case sync(Delta<FruitStock>)
    }

    let seed: UInt64
    var rng: SplitMix64
    var hub: Bar
    var clients: [Bar] = []
    var names: [String] = []
    /// Per client: operations made but not yet sent, and those sent.
    var unsent: [[BarOp]] = []
    var sent: [[BarOp]] = []
    /// Per client: what the hub sent it, not yet delivered.
    var inbox: [[Message]] = []
    /// The outcome and stamp of each operation when the hub integrated it (its ack).
    var acked: [OperationID: Outcome<StockRefusal>] = [:]
    var finalStamp: [OperationID: Stamp] = [:]
    /// The hub's integrated operations replayed in the order it integrated them.
    var mirror: FruitStock.State
    /// Conservation, kept by plain arithmetic from the hub's outcomes.
    var ledger: [Fruit: Int]
    var madeLedger: [Juice: Int]
    var recentLedger: [FruitStock.MadeJuice]
    var hubFrontier: Stamp = .origin
    let tracing: Bool
    let trace = Trace()
    var step = 0
    var touched: Set<Int> = []
    var statistics = StockFuzzStatistics()
    static let hubIndex = -1
    static let pool = ["ana", "bo", "cy", "dee"]

    /// Whether clients may leave gaps at the hub across batches (a frame
    /// lost to the rate limiter): operations wait in the hub's pending
    /// buffer, possibly across its compactions. Off, each batch is a prefix
    /// of what the client has not sent, shuffled within the batch.
    let gaps: Bool

    init(seed: UInt64, tracing: Bool, gaps: Bool = true) {
        self.seed = seed
        self.tracing = tracing
        self.gaps = gaps
        rng = SplitMix64(seed: seed)
        var ids: Set<UInt64> = []
        func freshID(_ rng: inout SplitMix64) -> ReplicaID {
            while true {
                let raw = UInt64(rng.inRange(1...1_000))
                if ids.insert(raw).inserted { return ReplicaID(raw) }
            }
        }
        // Often from a played stock with fruits at 0 and at 999, so both
        // ends of the range are within reach.
        var start = FruitStock.initialState
        var late = false
        if rng.percent(60) {
            late = true
            for fruit in Fruit.allCases {
                let roll = rng.below(100)
                start.stock[fruit] = roll < 30 ? rng.inRange(0...3) : roll < 42 ? rng.inRange(990...999) : rng.inRange(0...40)
            }
            for _ in 0..<rng.inRange(0...25) {
                let juice = Juice.allCases[rng.below(Juice.allCases.count)]
                start.made[juice, default: 0] += 1
                start.recent.append(FruitStock.MadeJuice(who: Self.pool[rng.below(4)], juice: juice))
            }
            start.recent = Array(start.recent.suffix(FruitStock.recentKept))
        }
        let checkpoint = Checkpoint<FruitStock>(state: start, frontier: .origin, versions: VersionVector())
        let kept = rng.inRange(1...6)
        hub = Bar(id: freshID(&rng), checkpoint: checkpoint, limits: ReplicaLimits(keptOperations: kept, sealsOrder: true))
        mirror = start
        ledger = start.stock
        madeLedger = start.made
        recentLedger = start.recent
        statistics.lateStarts = late ? 1 : 0
        let count = rng.inRange(2...4)
        for _ in 0..<count {
            clients.append(Bar(id: freshID(&rng), checkpoint: checkpoint, limits: ReplicaLimits(compacts: false, hubSealsOrder: true)))
            names.append(Self.pool[rng.below(Self.pool.count)])
            unsent.append([])
            sent.append([])
            inbox.append([])
        }
        note("seed \(seed): gaps \(gaps), start \(countsText(start)), hub \(hub.id) keeps \(kept), clients \(zip(clients.map(\.id), names).map { "\($0)=\($1)" })")
    }

    func note(_ line: @autoclosure () -> String) {
        if tracing { trace.lines.append("[\(step)] " + line()) }
    }

    func fail(_ problems: [String]) -> StockFuzzFailure {
        StockFuzzFailure(seed: seed, gaps: gaps, step: step, problems: problems, trace: trace.lines)
    }

    mutating func run() throws(StockFuzzFailure) {
        statistics.schedules = 1
        let steps = rng.inRange(40...140)
        statistics.steps = steps
        for index in 0..<steps {
            step = index
            switch rng.below(100) {
            case 0..<42: try localIntent()
            case 42..<46: try hubIntent()
            case 46..<66: try send(from: rng.below(clients.count), everything: false)
            case 66..<94: try deliver(to: rng.below(clients.count), everything: false)
            default: catchUp(rng.below(clients.count))
            }
            try check()
            if Fruit.allCases.contains(where: { hub.state.count(of: $0) == 0 }) { statistics.stepsWithAnEmptyFruit += 1 }
            if Fruit.allCases.contains(where: { hub.state.count(of: $0) == 999 }) { statistics.stepsWithAFullFruit += 1 }
        }
        step = steps
        try finalSync()
    }

    // MARK: Intents

    mutating func randomIntent(in state: FruitStock.State) -> FruitStock.Intent {
        let fruit = Fruit.allCases[rng.below(Fruit.allCases.count)]
        let roll = rng.below(100)
        if roll < 40 {
            let possible = Juice.allCases.filter { state.canMake($0) > 0 }
            if !possible.isEmpty, rng.percent(75) { return .make(possible[rng.below(possible.count)]) }
            return .make(Juice.allCases[rng.below(Juice.allCases.count)])
        }
        if roll < 70 {
            let kind = rng.below(100)
            let by = kind < 45 ? 1 : kind < 80 ? -1 : kind < 95 ? rng.inRange(-400...400)
                : [Int.max, Int.min, 999, -999, 1000, 0, 989][rng.below(7)]
            return .restock(fruit, by: by)
        }
        if roll < 93 {
            let seen = state.count(of: fruit)
            let from = rng.percent(85) ? seen : seen + rng.inRange(-3...3)
            let kind = rng.below(100)
            let to = kind < 75 ? rng.inRange(0...30) : kind < 88 ? rng.inRange(985...999) : kind < 94 ? seen
                : [-1, 1000, Int.max, Int.min][rng.below(4)]
            return .setStock(fruit, to: to, from: from)
        }
        return .resetStock
    }

    static func change(for intent: FruitStock.Intent) -> FruitStock.Change {
        switch intent {
        case let .make(juice): .make(juice)
        case let .restock(fruit, by): .restock(fruit, by: by)
        case let .setStock(fruit, to, from): .setStock(fruit, to: to, from: from)
        case .resetStock: .resetStock
        }
    }

    /// Performs `intent` on `replica` and checks it against `StockModel`.
    mutating func perform(_ intent: FruitStock.Intent, by name: String, on replica: inout Bar) throws(StockFuzzFailure) -> BarOp? {
        let before = replica
        let expected = StockModel.outcome(of: Self.change(for: intent), on: before.state.stock)
        let result = Result { () throws(StockRefusal) in try replica.perform(intent, by: name) }
        switch result {
        case let .success(op?):
            note("\(name)@\(before.id) \(intent) -> \(op.id)@\(op.lamport) \(countsText(replica.state))")
            let outcome = replica.log.last?.id == op.id ? replica.outcomes.last : replica.outcome(of: op.id)
            if expected.outcome != .applied || (outcome != nil && outcome != .applied) {
                throw fail(["\(intent) by \(name) on \(countsText(before.state)) recorded \(String(describing: outcome)), the rules say \(expected.outcome)"])
            }
            if replica.state.stock != expected.counts { throw fail(["\(intent) on \(countsText(before.state)) gave \(countsText(replica.state))"]) }
            return op
        case .success(nil):
            note("\(name)@\(before.id) \(intent) changes nothing")
            if expected.outcome != .unchanged { throw fail(["\(intent) by \(name) on \(countsText(before.state)) recorded nothing, the rules say \(expected.outcome)"]) }
            if replica.state != before.state || replica.versions != before.versions { throw fail(["a no-op \(intent) changed the replica"]) }
            return nil
        case let .failure(refusal):
            note("\(name)@\(before.id) \(intent) refused \(refusal.code): \(refusal.message)")
            statistics.refusedLocally[refusal.code, default: 0] += 1
            if expected.outcome != .refused(refusal) { throw fail(["\(intent) on \(countsText(before.state)) refused \(refusal), the rules say \(expected.outcome)"]) }
            if replica.state != before.state || replica.versions != before.versions { throw fail(["refused \(intent) changed the replica"]) }
            return nil
        }
    }

    /// A client acts on what it shows.
    mutating func localIntent() throws(StockFuzzFailure) {
        let index = rng.below(clients.count)
        let intent = randomIntent(in: clients[index].state)
        touched.insert(index)
        var replica = clients[index]
        let op = try perform(intent, by: names[index], on: &replica)
        clients[index] = replica
        if let op {
            statistics.operations += 1
            unsent[index].append(op)
        }
    }

    /// A thin client's intent, prepared on the hub's own state; relayed to every client.
    mutating func hubIntent() throws(StockFuzzFailure) {
        let intent = randomIntent(in: hub.state)
        touched.insert(Self.hubIndex)
        var replica = hub
        let op = try perform(intent, by: rng.percent(50) ? "web" : names[rng.below(names.count)], on: &replica)
        hub = replica
        guard let op else { return }
        statistics.hubIntents += 1
        try integrated([op])
        for index in clients.indices { inbox[index].append(.ops([op])) }
    }

    // MARK: Delivery

    /// A client sends part of what it has not sent (possibly out of order:
    /// the hub buffers gaps) and resends some of what it sent.
    mutating func send(from index: Int, everything: Bool) throws(StockFuzzFailure) {
        var ops: [BarOp] = []
        var kept: [BarOp] = []
        let whole = everything || rng.percent(40)
        if !gaps {
            let count = whole ? unsent[index].count : rng.inRange(0...unsent[index].count)
            ops = Array(unsent[index].prefix(count))
            kept = Array(unsent[index].dropFirst(count))
        } else {
            for op in unsent[index] {
                if whole || rng.percent(60) { ops.append(op) } else { kept.append(op) }
            }
        }
        sent[index] += ops
        unsent[index] = kept
        if !everything {
            for op in sent[index] where rng.percent(8) { ops.append(op) }
            if rng.percent(60) { rng.shuffle(&ops) }
        }
        guard !ops.isEmpty else { return }
        touched.insert(Self.hubIndex)
        let report = hub.receive(ops)
        note("\(clients[index].id) sends \(ops.map { "\($0.id)@\($0.lamport)" }) -> integrated \(report.integratedOperations.map { "\($0.id)@\($0.lamport)" }) restamped \(report.restamped)")
        if !report.refused.isEmpty { throw fail(["the hub refused honest operations: \(report.refused)"]) }
        if !report.changedOutcomes.isEmpty { throw fail(["the hub's own operations changed outcome: \(report.changedOutcomes)"]) }
        statistics.restamped += report.restamped.count
        statistics.duplicates += report.duplicates
        statistics.buffered += report.buffered
        try integrated(report.integratedOperations)
        guard !report.integratedOperations.isEmpty else { return }
        for other in clients.indices where other != index || !report.restamped.isEmpty {
            inbox[other].append(.ops(report.integratedOperations))
        }
    }

    /// The hub pushes its checkpoint, or answers a `hello` with a `sync`.
    mutating func catchUp(_ index: Int) {
        if rng.percent(50) {
            inbox[index].append(.checkpoint(hub.checkpoint))
            note("hub pushes its checkpoint at \(hub.checkpoint.frontier) to \(clients[index].id)")
        } else {
            let frontier = clients[index].checkpoint.frontier
            let delta = Delta(checkpoint: frontier < hub.checkpoint.frontier ? hub.checkpoint : nil, operations: hub.log)
            inbox[index].append(.sync(delta))
            note("hub syncs \(clients[index].id): checkpoint \(delta.checkpoint.map { "\($0.frontier)" } ?? "-") and \(delta.operations.count) operations")
        }
    }

    /// One or more waiting messages reach a client, in random order, some
    /// of them twice.
    mutating func deliver(to index: Int, everything: Bool) throws(StockFuzzFailure) {
        guard !inbox[index].isEmpty else { return }
        touched.insert(index)
        let count = everything ? inbox[index].count : rng.inRange(1...min(3, inbox[index].count))
        for _ in 0..<count {
            let pick = rng.below(inbox[index].count)
            let message = everything || !rng.percent(10) ? inbox[index].remove(at: pick) : inbox[index][pick]
            try receive(message, at: index)
        }
    }

    mutating func receive(_ message: Message, at index: Int) throws(StockFuzzFailure) {
        let id = clients[index].id
        let fresh = { ReplicaID(1_000_000) }
        switch message {
        case let .ops(ops):
            var ops = ops
            if rng.percent(30) { rng.shuffle(&ops) }
            let report = clients[index].receive(ops)
            note("relay to \(id): \(ops.map { "\($0.id)@\($0.lamport)" }) moved \(report.restamped) changed \(report.changedOutcomes.map { "\($0.0) \($0.1)" }) -> \(countsText(clients[index].state))")
            try merged(report, at: index)
        case let .checkpoint(checkpoint):
            let result = Result { () throws(CheckpointRefusal) in try clients[index].adopt(checkpoint, freshID: fresh) }
            switch result {
            case let .failure(refusal):
                throw fail(["\(id) refused the hub's checkpoint at \(checkpoint.frontier): \(refusal)"])
            case let .success(report):
                note("\(id) adopts checkpoint at \(checkpoint.frontier): \(report.adopted) -> \(countsText(clients[index].state))")
                if report.adopted { statistics.checkpointsAdopted += 1 }
                if !report.rebased.isEmpty || clients[index].id != id { throw fail(["\(id) rebased on a sealing hub's checkpoint: \(report.rebased)"]) }
            }
        case let .sync(delta):
            let (adopt, merge) = clients[index].apply(delta, freshID: fresh)
            note("\(id) syncs: checkpoint \(delta.checkpoint.map { "\($0.frontier)" } ?? "-") adopted \(adopt.adopted) changed \(merge.changedOutcomes.map { "\($0.0) \($0.1)" }) -> \(countsText(clients[index].state))")
            statistics.syncs += 1
            if adopt.adopted { statistics.checkpointsAdopted += 1 }
            if let refusal = adopt.refusal { throw fail(["\(id) refused the hub's checkpoint: \(refusal)"]) }
            if !adopt.rebased.isEmpty || clients[index].id != id { throw fail(["\(id) rebased on a sealing hub's sync: \(adopt.rebased)"]) }
            try merged(merge, at: index)
        }
    }

    mutating func merged(_ report: MergeReport<FruitStock>, at index: Int) throws(StockFuzzFailure) {
        if !report.refused.isEmpty { throw fail(["\(clients[index].id) refused the hub's operations: \(report.refused)"]) }
        for (id, outcome) in report.changedOutcomes {
            if id.replica != clients[index].id { throw fail(["\(clients[index].id) reports a changed outcome of \(id), not its own"]) }
            let change = clients[index].log.first { $0.id == id }?.change
            if case .make? = change, case .refused(.notEnoughFruit) = outcome {
                statistics.makesTakenBack += 1
            } else {
                statistics.otherOutcomesChanged += 1
            }
        }
    }

    // MARK: The hub's ledger

    /// Records what the hub integrated, in order: replays it on the mirror,
    /// checks it against the rules on the ledger's counts, and books it.
    mutating func integrated(_ ops: [BarOp]) throws(StockFuzzFailure) {
        var problems: [String] = []
        for op in ops {
            if acked[op.id] != nil { problems.append("the hub integrated \(op.id) twice") }
            let outcome = FruitStock.apply(op, to: &mirror)
            if let onHub = hub.outcome(of: op.id), onHub != outcome {
                problems.append("\(op.id) \(op.change) is \(onHub) on the hub, \(outcome) replayed in the order it was integrated")
            }
            acked[op.id] = outcome
            finalStamp[op.id] = op.stamp
            let expected = StockModel.outcome(of: op.change, on: ledger)
            if expected.outcome != outcome {
                problems.append("\(op.id) \(op.change) by \(op.author) on \(ledger.sorted { $0.key < $1.key }.map(\.value)) was \(outcome), the rules say \(expected.outcome)")
            }
            switch (op.change, outcome) {
            case let (.make(juice), .applied):
                for (fruit, need) in juice.uses { ledger[fruit, default: 0] -= need }
                madeLedger[juice, default: 0] += 1
                recentLedger.append(.init(who: op.author, juice: juice))
                recentLedger = Array(recentLedger.suffix(20))
                statistics.makesApplied += 1
            case let (.restock(fruit, by), .applied):
                ledger[fruit, default: 0] += by
            case let (.setStock(fruit, to, from), .applied):
                ledger[fruit, default: 0] += to - from
            case (.resetStock, .applied):
                for fruit in Fruit.allCases { ledger[fruit, default: 0] += 10 - ledger[fruit, default: 0] }
            default:
                break
            }
            if case let .refused(refusal) = outcome { statistics.refusedByHub[refusal.code, default: 0] += 1 }
            note("hub integrates \(op.id)@\(op.lamport) \(op.change) by \(op.author): \(outcome)")
        }
        if !problems.isEmpty { throw fail(problems) }
    }

    // MARK: Checks

    mutating func check() throws(StockFuzzFailure) {
        var problems: [String] = []
        defer { touched = [] }
        for index in touched {
            let replica = index == Self.hubIndex ? hub : clients[index]
            problems += replica.checkInvariants().map { "\(replica.id): \($0)" }
        }
        // An ack is final: the hub's outcome of what it integrated never changes.
        for (op, outcome) in zip(hub.log, hub.outcomes) {
            guard let ack = acked[op.id] else {
                problems.append("the hub holds \(op.id), which it never reported integrated")
                continue
            }
            if ack != outcome { problems.append("\(op.id) \(op.change) by \(op.author) was acked \(ack) but is now \(outcome)") }
            if finalStamp[op.id] != op.stamp { problems.append("\(op.id) was integrated at \(String(describing: finalStamp[op.id])), is now at \(op.stamp)") }
        }
        if hub.checkpoint.frontier != hubFrontier {
            statistics.compactions += 1
            hubFrontier = hub.checkpoint.frontier
        }
        // The hub only appends: its state is what it integrated, in that order.
        if hub.state != mirror { problems.append("the hub shows \(countsText(hub.state)), its integrated operations in order give \(countsText(mirror))") }
        // Conservation.
        for fruit in Fruit.allCases where hub.state.count(of: fruit) != ledger[fruit] {
            problems.append("conservation: \(fruit) is \(hub.state.count(of: fruit)) on the hub, the ledger says \(String(describing: ledger[fruit]))")
        }
        if hub.state.made != madeLedger { problems.append("made \(hub.state.made), the ledger says \(madeLedger)") }
        if hub.state.recent != recentLedger { problems.append("recent differs from the applied makes") }
        for index in touched where index != Self.hubIndex {
            let client = clients[index]
            if client.versions == hub.versions, client.log.allSatisfy({ finalStamp[$0.id] == $0.stamp }), client.state != hub.state {
                problems.append("\(client.id) holds every operation at the hub's stamps but shows \(countsText(client.state)), the hub \(countsText(hub.state))")
            }
        }
        if !problems.isEmpty { throw fail(problems) }
    }

    mutating func finalSync() throws(StockFuzzFailure) {
        note("final delivery")
        for index in clients.indices { try send(from: index, everything: true) }
        touched.insert(Self.hubIndex)
        try check()
        if hub.pendingCount != 0 { throw fail(["the hub still buffers \(hub.pendingCount) operations after everything was sent"]) }
        for index in clients.indices { try deliver(to: index, everything: true) }
        touched = Set(clients.indices).union([Self.hubIndex])
        try check()
        var problems: [String] = []
        for client in clients {
            if client.versions != hub.versions { problems.append("\(client.id) versions \(client.versions.entries), the hub's \(hub.versions.entries)") }
            if client.state != hub.state { problems.append("\(client.id) shows \(countsText(client.state)), the hub \(countsText(hub.state))") }
            for op in client.log where finalStamp[op.id] != op.stamp {
                problems.append("\(client.id) holds \(op.id) at \(op.stamp), the hub's stamp is \(String(describing: finalStamp[op.id]))")
            }
            if client.pendingCount != 0 { problems.append("\(client.id) still buffers \(client.pendingCount) operations") }
        }
        if !problems.isEmpty { throw fail(problems) }
        // A last sync brings every client to the hub's checkpoint: then
        // each holds the hub's log, operation by operation.
        for index in clients.indices {
            inbox[index] = []
            let delta = Delta(checkpoint: clients[index].checkpoint.frontier < hub.checkpoint.frontier ? hub.checkpoint : nil, operations: hub.log)
            try receive(.sync(delta), at: index)
        }
        touched = Set(clients.indices)
        try check()
        for client in clients {
            if client.checkpoint != hub.checkpoint { problems.append("\(client.id) checkpoint at \(client.checkpoint.frontier), the hub's at \(hub.checkpoint.frontier)") }
            if client.log.map(\.stamp) != hub.log.map(\.stamp) { problems.append("\(client.id) orders its log unlike the hub") }
            if client.state != hub.state { problems.append("\(client.id) shows \(countsText(client.state)) after the last sync") }
            for (op, outcome) in zip(client.log, client.outcomes) where acked[op.id] != outcome {
                problems.append("\(client.id): \(op.id) \(op.change) by \(op.author) is \(outcome), acked \(String(describing: acked[op.id]))")
            }
        }
        if !problems.isEmpty { throw fail(problems) }
    }
}
