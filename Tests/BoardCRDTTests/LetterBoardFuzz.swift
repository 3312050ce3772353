@testable import BoardCRDT

/// The letter board in the convergence fuzz (peers; see `ConvergenceTests`):
/// a small alphabet so replicas pick the same letters, every local intent
/// checked against the sequential rules B4-B10 (docs/rules/letters.md) on a
/// plain array, and at the end every replica checked against
/// `ReferenceModel` (order, who selected each letter, versions, outcomes).
extension LetterBoard: FuzzedKind {
    typealias Ledger = Void

    static var fuzz: FuzzSetup {
        FuzzSetup(title: "Letter board",
                  knobs: FuzzKnobs(prefix: "BOARDCRDT", defaultSeed: 0xB0A2_D000, defaultSchedules: 5_000 * 4, shards: 4),
                  filter: "Convergence", topology: .peers, steps: 30...80)
    }

    static func start(_ rng: inout SplitMix64) -> (state: State, late: Bool) { (initialState, false) }

    static func randomIntent(_ rng: inout SplitMix64, in state: State, by name: String) -> Intent {
        let order = state.order
        // A small alphabet most of the time, so replicas pick the same letters.
        let anyLetter = Letter(index: rng.below(rng.percent(80) ? 9 : 26))!
        let someSelected = order.isEmpty || rng.percent(15) ? anyLetter : order[rng.below(order.count)]
        let roll = rng.below(100)
        return roll < 62 ? .select(anyLetter)
            : roll < 76 ? .deselect(someSelected)
            : roll < 97 ? .move(someSelected, to: rng.inRange(0...order.count + 1))
            : .reset
    }

    /// What the rules say `intent` does to `order`, on a plain array.
    static func expected(_ intent: Intent, on order: [Letter]) -> (order: [Letter], refusal: BoardRefusal?) {
        var expected = order
        switch intent {
        case let .select(letter):
            if !order.contains(letter) {
                if order.count >= 6 { return (order, .boardFull) }
                expected.append(letter)
            }
        case let .deselect(letter):
            expected.removeAll { $0 == letter }
        case let .move(letter, place):
            guard let from = order.firstIndex(of: letter) else { return (order, .notSelected(letter)) }
            guard (1...max(order.count, 1)).contains(place) else { return (order, .placeOutOfRange(place, count: order.count)) }
            expected.remove(at: from)
            expected.insert(letter, at: place - 1)
        case .reset:
            expected = []
        }
        return (expected, nil)
    }

    static func localProblems(_ intent: Intent, by name: String, before: Replica<Self>, after: Replica<Self>,
                              result: Result<Operation<Change>?, Refusal>, counts: inout FuzzCounts) -> [String] {
        let order = before.state.order
        let (expected, expectedRefusal) = Self.expected(intent, on: order)
        switch result {
        case let .failure(refusal):
            counts.bump("refused intents")
            return refusal == expectedRefusal ? [] : ["\(intent) on \(order) refused with \(refusal), expected \(expectedRefusal as Any)"]
        case let .success(op):
            if let expectedRefusal { return ["\(intent) was accepted, expected \(expectedRefusal.code)"] }
            if after.state.order != expected { return ["\(intent) on \(order) gave \(after.state.order), expected \(expected)"] }
            if let op, after.outcome(of: op.id) != .applied { return ["local \(intent) not applied"] }
            return []
        }
    }

    static func countStep(_ replicas: [Replica<Self>], counts: inout FuzzCounts) {
        if replicas.contains(where: { $0.state.order.count == 6 }) { counts.bump("steps with a full board") }
    }

    /// Every replica against `ReferenceModel`, which sees every operation
    /// ever made (rebased ones included) and every checkpoint.
    static func finalProblems(_ replicas: [Replica<Self>], made: [Operation<Change>],
                              checkpoints: [(frontier: Stamp, versions: VersionVector)]) -> [String] {
        let expected = ReferenceModel.run(made: made, checkpoints: checkpoints)
        var problems: [String] = []
        for replica in replicas {
            let selections = replica.state.selections
            if selections.map(\.letter) != expected.selections.map(\.0) || selections.map(\.selectedBy) != expected.selections.map(\.1) {
                problems.append("\(replica.id) shows \(replica.state.order), the reference \(expected.selections.map(\.0))")
            }
            if replica.versions.entries != expected.versions {
                problems.append("\(replica.id) versions \(replica.versions.entries), reference \(expected.versions)")
            }
            for (op, outcome) in zip(replica.log, replica.outcomes) where expected.outcomes[op.id] != outcome {
                problems.append("\(replica.id): \(op.id) \(op.change) was \(outcome), reference \(expected.outcomes[op.id] as Any)")
            }
        }
        return problems
    }

    static func describe(_ state: State) -> String { "\(state.order)" }
}
