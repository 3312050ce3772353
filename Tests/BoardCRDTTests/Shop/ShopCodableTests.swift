import Foundation
import Testing
@testable import BoardCRDT

/// The shop's changes and states as JSON (the store and the replica protocol
/// carry them): round trips, and decoded input checked.
@Suite struct ShopCodableTests {
    func roundTrip<T: Codable & Equatable>(_ value: T) throws -> T {
        try JSONDecoder().decode(T.self, from: try JSONEncoder().encode(value))
    }

    static let changes: [BanchanShop.Change] = [
        .order([OrderLine(dish: "a", quantity: 2, price: 5_000)]),
        .addDish(Dish(id: "d1", section: .soup, title: "국 \"맑은\"", description: "줄\n바꿈", price: 1, originalPrice: 2, badges: ["x"],
                      thumb: "a.png", images: ["a.png"], detailImages: [], stock: 3, available: false, sold: 0)),
        .removeDish("d1"),
        // In `DishField` order, as `prepare` records an edit.
        .editDish("a", set: [FieldValue(.price, .int(1)), FieldValue(.originalPrice, .null), FieldValue(.badges, .strings(["a", "b"])),
                             FieldValue(.thumb, .string("a.png")), FieldValue(.available, .bool(true))],
                  from: [FieldValue(.price, .int(2)), FieldValue(.originalPrice, .int(3)), FieldValue(.badges, .strings([])),
                         FieldValue(.thumb, .null), FieldValue(.available, .bool(false))]),
        .restock("a", by: -3), .setStock("a", to: 4, from: 9),
        .addImage(name: "x.svg", ShopImage(type: "image/svg+xml", digest: String(repeating: "f", count: 64), bytes: 42)),
    ]

    @Test(arguments: changes)
    func changeRoundTrips(_ change: BanchanShop.Change) throws {
        #expect(try roundTrip(change) == change)
        let operation = Operation(id: OperationID(replica: ReplicaID(7), seq: 2), lamport: 5, author: "ana", change: change)
        #expect(try roundTrip(operation) == operation)
    }

    @Test func stateRoundTripsAndTheSampleToo() throws {
        var state = shopState()
        state.orders = [PlacedOrder(id: "o1-1", who: "ana", lines: [OrderLine(dish: "a", quantity: 1, price: 5_000)], total: 5_000)]
        #expect(try roundTrip(state) == state)
        #expect(try roundTrip(BanchanShop.initialState) == BanchanShop.initialState)
    }

    @Test(arguments: [
        #"{"dishes":[{"id":"a","section":"main","title":"x","price":1,"stock":-1}],"images":{},"orders":[]}"#,
        #"{"dishes":[{"id":"a","section":"main","title":"x","price":1},{"id":"a","section":"soup","title":"y","price":1}],"images":{},"# +
        #""orders":[]}"#,
        #"{"dishes":[],"images":{},"orders":[{"id":"o","who":"a","lines":[{"dish":"a","quantity":1,"price":5}],"total":6}]}"#,
        #"{"dishes":[],"images":{},"orders":[{"id":"o","who":"a","lines":[{"dish":"a","quantity":9223372036854775807,"# +
        #""price":9223372036854775807}],"total":1}]}"#,
        #"{"dishes":[{"id":"a","section":"dessert","title":"x","price":1}],"images":{},"orders":[]}"#,
        #"{"dishes":[{"id":"a","section":"main","title":"x","price":1,"thumb":"missing.png"}],"images":{},"orders":[]}"#,
    ])
    func aStateBreakingTheRulesIsNotDecoded(_ text: String) {
        #expect((try? JSONDecoder().decode(BanchanShop.State.self, from: Data(text.utf8))) == nil)
    }

    @Test func editFieldsDecodeByTheirOwnTypes() throws {
        let decoded = try JSONDecoder().decode(FieldValues.self, from: Data(#"{"stock":3,"original_price":null,"title":"t"}"#.utf8))
        #expect(decoded.list == [FieldValue(.title, .string("t")), FieldValue(.originalPrice, .null), FieldValue(.stock, .int(3))])
        #expect((try? JSONDecoder().decode(FieldValues.self, from: Data(#"{"sold":3}"#.utf8))) == nil, "sold is the shop's own")
        #expect((try? JSONDecoder().decode(FieldValues.self, from: Data(#"{"price":"3"}"#.utf8))) == nil)
        #expect((try? JSONDecoder().decode(FieldValues.self, from: Data(#"{"id":"b"}"#.utf8))) == nil)
    }
}
