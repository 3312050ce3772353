@testable import BoardCRDT

/// The juice bar in the convergence fuzz (inbox topology; see
/// `StockConvergenceTests`): clients under player names make juices,
/// restock (+1, -1, large, absurd), edit counts from what they see and
/// reset, often from a played stock with fruits at 0 and at 999; the hub
/// takes thin intents of its own. Every local intent does what `StockModel`
/// says; every operation the hub integrates has the outcome `StockModel`
/// gives on the ledger's counts; and **conservation** holds on the hub: per
/// fruit, the start count plus applied restocks, edits (`to - from`) and
/// resets, less what applied makes used, is the count, and `made` and
/// `recent` are the applied makes. (`FruitStock.violations`, checked on
/// every replica: no count below 0 or above 999, JC1.)
extension FruitStock: FuzzedKind {
    struct Ledger {
        var stock: [Fruit: Int]
        var made: [Juice: Int]
        var recent: [MadeJuice]
    }

    static let fuzzPlayers = ["ana", "bo", "cy", "dee"]

    static var fuzz: FuzzSetup {
        FuzzSetup(title: "Stock", knobs: FuzzKnobs(prefix: "BOARDCRDT_STOCK", defaultSeed: 0x57_0C4, defaultSchedules: 50 * 2, shards: 2),
                  filter: "StockConvergence", topology: .inbox(InboxMix(localIntent: 42, hubIntent: 4, send: 20, deliver: 28, catchUp: 6)),
                  steps: 40...140, players: fuzzPlayers, guest: "web")
    }

    static func start(_ rng: inout SplitMix64) -> (state: State, late: Bool) {
        var start = initialState
        guard rng.percent(60) else { return (start, false) }
        for fruit in Fruit.allCases {
            let roll = rng.below(100)
            start.stock[fruit] = roll < 30 ? rng.inRange(0...3) : roll < 42 ? rng.inRange(990...999) : rng.inRange(0...40)
        }
        for _ in 0..<rng.inRange(0...25) {
            let juice = Juice.allCases[rng.below(Juice.allCases.count)]
            start.made[juice, default: 0] += 1
            start.recent.append(MadeJuice(who: fuzzPlayers[rng.below(4)], juice: juice))
        }
        start.recent = Array(start.recent.suffix(recentKept))
        return (start, true)
    }

    static func randomIntent(_ rng: inout SplitMix64, in state: State, by name: String) -> Intent {
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

    static func change(for intent: Intent) -> Change {
        switch intent {
        case let .make(juice): .make(juice)
        case let .restock(fruit, by): .restock(fruit, by: by)
        case let .setStock(fruit, to, from): .setStock(fruit, to: to, from: from)
        case .resetStock: .resetStock
        }
    }

    /// Each local intent against `StockModel`.
    static func localProblems(_ intent: Intent, by name: String, before: Replica<Self>, after: Replica<Self>,
                              result: Result<Operation<Change>?, Refusal>, counts: inout FuzzCounts) -> [String] {
        let expected = StockModel.outcome(of: change(for: intent), on: before.state.stock)
        switch result {
        case let .success(op?):
            let outcome = after.log.last?.id == op.id ? after.outcomes.last : after.outcome(of: op.id)
            if expected.outcome != .applied || (outcome != nil && outcome != .applied) {
                return ["\(intent) by \(name) on \(countsText(before.state)) recorded \(outcome as Any), the rules say \(expected.outcome)"]
            }
            if after.state.stock != expected.counts { return ["\(intent) on \(countsText(before.state)) gave \(countsText(after.state))"] }
        case .success(nil):
            if expected.outcome != .unchanged {
                return ["\(intent) by \(name) on \(countsText(before.state)) recorded nothing, the rules say \(expected.outcome)"]
            }
        case let .failure(refusal):
            if expected.outcome != .refused(refusal) {
                return ["\(intent) on \(countsText(before.state)) refused \(refusal), the rules say \(expected.outcome)"]
            }
        }
        return []
    }

    static func ledger(from start: State) -> Ledger { Ledger(stock: start.stock, made: start.made, recent: start.recent) }

    /// The hub's outcome against `StockModel` on the ledger's counts; then booked.
    static func book(_ op: Operation<Change>, outcome: Outcome<Refusal>, before: State, after: State,
                     in ledger: inout Ledger, counts: inout FuzzCounts) -> [String] {
        var problems: [String] = []
        let expected = StockModel.outcome(of: op.change, on: ledger.stock)
        if expected.outcome != outcome {
            problems.append("\(op.id) \(op.change) by \(op.author) on \(ledger.stock.sorted { $0.key < $1.key }.map(\.value)) was " +
                            "\(outcome), the rules say \(expected.outcome)")
        }
        switch (op.change, outcome) {
        case let (.make(juice), .applied):
            for (fruit, need) in juice.uses { ledger.stock[fruit, default: 0] -= need }
            ledger.made[juice, default: 0] += 1
            ledger.recent.append(MadeJuice(who: op.author, juice: juice))
            ledger.recent = Array(ledger.recent.suffix(20))
            counts.bump("makes applied by the hub")
        case let (.restock(fruit, by), .applied):
            ledger.stock[fruit, default: 0] += by
        case let (.setStock(fruit, to, from), .applied):
            ledger.stock[fruit, default: 0] += to - from
        case (.resetStock, .applied):
            for fruit in Fruit.allCases { ledger.stock[fruit, default: 0] += 10 - ledger.stock[fruit, default: 0] }
        default:
            break
        }
        return problems
    }

    /// Conservation.
    static func hubProblems(_ hub: Replica<Self>, ledger: Ledger) -> [String] {
        var problems: [String] = []
        for fruit in Fruit.allCases where hub.state.count(of: fruit) != ledger.stock[fruit] {
            problems.append("conservation: \(fruit) is \(hub.state.count(of: fruit)) on the hub, " +
                            "the ledger says \(ledger.stock[fruit] as Any)")
        }
        if hub.state.made != ledger.made { problems.append("made \(hub.state.made), the ledger says \(ledger.made)") }
        if hub.state.recent != ledger.recent { problems.append("recent differs from the applied makes") }
        return problems
    }

    /// JC2: a make its author showed as made, refused by the hub's order.
    static func tookBack(_ change: Change, now outcome: Outcome<Refusal>, counts: inout FuzzCounts) {
        if case .make = change, case .refused(.notEnoughFruit) = outcome {
            counts.bump("makes taken back on their author (JC2)")
        } else {
            counts.bump("other own outcomes changed")
        }
    }

    static func countStep(_ replicas: [Replica<Self>], counts: inout FuzzCounts) {
        let hub = replicas[0].state
        if Fruit.allCases.contains(where: { hub.count(of: $0) == 0 }) { counts.bump("steps with a fruit at 0") }
        if Fruit.allCases.contains(where: { hub.count(of: $0) == 999 }) { counts.bump("steps with a fruit at 999") }
    }

    static func describe(_ state: State) -> String { countsText(state) }
}
