// crdt-bench, "Board kinds" (BENCHMARKS.md, issue 10): the Set table next
// to the letter board, same figures, same run, interleaved.
//
// Each kind's intents come from a seeded script made in a dry run (so the
// timed part is the engine only: the players' search for sets is not
// timed), replayed on a fresh replica:
// - local apply: one replica with the hub's settings (compaction on)
//   performs 10,000 recorded operations;
// - client merge: two client replicas (compaction off) each record 10,000
//   operations from the same state without seeing each other (same Lamport
//   times: the histories interleave completely); timed: one's `receive` of
//   the other's 10,000 (replay of 20,000);
// - hub merge: a replica with the hub's settings (`sealsOrder: true`,
//   compaction on) that integrated one player's 10,000 receives the other's
//   10,000: they are re-stamped after what it holds (an ack is final), so
//   nothing is replayed; once as one batch, once in frames of 256 (the most
//   an `ops` frame carries).
import BoardCRDT

// MARK: Set players

/// Seeded Set players: each completes a set on the table when it can
/// (carrying on from its own pick), now and then completes a pick with a
/// wrong card (a mismatch), deals when the table holds no set, starts a new
/// game when the game is over.
struct SetPlayers {
    var names: [String]
    var generator: Generator
    /// Cards each player means to choose next, in order.
    var plans: [String: [Card]] = [:]
    /// Percent of fresh plans whose third card is wrong.
    var mismatchPercent = 10

    init(names: [String], seed: UInt64) {
        self.names = names
        generator = Generator(state: seed)
    }

    mutating func next(_ state: SetTable.State) -> (intent: SetTable.Intent, author: String) {
        let name = names[generator.below(names.count)]
        if state.game == 0 || state.over {
            plans = [:]
            return (.newGame(seed: generator.next()), name)
        }
        var plan = plans[name] ?? []
        if let first = plan.first, state.place(of: first) == nil { plan = [] }
        if plan.isEmpty { plan = makePlan(for: name, in: state) }
        guard !plan.isEmpty else {
            plans[name] = []
            return (.deal, name) // no set on the table, and the game is not over: the deck has cards
        }
        let card = plan.removeFirst()
        plans[name] = plan
        return (.choose(card), name)
    }

    mutating func makePlan(for name: String, in state: SetTable.State) -> [Card] {
        let table = state.cardsOnTable
        var onTable = [Bool](repeating: false, count: 81)
        for card in table { onTable[Int(card.index)] = true }
        let player = state.players[name]
        let picked = player.map { $0.mismatch ? [] : $0.picked } ?? []
        if picked.count == 2 {
            let third = Card.completing(picked[0], picked[1])
            return onTable[Int(third.index)] ? [third] : [picked[0]]
        }
        if picked.count == 1 {
            for card in table where card != picked[0] {
                let third = Card.completing(picked[0], card)
                if third != card, onTable[Int(third.index)] { return [card, third] }
            }
            return [picked[0]]
        }
        var sets: [(Card, Card, Card)] = []
        for i in table.indices {
            for j in table.indices where j > i {
                let third = Card.completing(table[i], table[j])
                if third > table[i], third > table[j], onTable[Int(third.index)] { sets.append((table[i], table[j], third)) }
            }
        }
        guard !sets.isEmpty else { return [] }
        let (a, b, c) = sets[generator.below(sets.count)]
        if generator.below(100) < mismatchPercent,
           let wrong = table.first(where: { $0 != a && $0 != b && $0 != c }) {
            return [a, b, wrong]
        }
        return [a, b, c]
    }
}

// MARK: Scripts

/// A kind whose benchmark intents come from a seeded player.
protocol ScriptedKind: BoardKind {
    /// Intents (and who makes them) that a replica holding `opening`
    /// records, `count` of them, drawn with `seed`; players named `prefix`0...
    static func script(count: Int, seed: UInt64, players prefix: String, after opening: Operation<Change>?) -> [(Intent, String)]
    /// What both players of a merge hold before they play (Set: a dealt game).
    static var openingOperation: Operation<Change>? { get }
}

extension LetterBoard: ScriptedKind {
    static var openingOperation: Operation<Change>? { nil }

    static func script(count: Int, seed: UInt64, players prefix: String, after opening: Operation<Change>?) -> [(Intent, String)] {
        var replica = Replica<LetterBoard>(id: ReplicaID(99), limits: ReplicaLimits(compacts: false))
        if let opening { replica.receive([opening]) }
        var generator = Generator(state: seed)
        var script: [(Intent, String)] = []
        while script.count < count {
            let intent = nextIntent(replica.state.order, &generator)
            if (try? replica.perform(intent)) != nil { script.append((intent, "")) }
        }
        return script
    }
}

extension SetTable: ScriptedKind {
    static var openingOperation: Operation<Change>? {
        var dealer = Replica<SetTable>(id: ReplicaID(9), limits: ReplicaLimits(compacts: false))
        return try? dealer.perform(.newGame(seed: 2026), by: "dealer")
    }

    static func script(count: Int, seed: UInt64, players prefix: String, after opening: Operation<Change>?) -> [(Intent, String)] {
        var replica = Replica<SetTable>(id: ReplicaID(99), limits: ReplicaLimits(compacts: false))
        if let opening { replica.receive([opening]) }
        var players = SetPlayers(names: (0..<4).map { "\(prefix)\($0)" }, seed: seed)
        var script: [(Intent, String)] = []
        var attempts = 0
        while script.count < count {
            attempts += 1
            precondition(attempts < count * 20, "the Set players are stuck")
            let (intent, author) = players.next(replica.state)
            if (try? replica.perform(intent, by: author)) != nil {
                script.append((intent, author))
            } else {
                players.plans[author] = []
            }
        }
        return script
    }
}

/// Performs `script` on `replica`; returns the operations recorded.
@discardableResult
func perform<Kind: BoardKind>(_ script: [(Kind.Intent, String)], on replica: inout Replica<Kind>) -> Int {
    var recorded = 0
    for (intent, author) in script where (try? replica.perform(intent, by: author)) != nil { recorded += 1 }
    return recorded
}

// MARK: Figures

struct KindFigures {
    var localOpsPerSecond: [Double] = []
    var clientMergeMillis: [Double] = []
    var hubMergeMillis: [Double] = []
    var hubFramesMillis: [Double] = []
    /// Refused outcomes in the merged log of 20,000 (client merge), last run.
    var refusedAfterMerge = 0
    /// The same, by refusal code.
    var refusedCodes: [String: Int] = [:]
    var restampedAtHub = 0
}

func measureKind<Kind: ScriptedKind>(_ kind: Kind.Type, operations: Int, round: UInt64, into figures: inout KindFigures) {
    // Local apply, hub settings.
    let script = Kind.script(count: operations, seed: 1000 + round, players: "p", after: nil)
    var local = Replica<Kind>(id: ReplicaID(1))
    let start = now()
    let recorded = perform(script, on: &local)
    let elapsed = now() - start
    precondition(recorded == operations, "\(Kind.name): replayed script recorded \(recorded) of \(operations)")
    figures.localOpsPerSecond.append(Double(recorded) / elapsed)
    sink &+= local.log.count

    // Two players from the same state, concurrently.
    let opening = Kind.openingOperation
    let clients = ReplicaLimits(compacts: false)
    var a = Replica<Kind>(id: ReplicaID(1), limits: clients)
    var b = Replica<Kind>(id: ReplicaID(2), limits: clients)
    if let opening {
        a.receive([opening])
        b.receive([opening])
    }
    let scriptA = Kind.script(count: operations, seed: 2000 + round, players: "a", after: opening)
    let scriptB = Kind.script(count: operations, seed: 3000 + round, players: "b", after: opening)
    precondition(perform(scriptA, on: &a) == operations && perform(scriptB, on: &b) == operations, "\(Kind.name): concurrent scripts")
    let fromA = Array(a.log.filter { $0.id.replica == ReplicaID(1) })
    let fromB = Array(b.log.filter { $0.id.replica == ReplicaID(2) })

    // Client merge: replay of the interleaved 20,000.
    var client = b
    let mergeStart = now()
    let report = client.receive(fromA)
    let mergeElapsed = now() - mergeStart
    precondition(report.integrated.count == operations, "\(Kind.name): client merge integrated \(report.integrated.count)")
    figures.clientMergeMillis.append(mergeElapsed * 1000)
    figures.refusedAfterMerge = client.outcomes.filter(\.isRefused).count
    figures.refusedCodes = [:]
    for case let .refused(refusal) in client.outcomes { figures.refusedCodes[refusal.code, default: 0] += 1 }
    sink &+= client.log.count

    // Hub: B's 10,000 integrated, then A's 10,000 arrive.
    func hubWithB() -> Replica<Kind> {
        var hub = Replica<Kind>(id: ReplicaID(3), limits: ReplicaLimits(sealsOrder: true))
        if let opening { hub.receive([opening]) }
        var index = 0
        while index < fromB.count {
            hub.receive(Array(fromB[index..<min(index + 256, fromB.count)]))
            index += 256
        }
        return hub
    }
    var hub = hubWithB()
    let hubStart = now()
    let hubReport = hub.receive(fromA)
    let hubElapsed = now() - hubStart
    precondition(hubReport.integrated.count == operations, "\(Kind.name): hub merge integrated \(hubReport.integrated.count)")
    figures.hubMergeMillis.append(hubElapsed * 1000)
    figures.restampedAtHub = hubReport.restamped.count
    sink &+= hub.log.count

    var framed = hubWithB()
    let frames = stride(from: 0, to: fromA.count, by: 256).map { Array(fromA[$0..<min($0 + 256, fromA.count)]) }
    let framedStart = now()
    var framedIntegrated = 0
    for frame in frames { framedIntegrated += framed.receive(frame).integratedOperations.count }
    let framedElapsed = now() - framedStart
    precondition(framedIntegrated == operations, "\(Kind.name): framed hub merge integrated \(framedIntegrated)")
    figures.hubFramesMillis.append(framedElapsed * 1000)
    sink &+= framed.log.count
}

/// Prints the kinds table; letters and Set alternate within each repetition.
func runKinds(repetitions: Int, operations: Int) {
    var letters = KindFigures(), set = KindFigures()
    var warm = KindFigures()
    measureKind(LetterBoard.self, operations: 2_000, round: 999, into: &warm)
    measureKind(SetTable.self, operations: 2_000, round: 999, into: &warm)
    for round in 0..<repetitions {
        if round % 2 == 0 {
            measureKind(LetterBoard.self, operations: operations, round: UInt64(round), into: &letters)
            measureKind(SetTable.self, operations: operations, round: UInt64(round), into: &set)
        } else {
            measureKind(SetTable.self, operations: operations, round: UInt64(round), into: &set)
            measureKind(LetterBoard.self, operations: operations, round: UInt64(round), into: &letters)
        }
    }
    func spread(_ values: [Double], _ scale: Double = 1) -> String {
        let sorted = values.sorted()
        return "\(format(sorted.first! * scale))-\(format(sorted.last! * scale))"
    }
    let n = operations.formatted
    print("")
    print("Board kinds: letters and Set, same run, alternating (median of \(repetitions); \(n) operations per player)")
    print(pad("measure", 44) + pad("letters", 22) + pad("set", 22) + "set / letters")
    let ll = median(letters.localOpsPerSecond), sl = median(set.localOpsPerSecond)
    print(pad("local apply \(n) ops (compaction on)", 44) + pad("\(format(ll / 1e6)) M ops/s", 22)
        + pad("\(format(sl / 1e6)) M ops/s", 22) + "\(format(sl / ll, 3))x the rate")
    for (label, l, s) in [("merge \(n) + \(n), client replicas", median(letters.clientMergeMillis), median(set.clientMergeMillis)),
                          ("merge \(n) + \(n), hub (sealsOrder)", median(letters.hubMergeMillis), median(set.hubMergeMillis)),
                          ("  the same in frames of 256 ops", median(letters.hubFramesMillis), median(set.hubFramesMillis))] {
        print(pad(label, 44) + pad("\(format(l, 3)) ms", 22) + pad("\(format(s, 3)) ms", 22) + "\(format(s / l, 3))x the time")
    }
    print(pad("refused in the merged log (client merge)", 44) + pad("\(letters.refusedAfterMerge) of \(2 * operations)", 22)
        + pad("\(set.refusedAfterMerge) of \(2 * operations)", 22))
    func codes(_ counts: [String: Int]) -> String {
        counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }
    print(pad("  by code", 44) + pad(codes(letters.refusedCodes), 22) + pad(codes(set.refusedCodes), 22))
    print(pad("re-stamped at the hub", 44) + pad("\(letters.restampedAtHub)", 22) + pad("\(set.restampedAtHub)", 22))
    print("spread: local letters \(spread(letters.localOpsPerSecond, 1e-6)) set \(spread(set.localOpsPerSecond, 1e-6)) M ops/s;"
        + " client merge letters \(spread(letters.clientMergeMillis)) set \(spread(set.clientMergeMillis)) ms;"
        + " hub merge letters \(spread(letters.hubMergeMillis)) set \(spread(set.hubMergeMillis)) ms;"
        + " hub frames letters \(spread(letters.hubFramesMillis)) set \(spread(set.hubFramesMillis)) ms")
}

extension Int {
    /// 10000 as "10,000".
    var formatted: String {
        let digits = Array(String(self))
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return out
    }
}
