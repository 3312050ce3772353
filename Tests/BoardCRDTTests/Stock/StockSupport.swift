import Testing
@testable import BoardCRDT

typealias Bar = Replica<FruitStock>
typealias BarOp = Operation<FruitStock.Change>

/// A stock with exactly these counts; every fruit not named is at 10 (J1).
func stockState(_ counts: [Fruit: Int] = [:], made: [Juice: Int] = [:], recent: [FruitStock.MadeJuice] = []) -> FruitStock.State {
    var all = FruitStock.fullStock
    for (fruit, count) in counts { all[fruit] = count }
    return FruitStock.State(stock: all, made: made, recent: recent)
}

/// A client replica of the juice bar (no compaction, the hub seals its
/// order, docs/SEMANTICS.md §7c), whose board starts from `state`.
func bar(_ id: UInt64, _ state: FruitStock.State? = nil,
         limits: ReplicaLimits = ReplicaLimits(compacts: false, hubSealsOrder: true)) -> Bar {
    let checkpoint = Checkpoint<FruitStock>(state: state ?? FruitStock.initialState, frontier: .origin, versions: VersionVector())
    return Bar(id: ReplicaID(id), checkpoint: checkpoint, limits: limits)
}

/// The hub's replica as SyncHub runs it: an acknowledged operation is final.
func hubBar(_ id: UInt64, _ state: FruitStock.State? = nil, keptOperations: Int = 1024) -> Bar {
    bar(id, state, limits: ReplicaLimits(keptOperations: keptOperations, sealsOrder: true))
}

/// Performs an intent that must record an operation and apply it; returns it.
@discardableResult
func order(_ replica: inout Bar, _ intent: FruitStock.Intent, by name: String) throws -> BarOp {
    let op = try #require(try replica.perform(intent, by: name), "\(intent) recorded nothing")
    #expect(replica.outcome(of: op.id) == .applied, "\(intent) by \(name) was prepared but not applied")
    return op
}

/// The refusal `intent` meets, or nil if it was accepted (or changed nothing).
func stockRefusal(_ replica: inout Bar, _ intent: FruitStock.Intent, by name: String = "ana") -> StockRefusal? {
    do {
        try replica.perform(intent, by: name)
        return nil
    } catch {
        return error
    }
}

/// The counts in J1's order, `"10 9 10 9 8"`, to keep expectations short.
func countsText(_ state: FruitStock.State) -> String {
    Fruit.allCases.map { String(state.count(of: $0)) }.joined(separator: " ")
}

/// The hub merges `ops` in this order; returns what it integrated (re-stamped
/// where the total order was sealed), which it relays to every client.
func hubTakesStock(_ hub: inout Bar, _ ops: [BarOp]) -> [BarOp] {
    let report = hub.receive(ops)
    #expect(report.refused.isEmpty, "\(report.refused)")
    return report.integratedOperations
}

/// Fails the test with every broken invariant of `replica`.
func expectStockInvariants(_ replica: Bar, sourceLocation: SourceLocation = #_sourceLocation) {
    let problems = replica.checkInvariants()
    #expect(problems.isEmpty, "\(problems)", sourceLocation: sourceLocation)
}

/// Applies `change` by `author` to `state` outside any replica.
func applied(_ change: FruitStock.Change, by author: String = "ana", to state: inout FruitStock.State,
             seq: UInt64 = 1) -> Outcome<StockRefusal> {
    FruitStock.apply(Operation(id: OperationID(replica: ReplicaID(1), seq: seq), lamport: seq, author: author, change: change), to: &state)
}

/// docs/rules/stock.md written again on plain counts, apart from
/// `FruitStock.apply`: what `change` should do to `counts` (J3-J5, J9).
/// The tests and the fuzzer compare the kind against it.
enum StockModel {
    static func outcome(of change: FruitStock.Change, on counts: [Fruit: Int]) -> (outcome: Outcome<StockRefusal>, counts: [Fruit: Int]) {
        var after = counts
        switch change {
        case let .make(juice):
            var short: [FruitStock.Shortfall] = []
            for (fruit, need) in juice.uses where counts[fruit, default: 0] < need {
                short.append(FruitStock.Shortfall(fruit: fruit, have: counts[fruit, default: 0], need: need))
            }
            if !short.isEmpty { return (.refused(.notEnoughFruit(juice, short)), counts) }
            for (fruit, need) in juice.uses { after[fruit, default: 0] -= need }
            return (.applied, after)
        case let .restock(fruit, by):
            let count = counts[fruit, default: 0]
            // In 0...999 exactly when -count <= by <= 999 - count; no sum that can overflow.
            guard by >= -count, by <= 999 - count else { return (.refused(.outOfRange(fruit, count: count, by: by)), counts) }
            if by == 0 { return (.unchanged, counts) }
            after[fruit] = count + by
            return (.applied, after)
        case let .setStock(fruit, to, from):
            let count = counts[fruit, default: 0]
            guard count == from else { return (.refused(.stale(fruit, now: count, saw: from)), counts) }
            guard to >= 0, to <= 999 else { return (.refused(.outOfRange(fruit, count: from, by: nil, to: to)), counts) }
            if to == from { return (.unchanged, counts) }
            after[fruit] = to
            return (.applied, after)
        case .resetStock:
            for fruit in Fruit.allCases { after[fruit] = 10 }
            return (after == counts ? .unchanged : .applied, after)
        }
    }
}
