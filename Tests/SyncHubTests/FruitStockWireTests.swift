import Foundation
import Testing
import BoardCRDT
import SyncWire

/// The juice bar's wire adapter: changes, intents, state members, the ack message.
@Suite struct FruitStockWireTests {
    static let changes: [FruitStock.Change] = Juice.allCases.map { .make($0) } + [
        .restock(.kiwi, by: 1), .restock(.kiwi, by: -1), .restock(.banana, by: .max), .restock(.banana, by: .min),
        .setStock(.kiwi, to: 12, from: 10), .setStock(.mango, to: .max, from: .min), .resetStock,
    ]

    @Test func changeJSONDecodesToTheSameChange() throws {
        for change in Self.changes {
            let json = FruitStock.changeJSON(change)
            #expect(try JSONDecoder().decode(FruitStock.Change.self, from: Data(json.utf8)) == change, "\(json)")
        }
        #expect(FruitStock.changeJSON(.make(.mangoKiwi)) == #"{"op":"make","juice":"mango_kiwi"}"#)
        #expect(FruitStock.changeJSON(.restock(.kiwi, by: 1)) == #"{"op":"restock","fruit":"kiwi","by":1}"#)
        #expect(FruitStock.changeJSON(.setStock(.kiwi, to: 12, from: 10)) == #"{"op":"set_stock","fruit":"kiwi","to":12,"from":10}"#)
        #expect(FruitStock.changeJSON(.resetStock) == #"{"op":"reset_stock"}"#)
    }

    @Test func intentsDecodeAndEncode() throws {
        func intent(_ text: String) throws(ProtocolError) -> FruitStock.Intent? {
            let data = Data(text.utf8)
            let type = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["type"] as? String ?? ""
            return try FruitStock.intent(type: type, frame: data)
        }
        #expect(try intent(#"{"type":"make","juice":"mango_kiwi"}"#) == .make(.mangoKiwi))
        #expect(try intent(#"{"type":"restock","fruit":"kiwi","by":1}"#) == .restock(.kiwi, by: 1))
        #expect(try intent(#"{"type":"set_stock","fruit":"kiwi","to":12,"from":10}"#) == .setStock(.kiwi, to: 12, from: 10))
        #expect(try intent(#"{"type":"reset_stock"}"#) == .resetStock)
        #expect(try intent(#"{"type":"select","letter":"A"}"#) == nil)
        #expect(throws: ProtocolError.self) { try intent(#"{"type":"make"}"#) }
        #expect(throws: ProtocolError.self) { try intent(#"{"type":"make","juice":"apple"}"#) }
        #expect(throws: ProtocolError.self) { try intent(#"{"type":"restock","fruit":"kiwi"}"#) }
        #expect(throws: ProtocolError.self) { try intent(#"{"type":"set_stock","fruit":"kiwi","to":12}"#) }
        for value in [FruitStock.Intent.make(.strawberryBanana), .restock(.mango, by: -1), .setStock(.kiwi, to: 0, from: 3), .resetStock] {
            #expect(try intent("{" + FruitStock.intentMembers(value) + "}") == value)
        }
        #expect(FruitStock.pathSegment == "stock")
    }

    @Test func stateMembersAsInTheRules() throws {
        var state = FruitStock.initialState
        state.stock[.banana] = 9; state.stock[.kiwi] = 9; state.stock[.mango] = 8
        state.made = [.mangoKiwi: 1]
        state.recent = [.init(who: "ana", juice: .mangoKiwi)]
        #expect(FruitStock.stateMembers(state) == #""stock":{"strawberry":10,"banana":9,"pineapple":10,"kiwi":9,"mango":8},"# +
                                                  #""can_make":{"strawberry":0,"banana":4,"kiwi":3,"pineapple":5,"strawberry_banana":1,"# +
                                                  #""mango":2,"mango_kiwi":4},"made":{"mango_kiwi":1},"recent":[{"who":"ana","# +
                                                  #""juice":"mango_kiwi"}]"#)
        _ = try JSONSerialization.jsonObject(with: Data(("{" + FruitStock.stateMembers(state) + "}").utf8))
    }

    @Test func ackOfAMakeSaysTheJuiceIsReady() {
        let op = BoardCRDT.Operation(id: OperationID(replica: ReplicaID(1), seq: 1), lamport: 1, author: "ana",
                                     change: FruitStock.Change.make(.mangoKiwi))
        #expect(FruitStock.ackMembers(for: op) == #""message":"Mango-kiwi juice is ready. Enjoy!""#)
        #expect(FruitStock.ackMembers(for: nil) == "")
        #expect(FruitStock.summary(of: .make(.mangoKiwi)) == "your mango-kiwi juice")
    }
}
