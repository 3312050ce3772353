import Testing
@testable import BoardCRDT

/// What the Set schedules exercised (`BOARDCRDT_SET_STATS=1` prints it).
struct SetFuzzStatistics: CustomStringConvertible {
    var schedules = 0, steps = 0, operations = 0, restamped = 0, duplicates = 0, buffered = 0
    var takenBack = 0, stepsOver = 0, matches = 0, ownStampCollisions = 0, lateStarts = 0
    /// Refusal codes met locally (prepare) and on the hub (the total order).
    var refusedLocally: [String: Int] = [:]
    var refusedByHub: [String: Int] = [:]

    mutating func add(_ other: SetFuzzStatistics) {
        schedules += other.schedules; steps += other.steps; operations += other.operations
        restamped += other.restamped; duplicates += other.duplicates; buffered += other.buffered
        takenBack += other.takenBack; stepsOver += other.stepsOver; matches += other.matches
        ownStampCollisions += other.ownStampCollisions; lateStarts += other.lateStarts
        refusedLocally.merge(other.refusedLocally, uniquingKeysWith: +)
        refusedByHub.merge(other.refusedByHub, uniquingKeysWith: +)
    }

    var description: String {
        "\(schedules) schedules, \(steps) steps, \(operations) operations, \(matches) matches, \(restamped) re-stamped, "
            + "\(duplicates) duplicates, \(buffered) buffered, \(takenBack) taken back on their author, "
            + "\(stepsOver) steps with the game over, \(lateStarts) schedules started late in a game, "
            + "\(ownStampCollisions) steps with the known engine issue; refused locally \(refusedLocally.sorted { $0.key < $1.key }), "
            + "by the hub \(refusedByHub.sorted { $0.key < $1.key })"
    }
}

struct SetFuzzFailure: Error, CustomStringConvertible {
    var seed: UInt64
    var step: Int
    var problems: [String]
    var trace: [String]
    var description: String {
        "Set convergence failure, reproduce with BOARDCRDT_SET_SEED=\(seed) BOARDCRDT_SET_SCHEDULES=1 BOARDCRDT_SET_TRACE=1 swift test --filter SetConvergence\n"
            + "step \(step): " + problems.joined(separator: "\n  ")
            + (trace.isEmpty ? "" : "\ntrace:\n" + trace.joined(separator: "\n"))
    }
}

/// One random schedule of SyncHub's shape: 2 to 4 client replicas (no
/// compaction) playing under player names (sometimes two under one name,
/// as one person on two devices), and a hub replica that seals its order
/// (`ReplicaLimits.sealsOrder`). Clients perform intents at once
/// (local-first), send their operations to the hub in random batches,
/// reordered and duplicated; the hub relays what it integrated (re-stamped
/// where needed) to every client, authors included, again reordered and
/// duplicated. After every step: every touched replica's invariants (engine
/// and `SetTable.violations`), acks are final (an operation's outcome on the
/// hub never changes once integrated), and a client holding exactly the
/// hub's log shows the hub's state. At the end, full delivery: every client
/// equals the hub, operation by operation.
struct SetFuzzSchedule {
    let seed: UInt64
    var rng: SplitMix64
    var hub: Table
    var clients: [Table] = []
    var names: [String] = []
    /// Per client: operations made but not yet sent, and those sent.
    var unsent: [[TableOp]] = []
    var sent: [[TableOp]] = []
    /// What the hub integrated, in order, as it relays it.
    var relayed: [TableOp] = []
    var delivered: [Set<OperationID>] = []
    /// The outcome of each operation when the hub integrated it (its ack).
    var acked: [OperationID: Outcome<SetRefusal>] = [:]
    let tracing: Bool
    let trace = Trace()
    var step = 0
    var touched: Set<Int> = []
    var statistics = SetFuzzStatistics()
    /// Where the known engine issue (see `ownStampCollisions`) first showed.
    var firstCollision: String?
    /// The schedule began from a game well under way (no opening).
    var lateStart = false
    static let hubIndex = -1

    static func run(seed: UInt64, tracing: Bool) -> SetFuzzFailure? {
        var schedule = SetFuzzSchedule(seed: seed, tracing: tracing)
        do {
            try schedule.run()
            return nil
        } catch {
            return error
        }
    }

    init(seed: UInt64, tracing: Bool) {
        self.seed = seed
        self.tracing = tracing
        rng = SplitMix64(seed: seed)
        var ids: Set<UInt64> = []
        func freshID(_ rng: inout SplitMix64) -> ReplicaID {
            while true {
                let raw = UInt64(rng.inRange(1...1_000))
                if ids.insert(raw).inserted { return ReplicaID(raw) }
            }
        }
        // Sometimes every replica starts from a checkpoint late in a game,
        // so empty decks, holes and game over come within reach.
        var start = Checkpoint<SetTable>.empty
        if rng.percent(35) {
            var dealer = Table(id: ReplicaID(5_000), limits: ReplicaLimits(compacts: false))
            _ = try? dealer.perform(.newGame(seed: rng.next()), by: "")
            let deckLeft = 3 * rng.inRange(0...4)
            while dealer.state.deck.count > deckLeft {
                let before = dealer.state
                for card in aSet(on: dealer.state) ?? [] { _ = try? dealer.perform(.choose(card), by: "zed") }
                if dealer.state == before { _ = try? dealer.perform(.deal, by: "zed") }
                if dealer.state == before { break }
            }
            start = Checkpoint(state: dealer.state, frontier: .origin, versions: VersionVector())
            lateStart = true
        }
        hub = Table(id: freshID(&rng), checkpoint: start, limits: ReplicaLimits(sealsOrder: true))
        let pool = ["ana", "bo", "cy", "dee"]
        let count = rng.inRange(2...4)
        for _ in 0..<count {
            clients.append(Table(id: freshID(&rng), checkpoint: start, limits: ReplicaLimits(compacts: false)))
            names.append(pool[rng.below(pool.count)])
            unsent.append([])
            sent.append([])
            delivered.append([])
        }
        note("seed \(seed): late start \(lateStart) deck \(hub.state.deck.count), hub \(hub.id), clients \(zip(clients.map(\.id), names).map { "\($0)=\($1)" })")
    }

    func note(_ line: @autoclosure () -> String) {
        if tracing { trace.lines.append("[\(step)] " + line()) }
    }

    func fail(_ problems: [String]) -> SetFuzzFailure {
        SetFuzzFailure(seed: seed, step: step, problems: problems, trace: trace.lines)
    }

    mutating func run() throws(SetFuzzFailure) {
        statistics.schedules = 1
        // S3: the hub deals the first game of a fresh board (its `opening`);
        // sometimes late, so clients meet `no_game` first.
        let opensAt = lateStart ? -1 : rng.percent(85) ? 0 : rng.inRange(1...10)
        if lateStart { statistics.lateStarts = 1 }
        let steps = rng.inRange(40...120)
        statistics.steps = steps
        for index in 0..<steps {
            step = index
            if index == opensAt { try open() }
            switch rng.below(100) {
            case 0..<50: try localIntent()
            case 50..<75: try send(from: rng.below(clients.count), everything: false)
            default: try relay(to: rng.below(clients.count), everything: false)
            }
            try check()
            if hub.state.over { statistics.stepsOver += 1 }
        }
        step = steps
        try finalSync()
        statistics.matches = hub.state.matches.count
    }

    mutating func open() throws(SetFuzzFailure) {
        let seed = rng.next()
        let op: TableOp?
        do {
            op = try hub.perform(.newGame(seed: seed), by: "")
        } catch {
            throw fail(["the hub's opening was refused: \(error)"])
        }
        guard let op else { throw fail(["the hub's opening recorded nothing"]) }
        note("hub opens game with seed \(seed): \(op.id)@\(op.lamport)")
        touched.insert(Self.hubIndex)
        integrated([op])
    }

    mutating func integrated(_ ops: [TableOp]) {
        for op in ops {
            relayed.append(op)
            let outcome = hub.outcome(of: op.id)
            acked[op.id] = outcome
            if case let .refused(refusal)? = outcome { statistics.refusedByHub[refusal.code, default: 0] += 1 }
        }
    }

    // MARK: Steps

    /// A random intent under the client's name, often a good one (a card
    /// completing the pick), so matches, races for cards, empty decks and
    /// game over all happen.
    mutating func localIntent() throws(SetFuzzFailure) {
        let index = rng.below(clients.count)
        let name = names[index]
        let before = clients[index]
        let intent = randomIntent(in: before.state, by: name)
        touched.insert(index)
        let result = Result { () throws(SetRefusal) in try clients[index].perform(intent, by: name) }
        switch result {
        case let .success(op?):
            note("\(name)@\(before.id) \(intent) -> \(op.id)@\(op.lamport) \(op.change)")
            statistics.operations += 1
            unsent[index].append(op)
            let outcome = clients[index].outcome(of: op.id)
            // SC2 told once: a choose settling a pick that lost a card to a
            // match is recorded (it clears the player's `lost`) and refused.
            let toldTaken: Bool
            if case .refused(.taken)? = outcome, before.state.players[name]?.lost.isEmpty == false { toldTaken = true } else { toldTaken = false }
            if outcome != .applied, !toldTaken {
                throw fail(["\(intent) by \(name) was prepared but applying it gave \(String(describing: outcome))"])
            }
            if clients[index].state == before.state { throw fail(["\(intent) by \(name) applied without changing the state"]) }
        case .success(nil):
            throw fail(["\(intent) by \(name) recorded nothing; every Set intent changes something or is refused"])
        case let .failure(refusal):
            note("\(name)@\(before.id) \(intent) refused \(refusal.code): \(refusal.message)")
            statistics.refusedLocally[refusal.code, default: 0] += 1
            if clients[index].state != before.state || clients[index].versions != before.versions {
                throw fail(["refused \(intent) changed the replica"])
            }
        }
    }

    mutating func randomIntent(in state: SetTable.State, by name: String) -> SetTable.Intent {
        let roll = rng.below(1000)
        if roll < 12 || (state.over && rng.percent(30)) { return .newGame(seed: rng.next()) }
        if roll < 100 || (state.setsOnTable == 0 && rng.percent(70)) { return .deal }
        let onTable = state.cardsOnTable
        let anyCard = Card.all[rng.below(Card.all.count)]
        guard !onTable.isEmpty, !rng.percent(8) else { return .choose(anyCard) }
        let pick = state.players[name]?.picked ?? []
        if !pick.isEmpty, rng.percent(10) { return .choose(pick[rng.below(pick.count)]) }
        let shuffled = shuffledCards(onTable)
        if rng.percent(75) {
            switch pick.count {
            case 2:
                return .choose(Card.completing(pick[0], pick[1]))
            case 1:
                if let partner = shuffled.first(where: { $0 != pick[0] && onTable.contains(Card.completing(pick[0], $0)) }) {
                    return .choose(partner)
                }
            case 0:
                for (i, a) in shuffled.enumerated() {
                    if let b = shuffled[(i + 1)...].first(where: { onTable.contains(Card.completing(a, $0)) }) {
                        return .choose(rng.percent(50) ? a : b)
                    }
                }
            default:
                break
            }
        }
        return .choose(shuffled[0])
    }

    mutating func shuffledCards(_ cards: [Card]) -> [Card] {
        var cards = cards
        rng.shuffle(&cards)
        return cards
    }

    /// A client sends part of what it has not sent (possibly out of order:
    /// the hub buffers gaps) and resends some of what it sent.
    mutating func send(from index: Int, everything: Bool) throws(SetFuzzFailure) {
        var ops: [TableOp] = []
        var kept: [TableOp] = []
        let whole = everything || rng.percent(40)
        for op in unsent[index] {
            if whole || rng.percent(60) { ops.append(op) } else { kept.append(op) }
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
        integrated(report.integratedOperations)
    }

    /// The hub relays part of what it integrated to a client, reordered,
    /// some of it again.
    mutating func relay(to index: Int, everything: Bool) throws(SetFuzzFailure) {
        let whole = everything || rng.percent(40)
        var ops = relayed.filter { !delivered[index].contains($0.id) && (whole || rng.percent(60)) }
        if !everything {
            for op in relayed where delivered[index].contains(op.id) && rng.percent(5) { ops.append(op) }
        }
        if rng.percent(70) { rng.shuffle(&ops) }
        guard !ops.isEmpty else { return }
        touched.insert(index)
        let report = clients[index].receive(ops)
        note("relay to \(clients[index].id): \(ops.map { "\($0.id)@\($0.lamport)" }) moved \(report.restamped) changed \(report.changedOutcomes.map { "\($0.0) \($0.1)" })")
        if !report.refused.isEmpty { throw fail(["\(clients[index].id) refused relayed operations: \(report.refused)"]) }
        statistics.takenBack += report.changedOutcomes.filter { $0.1.isRefused }.count
        for op in ops { delivered[index].insert(op.id) }
    }

    mutating func finalSync() throws(SetFuzzFailure) {
        note("final sync")
        for index in clients.indices { try send(from: index, everything: true) }
        if hub.pendingCount != 0 { throw fail(["the hub still buffers \(hub.pendingCount) operations after everything was sent"]) }
        for index in clients.indices { try relay(to: index, everything: true) }
        touched = Set(clients.indices).union([Self.hubIndex])
        try check()
        var problems: [String] = []
        for client in clients {
            if client.state != hub.state { problems.append("\(client.id) shows game \(client.state.game) \(places(client.state)), the hub \(hub.state.game) \(places(hub.state))") }
            if client.versions != hub.versions { problems.append("\(client.id) versions \(client.versions.entries), the hub's \(hub.versions.entries)") }
            if client.log.map(\.stamp) != hub.log.map(\.stamp) { problems.append("\(client.id) orders its log unlike the hub") }
            for (op, outcome) in zip(client.log, client.outcomes) where acked[op.id] != outcome {
                problems.append("\(client.id): \(op.id) \(op.change) by \(op.author) was \(outcome), acked \(String(describing: acked[op.id]))")
            }
        }
        if !problems.isEmpty { throw fail(problems) }
    }

    // MARK: Checks

    /// Engine issue (reported to the lead): when the hub's re-stamped copy
    /// of an author's operation comes back (`MergeReport.restamped` on the
    /// author), its new stamp can equal or pass the stamps of the author's
    /// own later operations that the hub has not integrated yet. Until their
    /// hub copies come back too, the author's log holds its own operations
    /// out of sequence order or with equal stamps, which `engineViolations`
    /// reports as "log out of stamp order". Full delivery still converges
    /// (the hub re-stamps those later operations after the first). These
    /// are the lines that issue produces on `replica`.
    static func ownStampCollisions(_ replica: Table) -> [String] {
        zip(replica.log, replica.log.dropFirst()).compactMap { earlier, later in
            guard !(earlier.stamp < later.stamp), earlier.id.replica == replica.id, later.id.replica == replica.id else { return nil }
            return "log out of stamp order: \(earlier.stamp) before \(later.stamp)"
        }
    }

    /// Counts the issue above; `SetConvergenceTests` shows it once per
    /// shard as a known issue, with the first seed that met it.
    mutating func knownEngineIssue(_ replica: Table, _ collisions: [String]) {
        statistics.ownStampCollisions += 1
        note("known engine issue on \(replica.id): \(collisions)")
        if firstCollision == nil {
            firstCollision = "seed \(seed) step \(step) on \(replica.id): \(collisions.joined(separator: "; "))"
        }
    }

    mutating func check() throws(SetFuzzFailure) {
        var problems: [String] = []
        defer { touched = [] }
        for index in touched {
            let replica = index == Self.hubIndex ? hub : clients[index]
            let found = replica.checkInvariants()
            if index != Self.hubIndex {
                // Once a known issue (a re-stamped own operation landing on
                // the author's later ones), fixed in `Replica.receive`: now a
                // failure like any other, counted for the statistics.
                let collisions = Self.ownStampCollisions(replica)
                if !collisions.isEmpty { knownEngineIssue(replica, collisions) }
            }
            problems += found.map { "\(replica.id): \($0)" }
        }
        if touched.contains(Self.hubIndex) {
            // K14: an ack is final.
            for (op, outcome) in zip(hub.log, hub.outcomes) {
                guard let ack = acked[op.id] else {
                    problems.append("the hub holds \(op.id), which it never reported integrated")
                    continue
                }
                if ack != outcome { problems.append("K14: \(op.id) \(op.change) by \(op.author) was acked \(ack) but is now \(outcome)") }
            }
            if hub.log.count != acked.count { problems.append("the hub's log has \(hub.log.count) operations, \(acked.count) were integrated") }
        }
        for index in touched where index != Self.hubIndex {
            let client = clients[index]
            if client.versions == hub.versions, client.log.map(\.stamp) == hub.log.map(\.stamp), client.state != hub.state {
                problems.append("\(client.id) holds the hub's log but shows another state")
            }
        }
        if !problems.isEmpty { throw fail(problems) }
    }
}
