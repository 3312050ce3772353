import Testing
@testable import BoardCRDT

/// docs/rules/stock.md JC1-JC4: several people at once, the sealing hub's
/// total order deciding (docs/SEMANTICS.md §7c); plus `apply`'s promise to
/// take any change in any state.
@Suite struct StockConcurrentTests {
    /// Mango at 3: Ana and Bo both make `mango`. Whichever the hub orders
    /// first is made; the other is refused "not enough fruit: mango 0 of 3".
    /// The loser's replica showed its juice made, takes it back and reports
    /// it (JC2); no replica ever shows a negative count.
    @Test(arguments: [true, false])
    func jc1TwoMakesThatEachFitButNotBothFirstInTheHubsOrderIsMade(anaFirst: Bool) throws {
        let start = stockState([.mango: 3])
        var hub = hubBar(100, start)
        var ana = bar(1, start), bo = bar(2, start)
        let anaOp = try order(&ana, .make(.mango), by: "ana")
        let boOp = try order(&bo, .make(.mango), by: "bo")
        #expect(ana.state.count(of: .mango) == 0 && bo.state.count(of: .mango) == 0, "each showed the juice made")
        #expect(anaOp.lamport == boOp.lamport, "truly concurrent")

        let (first, second) = anaFirst ? (anaOp, boOp) : (boOp, anaOp)
        let (winner, loser) = anaFirst ? ("ana", "bo") : ("bo", "ana")
        var relayed = hubTakesStock(&hub, [first])
        let secondReport = hub.receive([second])
        relayed += secondReport.integratedOperations
        let refusal = StockRefusal.notEnoughFruit(.mango, [.init(fruit: .mango, have: 0, need: 3)])
        #expect(hub.outcome(of: first.id) == .applied)
        #expect(hub.outcome(of: second.id) == .refused(refusal))
        #expect(refusal.message == "not enough fruit: mango 0 of 3")
        #expect(hub.state.count(of: .mango) == 0)
        #expect(hub.state.made == [.mango: 1])
        #expect(hub.state.recent == [.init(who: winner, juice: .mango)])
        // Ana's make (replica 1) sorts before Bo's at equal Lamport times:
        // taken after it, the hub re-stamps it after Bo's, which it acked.
        #expect(secondReport.restamped == (anaFirst ? [] : [anaOp.id]))

        // Relayed to the other client, and to the author when re-stamped.
        let anaReport = ana.receive(anaFirst ? relayed.filter { $0.id != anaOp.id } : relayed)
        let boReport = bo.receive(relayed.filter { $0.id != boOp.id })
        let loserReport = anaFirst ? boReport : anaReport
        let winnerReport = anaFirst ? anaReport : boReport
        #expect(loserReport.changedOutcomes.count == 1)
        #expect(loserReport.changedOutcomes.first?.0 == second.id)
        #expect(loserReport.changedOutcomes.first?.1 == .refused(refusal), "JC2: \(loser) is told")
        #expect(winnerReport.changedOutcomes.isEmpty, "\(winner)'s juice stays made")
        for replica in [hub, ana, bo] {
            #expect(replica.state == hub.state)
            #expect(replica.outcome(of: first.id) == .applied && replica.outcome(of: second.id) == .refused(refusal))
            expectStockInvariants(replica)
        }
    }

    /// Two makes that fit together both go through, in either order.
    @Test func jc1MakesThatFitTogetherAreAllMade() throws {
        let start = stockState([.mango: 6, .kiwi: 1])
        var hub = hubBar(100, start)
        var ana = bar(1, start), bo = bar(2, start)
        let ops = [try order(&bo, .make(.mango), by: "bo"), try order(&ana, .make(.mangoKiwi), by: "ana")]
        _ = hubTakesStock(&hub, ops)
        #expect(ops.map { hub.outcome(of: $0.id) } == [.applied, .applied])
        #expect(countsText(hub.state) == "10 10 10 0 1")
    }

    /// JC1 with juices sharing a fruit in different amounts: whatever order
    /// three makes arrive in at a replica, no count goes below zero, and
    /// every replica agrees on which were made.
    @Test func jc1NoReplicaEverShowsANegativeCountWhateverTheOrder() throws {
        let start = stockState([.mango: 4, .kiwi: 3])
        var clients = [bar(1, start), bar(2, start), bar(3, start)]
        let ops = [try order(&clients[0], .make(.mangoKiwi), by: "ana"),
                   try order(&clients[1], .make(.kiwi), by: "bo"),
                   try order(&clients[2], .make(.mango), by: "cy")]
        var states: [FruitStock.State] = []
        for permutation in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
            var replica = bar(9, start)
            for index in permutation {
                replica.receive(ops[index])
                #expect(FruitStock.violations(of: replica.state).isEmpty, "\(permutation)")
            }
            states.append(replica.state)
            // Through a sealing hub in this order: each is checked against
            // the stock the ones before it left.
            var hub = hubBar(100, start)
            let relayed = hubTakesStock(&hub, permutation.map { ops[$0] })
            var model = start.stock
            for index in permutation {
                let expected = StockModel.outcome(of: ops[index].change, on: model)
                #expect(hub.outcome(of: ops[index].id) == expected.outcome, "\(permutation)")
                model = expected.counts
            }
            #expect(hub.outcome(of: ops[permutation[0]].id) == .applied, "the first in the hub's order is made")
            #expect(hub.state.stock == model)
            for index in clients.indices {
                var client = clients[index]
                client.receive(relayed)
                #expect(client.state == hub.state)
                expectStockInvariants(client)
            }
        }
        #expect(Set(states.map(countsText)).count == 1, "without a hub, the stamp order decides the same everywhere")
    }

    /// JC3: three people press +1 at once: the count rises by 3, in any order,
    /// on the hub and on every client.
    @Test func jc3ConcurrentRestocksAllCount() throws {
        var clients = [bar(1), bar(2), bar(3)]
        var ops: [BarOp] = []
        for index in clients.indices { ops.append(try order(&clients[index], .restock(.kiwi, by: 1), by: "p\(index)")) }
        ops.append(try order(&clients[0], .restock(.kiwi, by: -1), by: "p0"))
        for permutation in [[0, 1, 2, 3], [2, 1, 0, 3], [1, 3, 0, 2], [3, 2, 1, 0]] {
            var hub = hubBar(100)
            var relayed: [BarOp] = []
            for index in permutation { relayed += hubTakesStock(&hub, [ops[index]]) }
            #expect(hub.state.count(of: .kiwi) == 12, "+1 +1 +1 -1 from 10")
            #expect(ops.allSatisfy { hub.outcome(of: $0.id) == .applied })
            for index in clients.indices {
                var client = clients[index]
                let report = client.receive(relayed)
                #expect(client.state == hub.state)
                #expect(report.changedOutcomes.isEmpty, "nobody's restock was taken back")
            }
        }
    }

    /// JC3 at the top of the range: the restock that would pass 999 is the
    /// one refused, by the hub's order.
    @Test func jc3RestocksPastTheTopAreRefusedInTheHubsOrder() throws {
        let start = stockState([.kiwi: 998])
        var hub = hubBar(100, start)
        var ana = bar(1, start), bo = bar(2, start)
        let anaOp = try order(&ana, .restock(.kiwi, by: 1), by: "ana")
        let boOp = try order(&bo, .restock(.kiwi, by: 1), by: "bo")
        let relayed = hubTakesStock(&hub, [boOp, anaOp])
        #expect(hub.outcome(of: boOp.id) == .applied)
        #expect(hub.outcome(of: anaOp.id) == .refused(.outOfRange(.kiwi, count: 999, by: 1)))
        let report = ana.receive(relayed)
        #expect(report.changedOutcomes.map(\.1) == [.refused(.outOfRange(.kiwi, count: 999, by: 1))])
        #expect(ana.state == hub.state && ana.state.count(of: .kiwi) == 999)
    }

    /// JC4: Ana makes a kiwi juice while Bo edits kiwi from the 10 he saw.
    /// Make first: the edit is refused stale with the current count, the
    /// juice stays made. Edit first: the make takes its kiwi from the new count.
    @Test(arguments: [true, false])
    func jc4SetStockRacingWithAMakeNeverUndoesTheMake(makeFirst: Bool) throws {
        var hub = hubBar(100)
        var ana = bar(1), bo = bar(2)
        let make = try order(&ana, .make(.kiwi), by: "ana")
        let edit = try order(&bo, .setStock(.kiwi, to: 20, from: 10), by: "bo")
        #expect(ana.state.count(of: .kiwi) == 7 && bo.state.count(of: .kiwi) == 20)
        let relayed = hubTakesStock(&hub, makeFirst ? [make, edit] : [edit, make])
        #expect(hub.outcome(of: make.id) == .applied, "the make is never undone")
        #expect(hub.state.made == [.kiwi: 1])
        if makeFirst {
            let stale = StockRefusal.stale(.kiwi, now: 7, saw: 10)
            #expect(hub.outcome(of: edit.id) == .refused(stale))
            #expect(stale.message == "kiwi is now 7, not 10: someone changed it; look again and edit from 7")
            #expect(hub.state.count(of: .kiwi) == 7)
            let report = bo.receive(relayed)
            #expect(report.changedOutcomes.count == 1 && report.changedOutcomes.first?.1 == .refused(stale), "Bo is told")
        } else {
            #expect(hub.outcome(of: edit.id) == .applied)
            #expect(hub.state.count(of: .kiwi) == 17, "the make takes its 3 from Bo's 20")
            let report = ana.receive(relayed)
            #expect(report.changedOutcomes.isEmpty)
        }
        ana.receive(relayed)
        bo.receive(relayed)
        #expect(ana.state == hub.state && bo.state == hub.state)
        for replica in [hub, ana, bo] { expectStockInvariants(replica) }
    }

    /// JC4 also when the make's total order is decided without the hub
    /// sealing: a set_stock ordered after a make it did not see is stale.
    @Test func jc4WithoutAHubTheStampOrderDecidesTheSameEverywhere() throws {
        var ana = bar(1), bo = bar(2)
        let make = try order(&ana, .make(.kiwi), by: "ana")
        let edit = try order(&bo, .setStock(.kiwi, to: 20, from: 10), by: "bo")
        ana.receive(edit)
        bo.receive(make)
        #expect(ana.state == bo.state)
        #expect(ana.outcome(of: make.id) == .applied && bo.outcome(of: make.id) == .applied)
        #expect(ana.outcome(of: edit.id) == .refused(.stale(.kiwi, now: 7, saw: 10)), "(1, 1) sorts before (1, 2)")
    }

    /// A reset racing with a make: the make is made or refused by the hub's
    /// order, never half of it; what was made stays counted.
    @Test func resetRacingWithAMake() throws {
        let start = stockState([.mango: 2])
        var hub = hubBar(100, start)
        var ana = bar(1, start), bo = bar(2, start)
        let reset = try order(&ana, .resetStock, by: "ana")
        let make = try order(&bo, .make(.mangoKiwi), by: "bo")
        let relayed = hubTakesStock(&hub, [make, reset])
        #expect(hub.outcome(of: make.id) == .applied && hub.outcome(of: reset.id) == .applied)
        #expect(countsText(hub.state) == "10 10 10 10 10" && hub.state.made == [.mangoKiwi: 1])
        ana.receive(relayed)
        bo.receive(relayed)
        #expect(ana.state == hub.state && bo.state == hub.state)
    }

    // MARK: A sealing hub that compacts

    /// Found by the stock fuzzer (seeds 356548, 356555), fixed in
    /// `Replica.compact`: Ana's second make reaches the hub before her
    /// first (a frame lost to the rate limiter, say) and waits in the
    /// pending buffer; Bo's operations make the hub compact past its
    /// tentative stamp. The hub used to retire Ana's replica then, refusing
    /// both makes `stale` and, as her replica keeps its id with a sealing
    /// hub, every later operation of hers. A sealing hub re-stamps them
    /// after what it integrated (§7c).
    @Test func sealingHubKeepsBufferedOperationsAcrossACompaction() throws {
        var hub = hubBar(100, stockState([.mango: 9]), keptOperations: 1)
        var ana = bar(1, stockState([.mango: 9])), bo = bar(2, stockState([.mango: 9]))
        let anaOps = [try order(&ana, .make(.mango), by: "ana"), try order(&ana, .make(.mango), by: "ana")]
        let boOps = [try order(&bo, .restock(.kiwi, by: 1), by: "bo"), try order(&bo, .restock(.kiwi, by: 1), by: "bo"),
                     try order(&bo, .restock(.kiwi, by: 1), by: "bo")]
        #expect(hub.receive([anaOps[1]]).buffered == 1)
        _ = hubTakesStock(&hub, boOps)
        #expect(hub.checkpoint.frontier > anaOps[1].stamp, "the hub compacted past Ana's buffered make")
        let report = hub.receive([anaOps[0]])
        #expect(report.refused.isEmpty, "\(report.refused)")
        #expect(report.integrated == anaOps.map(\.id))
        #expect(Set(report.restamped) == Set(anaOps.map(\.id)))
        #expect(hub.state.count(of: .mango) == 3 && hub.state.count(of: .kiwi) == 13)
        expectStockInvariants(hub)
        // Relayed back, Ana's replica moves both and still shows both juices made.
        let anaReport = ana.receive(report.integratedOperations)
        #expect(anaReport.changedOutcomes.isEmpty)
        ana.receive(boOps)
        #expect(ana.state == hub.state)
        expectStockInvariants(ana)
    }

    // MARK: apply takes everything

    static let everyChange: [FruitStock.Change] = {
        var changes: [FruitStock.Change] = Juice.allCases.map { .make($0) } + [.resetStock]
        let bys = [0, 1, -1, 2, -2, 3, -3, 16, -16, 989, 990, -10, -11, 998, 999, -999, 1000, -1000,
                   Int.max, Int.min, Int.max - 5, Int.min + 1, Int.max / 2, Int.min / 2]
        let tos = [-1, 0, 1, 9, 10, 11, 998, 999, 1000, Int.max, Int.min]
        let froms = [-1, 0, 1, 3, 10, 500, 998, 999, 1000, Int.max, Int.min]
        for fruit in Fruit.allCases {
            for by in bys { changes.append(.restock(fruit, by: by)) }
            for to in tos {
                for from in froms { changes.append(.setStock(fruit, to: to, from: from)) }
            }
        }
        return changes
    }()

    static var everyState: [FruitStock.State] {
        let zeros = Dictionary(uniqueKeysWithValues: Fruit.allCases.map { ($0, 0) })
        let tops = Dictionary(uniqueKeysWithValues: Fruit.allCases.map { ($0, 999) })
        let full = (0..<20).map { FruitStock.MadeJuice(who: "p\($0)", juice: Juice.allCases[$0 % 7]) }
        return [
            FruitStock.initialState,
            stockState(zeros),
            stockState(tops),
            stockState([.strawberry: 16, .banana: 1, .pineapple: 998, .kiwi: 0, .mango: 3]),
            stockState([.strawberry: 15, .banana: 2, .pineapple: 1, .kiwi: 999, .mango: 2], made: [.mango: 7], recent: full),
            stockState([.strawberry: 10, .banana: 10, .mango: 500], made: [.mangoKiwi: Int.max, .kiwi: Int.max - 1, .mango: 0],
                       recent: Array(full.prefix(19))),
        ]
    }

    /// `apply` takes any change in any state (huge `by`, `to` outside the
    /// range, stale `from`) without trapping, keeps every invariant, says
    /// `.applied` exactly when the state changed, changes nothing when it
    /// refuses, and does what the rules say (`StockModel`).
    @Test func applyAcceptsEveryChangeInEveryState() {
        var seq: UInt64 = 0
        for state in Self.everyState {
            #expect(FruitStock.violations(of: state).isEmpty)
            for change in Self.everyChange {
                for author in ["", "ana", String(repeating: "z", count: 300)] {
                    seq += 1
                    var after = state
                    let outcome = applied(change, by: author, to: &after, seq: seq)
                    #expect((outcome == .applied) == (after != state), "\(change) by \(author): \(outcome)")
                    if outcome != .applied { #expect(after == state, "\(change): \(outcome) changed the state") }
                    let problems = FruitStock.violations(of: after)
                    #expect(problems.isEmpty, "\(change): \(problems)")
                    let expected = StockModel.outcome(of: change, on: state.stock)
                    #expect(outcome == expected.outcome, "\(change) on \(countsText(state))")
                    #expect(after.stock == expected.counts, "\(change) on \(countsText(state))")
                    if case let .make(juice) = change, outcome == .applied {
                        #expect(after.recent.last == FruitStock.MadeJuice(who: author, juice: juice))
                        #expect(after.recent.count == min(state.recent.count + 1, 20))
                        #expect(after.made[juice, default: 0] >= state.made[juice, default: 0])
                    } else {
                        #expect(after.made == state.made && after.recent == state.recent)
                    }
                }
            }
        }
    }

    /// A make delivered twice under one id is made once; the same change
    /// sent again as a new operation is a second make.
    @Test func duplicatedOperationsAreIgnored() throws {
        var ana = bar(1), bo = bar(2)
        let op = try order(&ana, .make(.kiwi), by: "ana")
        let report = bo.receive([op, op, op])
        #expect(report.duplicates == 2)
        #expect(bo.state == ana.state && bo.state.count(of: .kiwi) == 7)
        let again = try order(&ana, .make(.kiwi), by: "ana")
        bo.receive([again, op])
        #expect(bo.state.count(of: .kiwi) == 4 && bo.state.made == [.kiwi: 2])
    }
}
