import Foundation
import Testing
@testable import BoardCRDT

/// docs/rules/stock.md J1-J9 on one replica: the sequential rules every
/// merge replays.
@Suite struct StockRuleTests {
    // MARK: J1 fruit

    @Test func j1FiveFruitsEachStartingAtTenWithinZeroTo999() {
        #expect(Fruit.allCases.map(\.rawValue) == ["strawberry", "banana", "pineapple", "kiwi", "mango"])
        #expect(Fruit.allCases.sorted() == Fruit.allCases, "shown in J1's order")
        #expect(FruitStock.startingCount == 10)
        #expect(FruitStock.counts == 0...999)
        let fresh = FruitStock.initialState
        for fruit in Fruit.allCases { #expect(fresh.count(of: fruit) == 10) }
        #expect(fresh.stock.count == 5)
        #expect(FruitStock.violations(of: fresh).isEmpty)
        #expect(FruitStock.violations(of: stockState([.kiwi: 0, .mango: 999])).isEmpty)
    }

    @Test func j1ViolationsNameEveryBrokenCount() {
        #expect(FruitStock.violations(of: stockState([.kiwi: 1000])) == ["kiwi is 1000, outside 0...999"])
        #expect(FruitStock.violations(of: stockState([.banana: -1])) == ["banana is -1, outside 0...999"])
        var missing = FruitStock.initialState
        missing.stock[.mango] = nil
        #expect(FruitStock.violations(of: missing) == ["mango has no count"])
        #expect(FruitStock.violations(of: stockState(made: [.kiwi: -1])) == ["kiwi made -1 times"])
        let many = Array(repeating: FruitStock.MadeJuice(who: "ana", juice: .kiwi), count: 21)
        #expect(FruitStock.violations(of: stockState(recent: many)) == ["21 recent makes kept, more than 20"])
    }

    // MARK: J2 juices

    @Test func j2SevenJuicesWithTheirIdsNamesAndFruit() {
        #expect(Juice.allCases.map(\.rawValue) == ["strawberry", "banana", "kiwi", "pineapple", "strawberry_banana", "mango", "mango_kiwi"])
        #expect(Juice.allCases.map(\.title) == ["Strawberry juice", "Banana juice", "Kiwi juice", "Pineapple juice",
                                                "Strawberry-banana juice", "Mango juice", "Mango-kiwi juice"])
        func uses(_ juice: Juice) -> String { juice.uses.map { "\($0.count) \($0.fruit)" }.joined(separator: ", ") }
        #expect(uses(.strawberry) == "16 strawberry")
        #expect(uses(.banana) == "2 banana")
        #expect(uses(.kiwi) == "3 kiwi")
        #expect(uses(.pineapple) == "2 pineapple")
        #expect(uses(.strawberryBanana) == "10 strawberry, 1 banana")
        #expect(uses(.mango) == "3 mango")
        #expect(uses(.mangoKiwi) == "2 mango, 1 kiwi")
        #expect(Juice.strawberry.uses[0].count > FruitStock.startingCount, "a plain strawberry juice needs more than the starting stock")
    }

    // MARK: J3 make

    @Test func j3MakeTakesAllItsFruitAtOnce() throws {
        var replica = bar(1)
        let op = try order(&replica, .make(.mangoKiwi), by: "ana")
        #expect(op.change == .make(.mangoKiwi))
        #expect(countsText(replica.state) == "10 10 10 9 8")
        try order(&replica, .make(.strawberryBanana), by: "bo")
        #expect(countsText(replica.state) == "0 9 10 9 8")
        expectStockInvariants(replica)
    }

    @Test func j3MakeTakesAllItsFruitAtOnceOrNothing() throws {
        var replica = bar(1, stockState([.strawberry: 4]))
        let refusal = try #require(stockRefusal(&replica, .make(.strawberry)))
        #expect(refusal == .notEnoughFruit(.strawberry, [FruitStock.Shortfall(fruit: .strawberry, have: 4, need: 16)]))
        #expect(refusal.code == "not_enough_fruit")
        #expect(refusal.message == "not enough fruit: strawberry 4 of 16")
        #expect(countsText(replica.state) == "4 10 10 10 10", "nothing taken")
        #expect(replica.log.isEmpty, "a refused intent is never recorded")
        #expect(replica.state.made.isEmpty && replica.state.recent.isEmpty)

        // Strawberry-banana lacks only strawberry: the banana stays too.
        let partly = try #require(stockRefusal(&replica, .make(.strawberryBanana)))
        #expect(partly.message == "not enough fruit: strawberry 4 of 10")
        #expect(countsText(replica.state) == "4 10 10 10 10")
    }

    @Test func j3RefusalListsEveryShortFruit() throws {
        var replica = bar(1, stockState([.mango: 1, .kiwi: 0]))
        let refusal = try #require(stockRefusal(&replica, .make(.mangoKiwi)))
        #expect(refusal.message == "not enough fruit: mango 1 of 2, kiwi 0 of 1")
        #expect(refusal == .notEnoughFruit(.mangoKiwi, [.init(fruit: .mango, have: 1, need: 2), .init(fruit: .kiwi, have: 0, need: 1)]))
        var both = bar(2, stockState([.strawberry: 9, .banana: 0]))
        #expect(stockRefusal(&both, .make(.strawberryBanana))?.message == "not enough fruit: strawberry 9 of 10, banana 0 of 1")
        #expect(countsText(both.state) == "9 0 10 10 10")
    }

    @Test func j3MakeTakingTheLastFruitLeavesZero() throws {
        var replica = bar(1, stockState([.strawberry: 16]))
        try order(&replica, .make(.strawberry), by: "ana")
        #expect(replica.state.count(of: .strawberry) == 0)
        #expect(stockRefusal(&replica, .make(.strawberry))?.message == "not enough fruit: strawberry 0 of 16")
    }

    @Test func j3AMakeReplayedWhereItIsShortIsRefusedAndTakesNothing() {
        // The same check where the change lands (another replica's make).
        var state = stockState([.mango: 2, .kiwi: 5])
        let before = state
        #expect(applied(.make(.mango), to: &state) == .refused(.notEnoughFruit(.mango, [.init(fruit: .mango, have: 2, need: 3)])))
        #expect(state == before)
        #expect(applied(.make(.mangoKiwi), to: &state) == .applied)
        #expect(countsText(state) == "10 10 10 4 0")
    }

    // MARK: J4 restock

    @Test func j4RestockAddsBy() throws {
        var replica = bar(1)
        try order(&replica, .restock(.kiwi, by: 1), by: "ana")
        #expect(replica.state.count(of: .kiwi) == 11)
        try order(&replica, .restock(.kiwi, by: -1), by: "ana")
        try order(&replica, .restock(.kiwi, by: -1), by: "ana")
        #expect(replica.state.count(of: .kiwi) == 9)
        try order(&replica, .restock(.mango, by: 500), by: "bo")
        #expect(replica.state.count(of: .mango) == 510)
        try order(&replica, .restock(.mango, by: -510), by: "bo")
        #expect(replica.state.count(of: .mango) == 0, "down to exactly 0")
        try order(&replica, .restock(.mango, by: 999), by: "bo")
        #expect(replica.state.count(of: .mango) == 999, "up to exactly 999")
        #expect(try replica.perform(.restock(.mango, by: 0), by: "bo") == nil, "by 0 changes nothing")
        #expect(countsText(replica.state) == "10 10 10 9 999")
    }

    @Test func j4RestockOutOfRangeIsRefusedAtBothEnds() throws {
        var top = bar(1, stockState([.kiwi: 999]))
        let over = try #require(stockRefusal(&top, .restock(.kiwi, by: 1)))
        #expect(over == .outOfRange(.kiwi, count: 999, by: 1))
        #expect(over.code == "out_of_range")
        #expect(over.message == "kiwi is 999; +1 would take it outside 0 to 999")
        #expect(top.state.count(of: .kiwi) == 999 && top.log.isEmpty)

        var bottom = bar(2, stockState([.banana: 0]))
        let under = try #require(stockRefusal(&bottom, .restock(.banana, by: -1)))
        #expect(under == .outOfRange(.banana, count: 0, by: -1))
        #expect(under.message == "banana is 0; -1 would take it outside 0 to 999")
        #expect(bottom.state.count(of: .banana) == 0 && bottom.log.isEmpty)

        var mid = bar(3)
        #expect(stockRefusal(&mid, .restock(.mango, by: 990))?.message == "mango is 10; +990 would take it outside 0 to 999")
        #expect(stockRefusal(&mid, .restock(.mango, by: -11))?.code == "out_of_range")
        #expect(countsText(mid.state) == "10 10 10 10 10")
    }

    @Test(arguments: [Int.max, Int.min, Int.max - 5, Int.min + 1, 1 << 40, -(1 << 40)])
    func j4RestockByHugeAmountsIsRefusedWithoutOverflow(by: Int) throws {
        var replica = bar(1, stockState([.pineapple: 999, .kiwi: 0]))
        for fruit in [Fruit.pineapple, .kiwi, .mango] {
            let refusal = try #require(stockRefusal(&replica, .restock(fruit, by: by)))
            #expect(refusal.code == "out_of_range")
            #expect(refusal.message.contains("would take it outside 0 to 999"))
        }
        #expect(countsText(replica.state) == "10 10 999 0 10")
    }

    // MARK: J5 set_stock

    @Test func j5SetStockWritesOverTheCountTheEditorSaw() throws {
        var replica = bar(1, stockState([.kiwi: 9]))
        try order(&replica, .setStock(.kiwi, to: 12, from: 9), by: "ana")
        #expect(replica.state.count(of: .kiwi) == 12)
        try order(&replica, .setStock(.kiwi, to: 0, from: 12), by: "ana")
        try order(&replica, .setStock(.mango, to: 999, from: 10), by: "ana")
        #expect(countsText(replica.state) == "10 10 10 0 999")
        #expect(try replica.perform(.setStock(.mango, to: 999, from: 999), by: "ana") == nil, "setting what is there changes nothing")
    }

    @Test func j5SetStockOverAStaleCountIsRefusedWithTheCurrentCount() throws {
        var replica = bar(1, stockState([.kiwi: 9]))
        let refusal = try #require(stockRefusal(&replica, .setStock(.kiwi, to: 12, from: 10)))
        #expect(refusal == .stale(.kiwi, now: 9, saw: 10))
        #expect(refusal.code == "stale")
        #expect(refusal.message == "kiwi is now 9, not 10: someone changed it; look again and edit from 9")
        #expect(replica.state.count(of: .kiwi) == 9 && replica.log.isEmpty)
        // Even a write of what is there now is stale over another count.
        #expect(stockRefusal(&replica, .setStock(.kiwi, to: 9, from: 10)) == .stale(.kiwi, now: 9, saw: 10))
        #expect(stockRefusal(&replica, .setStock(.kiwi, to: 5, from: -1)) == .stale(.kiwi, now: 9, saw: -1))
    }

    @Test(arguments: [1000, -1, Int.max, Int.min])
    func j5SetStockOutsideTheRangeIsRefused(to: Int) throws {
        var replica = bar(1, stockState([.kiwi: 9]))
        let refusal = try #require(stockRefusal(&replica, .setStock(.kiwi, to: to, from: 9)))
        #expect(refusal == .outOfRange(.kiwi, count: 9, by: nil, to: to))
        #expect(refusal.code == "out_of_range")
        #expect(refusal.message == "kiwi cannot be set to \(to); counts stay within 0 to 999")
        #expect(replica.state.count(of: .kiwi) == 9 && replica.log.isEmpty)
    }

    // MARK: J6 can_make

    @Test func j6CanMakeForEveryJuiceAsInTheExample() {
        let state = stockState([.banana: 9, .kiwi: 9, .mango: 8])
        let canMake = Dictionary(uniqueKeysWithValues: Juice.allCases.map { ($0, state.canMake($0)) })
        #expect(canMake == [.strawberry: 0, .banana: 4, .kiwi: 3, .pineapple: 5, .strawberryBanana: 1, .mango: 2, .mangoKiwi: 4])
        #expect(Juice.allCases.map { FruitStock.initialState.canMake($0) } == [0, 5, 3, 5, 1, 3, 5])
        let empty = stockState([.strawberry: 0, .banana: 0, .pineapple: 0, .kiwi: 0, .mango: 0])
        #expect(Juice.allCases.allSatisfy { empty.canMake($0) == 0 })
        let full = stockState([.strawberry: 999, .banana: 999, .pineapple: 999, .kiwi: 999, .mango: 999])
        #expect(Juice.allCases.map { full.canMake($0) } == [62, 499, 333, 499, 99, 333, 499])
    }

    /// J6 is exactly how many makes in a row go through, for every juice.
    @Test func j6CanMakeCountsTheMakesThatGoThrough() throws {
        var rng = SplitMix64(seed: 6)
        for _ in 0..<60 {
            var counts: [Fruit: Int] = [:]
            for fruit in Fruit.allCases { counts[fruit] = rng.percent(30) ? rng.inRange(0...3) : rng.inRange(0...60) }
            for juice in Juice.allCases {
                var state = stockState(counts)
                let expected = state.canMake(juice)
                var made = 0
                while applied(.make(juice), to: &state) == .applied { made += 1 }
                #expect(made == expected, "\(juice) from \(counts)")
                #expect(state.canMake(juice) == 0)
                #expect(!state.shortfall(for: juice).isEmpty)
            }
        }
    }

    // MARK: J7 made and recent

    @Test func j7MakesAreCountedPerJuiceAndTheLast20Kept() throws {
        var replica = bar(1, stockState([.strawberry: 999, .banana: 999, .pineapple: 999, .kiwi: 999, .mango: 999]))
        var expected: [FruitStock.MadeJuice] = []
        let names = ["ana", "bo", "cy"]
        for index in 0..<25 {
            let juice = Juice.allCases[index % Juice.allCases.count]
            let who = names[index % names.count]
            try order(&replica, .make(juice), by: who)
            expected.append(.init(who: who, juice: juice))
            #expect(replica.state.recent == Array(expected.suffix(20)), "oldest first, at most 20")
        }
        #expect(replica.state.recent.count == 20)
        #expect(replica.state.recent.first == FruitStock.MadeJuice(who: "cy", juice: .mango), "make 6 is the oldest kept")
        #expect(replica.state.recent.last == FruitStock.MadeJuice(who: "ana", juice: .pineapple))
        #expect(replica.state.made == [.strawberry: 4, .banana: 4, .kiwi: 4, .pineapple: 4, .strawberryBanana: 3, .mango: 3, .mangoKiwi: 3])
        expectStockInvariants(replica)
    }

    @Test func j7RefusedMakesAndOtherChangesAreNotCounted() throws {
        var replica = bar(1, stockState([.mango: 3]))
        try order(&replica, .make(.mango), by: "ana")
        #expect(stockRefusal(&replica, .make(.mango), by: "bo") != nil)
        try order(&replica, .restock(.mango, by: 1), by: "bo")
        try order(&replica, .setStock(.kiwi, to: 4, from: 10), by: "bo")
        try order(&replica, .resetStock, by: "bo")
        #expect(replica.state.made == [.mango: 1])
        #expect(replica.state.recent == [.init(who: "ana", juice: .mango)])
        // A make refused where it lands counts nothing either.
        var state = stockState([.mango: 0])
        #expect(applied(.make(.mango), by: "cy", to: &state).isRefused)
        #expect(state.made.isEmpty && state.recent.isEmpty)
    }

    // MARK: J8 the stock outlives restarts

    /// The hub stores its checkpoint and its operations as JSON; a hub
    /// restarted from them holds the same stock, counts and recent makes.
    @Test func j8StockSurvivesARestartFromTheStoredCheckpointAndOperations() throws {
        var hub = hubBar(100, keptOperations: 2)
        try order(&hub, .make(.mangoKiwi), by: "ana")
        try order(&hub, .restock(.kiwi, by: 5), by: "bo")
        try order(&hub, .setStock(.strawberry, to: 40, from: 10), by: "bo")
        try order(&hub, .make(.strawberry), by: "cy")
        try order(&hub, .make(.banana), by: "ana")
        #expect(hub.checkpoint.frontier != .origin, "part of it is in the checkpoint")
        let storedCheckpoint = try JSONEncoder().encode(hub.checkpoint)
        let storedLog = try hub.log.map { try JSONEncoder().encode($0) }

        let checkpoint = try JSONDecoder().decode(Checkpoint<FruitStock>.self, from: storedCheckpoint)
        var restarted = Bar(id: hub.id, checkpoint: checkpoint, limits: hub.limits)
        let report = restarted.receive(try storedLog.map { try JSONDecoder().decode(BarOp.self, from: $0) })
        #expect(report.refused.isEmpty)
        #expect(restarted.state == hub.state)
        #expect(countsText(restarted.state) == "24 8 10 14 8")
        #expect(restarted.state.made == [.mangoKiwi: 1, .strawberry: 1, .banana: 1])
        #expect(restarted.state.recent.map(\.who) == ["ana", "cy", "ana"])
        expectStockInvariants(restarted)
    }

    // MARK: J9 initial and reset

    @Test func j9UnusedBoardStartsAtJ1sCounts() {
        let fresh = bar(1)
        #expect(fresh.state == FruitStock.initialState)
        #expect(countsText(fresh.state) == "10 10 10 10 10")
        #expect(fresh.state.made.isEmpty && fresh.state.recent.isEmpty)
        #expect(FruitStock.initialState.stock == FruitStock.fullStock)
        #expect(FruitStock.name == "stock")
    }

    @Test func j9ResetStockPutsEveryFruitBackToTen() throws {
        var replica = bar(1, stockState([.strawberry: 0, .banana: 999, .pineapple: 3, .kiwi: 10, .mango: 500]))
        try order(&replica, .make(.mango), by: "ana")
        let op = try order(&replica, .resetStock, by: "bo")
        #expect(op.change == .resetStock)
        #expect(countsText(replica.state) == "10 10 10 10 10")
        #expect(replica.state.made == [.mango: 1], "what was made stays counted")
        #expect(replica.state.recent == [.init(who: "ana", juice: .mango)])
        #expect(try replica.perform(.resetStock, by: "bo") == nil, "a reset of a full stock changes nothing")
        expectStockInvariants(replica)
    }

    /// Every intent is prepared into the change of the same name; the local
    /// check and the check where it lands are the same rule.
    @Test func prepareAndApplyAgree() throws {
        let intents: [FruitStock.Intent] = [.make(.kiwi), .make(.strawberry), .restock(.kiwi, by: 2), .restock(.kiwi, by: 990),
                                            .setStock(.kiwi, to: 3, from: 10), .setStock(.kiwi, to: 3, from: 9), .resetStock]
        for state in [FruitStock.initialState, stockState([.kiwi: 2, .strawberry: 20])] {
            for intent in intents {
                var probe = state
                let change: FruitStock.Change = switch intent {
                case let .make(juice): .make(juice)
                case let .restock(fruit, by): .restock(fruit, by: by)
                case let .setStock(fruit, to, from): .setStock(fruit, to: to, from: from)
                case .resetStock: .resetStock
                }
                let outcome = applied(change, to: &probe)
                let prepared: Result<FruitStock.Change?, StockRefusal> = Result { () throws(StockRefusal) in
                    try FruitStock.prepare(intent, by: "ana", in: state)
                }
                switch prepared {
                case let .success(prepared?):
                    #expect(prepared == change && outcome == .applied, "\(intent)")
                case .success(nil):
                    #expect(outcome == .unchanged, "\(intent)")
                case let .failure(refusal):
                    #expect(outcome == .refused(refusal), "\(intent)")
                    #expect(probe == state)
                }
            }
        }
    }
}
