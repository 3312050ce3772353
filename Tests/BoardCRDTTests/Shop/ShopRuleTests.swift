import Testing
@testable import BoardCRDT

/// docs/rules/shop.md P1-P12, one replica at a time.
@Suite struct ShopRuleTests {
    @Test func p1ThreeSectionsInOrderWithTheirTitles() {
        #expect(ShopSection.allCases.map(\.rawValue) == ["main", "soup", "side"])
        #expect(ShopSection.allCases.map(\.title) == ["메인반찬", "국.찌개", "밑반찬"])
        #expect(ShopSection.soup.subtitle == "김이 모락모락 국.찌개")
    }

    @Test func p3TheSampleHasFourDishesASectionWithThumbnailsDiscountsBadgesASoldOutAndAnOffSaleDish() {
        let state = BanchanShop.initialState
        for section in ShopSection.allCases { #expect(state.dishes(in: section).count >= 4, "\(section)") }
        #expect(state.dishes.allSatisfy { $0.thumb != nil && state.images[$0.thumb!] != nil })
        #expect(state.dishes.contains { $0.originalPrice != nil })
        #expect(state.dishes.contains { !$0.badges.isEmpty })
        #expect(state.dishes.contains { $0.stock == 0 })
        #expect(state.dishes.contains { !$0.available })
        #expect(BanchanShop.violations(of: state).isEmpty)
    }

    @Test func p6AnOrderTakesEveryLineLowersStockAndIsKeptWithItsTotal() throws {
        var replica = shop(1)
        let op = try act(&replica, .order([line("a", 2, 5_000), line("b", 1, 3_000)]), by: "ana")
        #expect(replica.state.dish("a")?.stock == 3)
        #expect(replica.state.dish("b")?.stock == 1)
        #expect(replica.state.dish("a")?.sold == 2)
        #expect(replica.state.orders == [PlacedOrder(id: BanchanShop.orderID(of: op.id), who: "ana",
                                                      lines: [line("a", 2, 5_000), line("b", 1, 3_000)], total: 13_000)])
        expectShopInvariants(replica)
    }

    @Test func p6LinesNamingTheSameDishAddUp() {
        var replica = shop(1)
        let refusal = shopRefusal(&replica, .order([line("b", 1, 3_000), line("b", 2, 3_000)]))
        #expect(refusal == .order([LineProblem(index: 0, code: "not_enough_stock", available: 2),
                                   LineProblem(index: 1, code: "not_enough_stock", available: 2)]))
        #expect(refusal?.code == "not_enough_stock")
        #expect(replica.state == shopState(), "nothing changed")
    }

    /// Each line reports the first of its faults: sold out, then not enough,
    /// then off sale, then a changed price; every failing line is named.
    @Test func p6EveryFailingLineWithTheFirstOfItsFaults() {
        var state = shopState(stockA: 0)
        state.dishes[1].available = false  // b: off sale, stock 2
        var replica = shop(1, state)
        let refusal = shopRefusal(&replica, .order([
            line("a", 1, 1),            // sold out (and a wrong price)
            line("b", 3, 3_000),        // not enough (and off sale)
            line("c", 1, 1_000),        // off sale
            line("gone", 1, 10),        // never existed
        ]))
        #expect(refusal == .order([LineProblem(index: 0, code: "sold_out"),
                                   LineProblem(index: 1, code: "not_enough_stock", available: 2),
                                   LineProblem(index: 2, code: "unavailable"),
                                   LineProblem(index: 3, code: "unavailable")]))
        #expect(refusal?.code == "sold_out")
        var fresh = shop(1)
        #expect(shopRefusal(&fresh, .order([line("a", 1, 4_900)])) == .order([LineProblem(index: 0, code: "price_changed", price: 5_000)]))
    }

    @Test(arguments: [
        ([], "lines"), (Array(repeating: OrderLine(dish: "a", quantity: 1, price: 5_000), count: 21), "lines"),
        ([OrderLine(dish: "a", quantity: 0, price: 5_000)], "quantity"), ([OrderLine(dish: "a", quantity: 100, price: 5_000)], "quantity"),
        ([OrderLine(dish: "A!", quantity: 1, price: 5_000)], "dish"), ([OrderLine(dish: "a", quantity: 1, price: -1)], "price"),
    ] as [([OrderLine], String)])
    func p6AnOrderOfTheWrongShapeIsABadField(lines: [OrderLine], field: String) {
        var replica = shop(1)
        guard case let .badField(blamed, _)? = shopRefusal(&replica, .order(lines)) else { Issue.record("not a bad field"); return }
        #expect(blamed == field)
        #expect(replica.state == shopState())
    }

    @Test func p7OrdersAreKeptUpToTheLimitOldestDroppedFirst() throws {
        var state = shopState()
        state.dishes[0].stock = 9_999
        state.orders = (0..<BanchanShop.ordersKept).map { PlacedOrder(id: "o\($0)", who: "x", lines: [line("a", 1, 5_000)], total: 5_000) }
        var replica = shop(1, state)
        try act(&replica, .order([line("a", 1, 5_000)]))
        #expect(replica.state.orders.count == BanchanShop.ordersKept)
        #expect(replica.state.orders.first?.id == "o1")
        #expect(replica.state.orders.last?.who == "ana")
    }

    @Test func p8AddDishGoesLastInItsSectionAndMakesUpAnIDWhenNoneIsGiven() throws {
        var replica = shop(1)
        let op = try act(&replica, .addDish(Dish(id: "", section: .main, title: "새 반찬", price: 100), idGiven: false))
        guard case let .addDish(added) = op.change else { Issue.record("not an add"); return }
        #expect(DishRules.isDishID(added.id) && added.id.hasPrefix("d"))
        #expect(replica.state.dishes.map(\.id) == ["a", added.id, "b", "c"])
        try act(&replica, .addDish(Dish(id: "z", section: .side, title: "끝", price: 1, sold: 7), idGiven: true))
        #expect(replica.state.dishes.last?.id == "z" && replica.state.dishes.last?.sold == 0, "a new dish has sold nothing")
        #expect(shopRefusal(&replica, .addDish(Dish(id: "z", section: .soup, title: "또", price: 1), idGiven: true)) == .duplicateID("z"))
    }

    @Test func p8RemoveRestockAndSetStock() throws {
        var replica = shop(1)
        try act(&replica, .restock("b", by: 5))
        #expect(replica.state.dish("b")?.stock == 7)
        #expect(shopRefusal(&replica, .restock("b", by: 9_993)) == .outOfRange(dish: "b", stock: 7, by: 9_993))
        #expect(shopRefusal(&replica, .restock("b", by: -8)) == .outOfRange(dish: "b", stock: 7, by: -8))
        #expect(shopRefusal(&replica, .restock("b", by: .max)) == .outOfRange(dish: "b", stock: 7, by: .max))
        try act(&replica, .setStock("b", to: 0, from: 7))
        #expect(shopRefusal(&replica, .setStock("b", to: 3, from: 7)) == .stale([FieldValue(.stock, .int(0))]))
        #expect(shopRefusal(&replica, .setStock("b", to: 10_000, from: 0)) == .badField(field: "to", why: "stock stays within 0 to 9999"))
        try act(&replica, .removeDish("b"))
        #expect(replica.state.dish("b") == nil)
        #expect(try replica.perform(.removeDish("b"), by: "ana") == nil, "removing again changes nothing")
        #expect(shopRefusal(&replica, .restock("b", by: 1)) == .unknownDish("b"))
    }

    @Test func p9AnEditOverWhatItsEditorSawChangesOnlyTheNamedFields() throws {
        var replica = shop(1)
        try act(&replica, .editDish("a", set: [FieldValue(.price, .int(4_000))], from: [FieldValue(.price, .int(5_000))]))
        #expect(replica.state.dish("a")?.price == 4_000)
        #expect(replica.state.dish("a")?.originalPrice == 6_000, "not named, not touched")
        let stale = shopRefusal(&replica, .editDish("a", set: [FieldValue(.price, .int(4_500))], from: [FieldValue(.price, .int(5_000))]))
        #expect(stale == .stale([FieldValue(.price, .int(4_000))]))
        #expect(stale?.code == "stale")
        // Moving to another section puts it last there.
        try act(&replica, .editDish("a", set: [FieldValue(.section, .string("side"))], from: [FieldValue(.section, .string("main"))]))
        #expect(replica.state.dishes.map(\.id) == ["b", "c", "a"])
        // A discount removed: original_price back to null.
        try act(&replica, .editDish("a", set: [FieldValue(.originalPrice, .null)], from: [FieldValue(.originalPrice, .int(6_000))]))
        #expect(replica.state.dish("a")?.originalPrice == nil)
        expectShopInvariants(replica)
    }

    @Test(arguments: [
        (DishField.title, ShopValue.string(""), "title"), (.title, .string(String(repeating: "가", count: 101)), "title"),
        (.title, .string("a\nb"), "title"), (.description, .string(String(repeating: "x", count: 501)), "description"),
        (.price, .int(10_000_001), "price"), (.price, .int(6_000), "price"), (.originalPrice, .int(5_000), "original_price"),
        (.badges, .strings(["1", "2", "3", "4", "5", "6"]), "badges"), (.badges, .strings([""]), "badges"),
        (.badges, .strings([String(repeating: "b", count: 21)]), "badges"), (.thumb, .string("nope.png"), "thumb"),
        (.images, .strings(["a.png", "x.svg"]), "images"), (.detailImages, .strings(["x.svg"]), "detail_images"),
        (.stock, .int(-1), "stock"), (.stock, .int(10_000), "stock"), (.section, .string("dessert"), "section"),
        (.price, .string("5000"), "price"),
    ] as [(DishField, ShopValue, String)])
    func p10ABadValueIsRefusedNamingItsFieldAndChangesNothing(field: DishField, value: ShopValue, named: String) {
        var replica = shop(1)
        let refusal = shopRefusal(
            &replica, .editDish("a", set: [FieldValue(field, value)], from: [FieldValue(field, shopState().dishes[0].value(of: field))]))
        guard case let .badField(blamed, _)? = refusal else { Issue.record("\(String(describing: refusal))"); return }
        #expect(blamed == named)
        #expect(refusal?.code == "bad_field")
        #expect(replica.state == shopState())
    }

    @Test func p4ImagesAreNamedOnceAndCountedAgainstTheLimit() throws {
        var replica = shop(1)
        let image = ShopImage(type: "image/png", digest: String(repeating: "b", count: 64), bytes: 100)
        try act(&replica, .addImage(name: "new.png", image))
        #expect(try replica.perform(.addImage(name: "new.png", image), by: "ana") == nil, "the same bytes again change nothing")
        var other = image
        other.digest = String(repeating: "c", count: 64)
        #expect(shopRefusal(&replica, .addImage(name: "new.png", other)) == .imageExists("new.png"))
        #expect(shopRefusal(&replica, .addImage(name: "new.gif", image))?.code == "bad_field")
        #expect(shopRefusal(&replica, .addImage(name: "x.jpg", image))?.code == "bad_field", "bytes of another type than the name says")
        var full = shopState()
        for index in 0..<BanchanShop.imagesMax { full.images["i\(index).png"] = image }
        var crowded = shop(2, full)
        #expect(shopRefusal(&crowded, .addImage(name: "one-more.png", image))?.code == "shop_full")
    }

    @Test func ordersNeverTrapOnAnyChangeInAnyState() {
        // `apply` takes every change in every state: a crafted change with
        // absurd numbers is refused, never a crash.
        var state = shopState()
        for change in [BanchanShop.Change.order([line("a", .max, .max)]), .restock("a", by: .min), .setStock("a", to: .max, from: 5),
                       .editDish("a", set: [FieldValue(.price, .int(.min))], from: []),
                       .addImage(name: "", ShopImage(type: "", digest: "", bytes: -1))] {
            #expect(BanchanShop.apply(change, id: "x", by: "ana", to: &state).isRefused, "\(change)")
        }
        #expect(state == shopState())
    }
}
