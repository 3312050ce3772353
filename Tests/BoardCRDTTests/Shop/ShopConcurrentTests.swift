import Testing
@testable import BoardCRDT

/// docs/rules/shop.md PC1-PC6: several people at once, the sealing hub's
/// total order deciding (docs/SEMANTICS.md §7c).
@Suite struct ShopConcurrentTests {
    /// Two concurrent changes from two clients, taken by the hub in the
    /// given order; returns the hub and both clients after every relay.
    func race(_ start: BanchanShop.State, _ first: (BanchanShop.Intent, String), _ second: (BanchanShop.Intent, String))
        throws -> (hub: Shop, ops: [ShopOp], clients: [Shop]) {
        var hub = hubShop(100, start)
        var one = shop(1, start), two = shop(2, start)
        let a = try act(&one, first.0, by: first.1)
        let b = try act(&two, second.0, by: second.1)
        let report = hub.receive([a, b])
        #expect(report.refused.isEmpty)
        one.receive(report.integratedOperations)
        two.receive(report.integratedOperations)
        for replica in [hub, one, two] {
            #expect(replica.state == hub.state)
            expectShopInvariants(replica)
        }
        return (hub, [a, b], [one, two])
    }

    @Test func pc1TwoOrdersThatEachFitButNotBothTheFirstIsTaken() throws {
        let (hub, ops, clients) = try race(shopState(), (.order([line("b", 2, 3_000)]), "ana"), (.order([line("b", 1, 3_000)]), "bo"))
        #expect(hub.outcome(of: ops[0].id) == .applied)
        #expect(hub.outcome(of: ops[1].id) == .refused(.order([LineProblem(index: 0, code: "sold_out")])))
        #expect(hub.state.dish("b")?.stock == 0 && hub.state.dish("b")?.sold == 2)
        #expect(clients.allSatisfy { $0.outcome(of: ops[1].id)?.isRefused == true }, "the loser's order is taken back everywhere")
    }

    @Test func pc1NotEnoughLeftForTheSecond() throws {
        let (hub, ops, _) = try race(shopState(stockA: 5), (.order([line("a", 4, 5_000)]), "ana"), (.order([line("a", 3, 5_000)]), "bo"))
        #expect(hub.outcome(of: ops[1].id) == .refused(.order([LineProblem(index: 0, code: "not_enough_stock", available: 1)])))
        #expect(hub.state.dish("a")?.stock == 1)
    }

    @Test func pc2APriceChangeFirstRefusesTheOrderWithTheNewPriceEvenADiscount() throws {
        for newPrice in [5_500, 4_500] {
            let edit = BanchanShop.Intent.editDish("a", set: [FieldValue(.price, .int(newPrice))], from: [FieldValue(.price, .int(5_000))])
            let (hub, ops, _) = try race(shopState(), (edit, "staff"), (.order([line("a", 1, 5_000)]), "bo"))
            #expect(hub.outcome(of: ops[1].id) == .refused(.order([LineProblem(index: 0, code: "price_changed", price: newPrice)])))
            #expect(hub.state.dish("a")?.stock == 5, "nobody pays a price they did not see")
        }
    }

    @Test func pc2AnOrderFirstIsTakenAtThePriceItSaw() throws {
        let edit = BanchanShop.Intent.editDish("a", set: [FieldValue(.price, .int(5_800))], from: [FieldValue(.price, .int(5_000))])
        let (hub, ops, _) = try race(shopState(), (.order([line("a", 1, 5_000)]), "bo"), (edit, "staff"))
        #expect(hub.outcome(of: ops[0].id) == .applied && hub.outcome(of: ops[1].id) == .applied)
        #expect(hub.state.orders.first?.total == 5_000)
        #expect(hub.state.dish("a")?.price == 5_800)
    }

    @Test func pc3RemovedOrTakenOffSaleFirstRefusesTheOrder() throws {
        let off = BanchanShop.Intent.editDish("a", set: [FieldValue(.available, .bool(false))], from: [FieldValue(.available, .bool(true))])
        for first in [BanchanShop.Intent.removeDish("a"), off] {
            let (hub, ops, _) = try race(shopState(), (first, "staff"), (.order([line("a", 1, 5_000)]), "bo"))
            #expect(hub.outcome(of: ops[1].id) == .refused(.order([LineProblem(index: 0, code: "unavailable")])), "\(first)")
        }
    }

    @Test func pc4RestocksCommuteAndASetStockAfterAnOrderIsStale() throws {
        let (hub, ops, _) = try race(shopState(), (.restock("b", by: 5), "staff"), (.restock("b", by: 3), "kim"))
        #expect(ops.allSatisfy { hub.outcome(of: $0.id) == .applied })
        #expect(hub.state.dish("b")?.stock == 10)
        let (after, setOps, _) = try race(shopState(), (.order([line("b", 1, 3_000)]), "bo"), (.setStock("b", to: 20, from: 2), "staff"))
        #expect(after.outcome(of: setOps[1].id) == .refused(.stale([FieldValue(.stock, .int(1))])))
        #expect(after.state.dish("b")?.stock == 1 && after.state.dish("b")?.sold == 1, "the sale is never undone")
    }

    @Test func pc5EditsOfDifferentFieldsBothApplyOfOneFieldTheLaterIsStale() throws {
        let title = BanchanShop.Intent.editDish("a", set: [FieldValue(.title, .string("새 이름"))], from: [FieldValue(.title, .string("갈비"))])
        let price = BanchanShop.Intent.editDish("a", set: [FieldValue(.price, .int(4_000))], from: [FieldValue(.price, .int(5_000))])
        let (hub, ops, _) = try race(shopState(), (title, "staff"), (price, "kim"))
        #expect(ops.allSatisfy { hub.outcome(of: $0.id) == .applied })
        #expect(hub.state.dish("a")?.title == "새 이름" && hub.state.dish("a")?.price == 4_000)
        let price2 = BanchanShop.Intent.editDish("a", set: [FieldValue(.price, .int(4_500))], from: [FieldValue(.price, .int(5_000))])
        let (same, sameOps, _) = try race(shopState(), (price, "staff"), (price2, "kim"))
        #expect(same.outcome(of: sameOps[1].id) == .refused(.stale([FieldValue(.price, .int(4_000))])))
    }

    /// PC6: once the hub integrated an order (its ack), whatever arrives
    /// after it never takes it back, on the hub or on any client.
    @Test func pc6AnAcknowledgedOrderIsFinal() throws {
        var hub = hubShop(100)
        var ana = shop(1), bo = shop(2)
        let order = try act(&ana, .order([line("b", 2, 3_000)]), by: "ana")
        let acked = hub.receive([order]).integratedOperations
        #expect(hub.outcome(of: order.id) == .applied)
        // Bo, who had not seen it, sets the stock and orders the same.
        let set = try act(&bo, .setStock("b", to: 9, from: 2), by: "bo")
        let late = try act(&bo, .order([line("b", 2, 3_000)]), by: "bo")
        let report = hub.receive([set, late])
        #expect(hub.outcome(of: order.id) == .applied)
        #expect(hub.outcome(of: set.id)?.isRefused == true)
        #expect(hub.outcome(of: late.id)?.isRefused == true)
        bo.receive(acked + report.integratedOperations)
        ana.receive(report.integratedOperations)
        for replica in [hub, ana, bo] {
            #expect(replica.outcome(of: order.id) == .applied)
            #expect(replica.state == hub.state)
            #expect(replica.state.dish("b")?.stock == 0)
        }
    }
}
