import Foundation
import Testing
@testable import BoardCRDT

/// Changes, states and refusals of the juice bar as JSON (the store and the
/// replica protocol carry them): round trips, and decoded input checked (a
/// checkpoint from a peer is input like any other).
@Suite struct StockCodableTests {
    func roundTrip<T: Codable & Equatable>(_ value: T) throws -> T {
        try JSONDecoder().decode(T.self, from: try JSONEncoder().encode(value))
    }

    func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    func decodes<T: Decodable>(_ type: T.Type, _ text: String) -> Bool {
        (try? JSONDecoder().decode(T.self, from: Data(text.utf8))) != nil
    }

    static let changes: [FruitStock.Change] = Juice.allCases.map { .make($0) } + [
        .restock(.kiwi, by: 1), .restock(.kiwi, by: -1), .restock(.mango, by: 0), .restock(.strawberry, by: 989),
        .restock(.banana, by: .max), .restock(.banana, by: .min),
        .setStock(.kiwi, to: 12, from: 10), .setStock(.pineapple, to: 0, from: 999),
        .setStock(.mango, to: .max, from: .min), .setStock(.mango, to: -1, from: 1000),
        .resetStock,
    ]

    @Test(arguments: changes)
    func changeRoundTrips(_ change: FruitStock.Change) throws {
        #expect(try roundTrip(change) == change)
        let operation = Operation(id: OperationID(replica: ReplicaID(7), seq: 2), lamport: 5, author: "ana \"a\" ü", change: change)
        #expect(try roundTrip(operation) == operation)
    }

    @Test func changeJSONIsCompact() throws {
        #expect(try json(FruitStock.Change.make(.mangoKiwi)) == #"{"juice":"mango_kiwi","op":"make"}"#)
        #expect(try json(FruitStock.Change.make(.strawberryBanana)) == #"{"juice":"strawberry_banana","op":"make"}"#)
        #expect(try json(FruitStock.Change.restock(.kiwi, by: 1)) == #"{"by":1,"fruit":"kiwi","op":"restock"}"#)
        #expect(try json(FruitStock.Change.restock(.kiwi, by: -1)) == #"{"by":-1,"fruit":"kiwi","op":"restock"}"#)
        #expect(try json(FruitStock.Change.setStock(.kiwi, to: 12, from: 10)) == #"{"from":10,"fruit":"kiwi","op":"set_stock","to":12}"#)
        #expect(try json(FruitStock.Change.resetStock) == #"{"op":"reset_stock"}"#)
        // What SyncWire's `changeJSON` writes by hand (keys in its order) decodes to the same change.
        let handWritten: [(String, FruitStock.Change)] = [
            (#"{"op":"make","juice":"mango_kiwi"}"#, .make(.mangoKiwi)),
            (#"{"op":"restock","fruit":"kiwi","by":1}"#, .restock(.kiwi, by: 1)),
            (#"{"op":"restock","fruit":"kiwi","by":-9223372036854775808}"#, .restock(.kiwi, by: .min)),
            (#"{"op":"restock","fruit":"kiwi","by":9223372036854775807}"#, .restock(.kiwi, by: .max)),
            (#"{"op":"set_stock","fruit":"kiwi","to":12,"from":10}"#, .setStock(.kiwi, to: 12, from: 10)),
            (#"{"op":"reset_stock"}"#, .resetStock),
        ]
        for (text, change) in handWritten {
            #expect(try JSONDecoder().decode(FruitStock.Change.self, from: Data(text.utf8)) == change, "\(text)")
        }
    }

    @Test(arguments: [
        #"{"op":"make","juice":"apple"}"#,
        #"{"op":"make","juice":"Mango_kiwi"}"#,
        #"{"op":"make"}"#,
        #"{"op":"make","juice":3}"#,
        #"{"op":"restock","fruit":"apple","by":1}"#,
        #"{"op":"restock","fruit":"kiwi"}"#,
        #"{"op":"restock","by":1}"#,
        #"{"op":"restock","fruit":"kiwi","by":"1"}"#,
        #"{"op":"restock","fruit":"kiwi","by":1.5}"#,
        #"{"op":"restock","fruit":"kiwi","by":9223372036854775808}"#,
        #"{"op":"restock","fruit":"kiwi","by":1e30}"#,
        #"{"op":"set_stock","fruit":"kiwi","to":12}"#,
        #"{"op":"set_stock","fruit":"kiwi","from":10}"#,
        #"{"op":"set_stock","to":12,"from":10}"#,
        #"{"op":"set_stock","fruit":"kiwis","to":12,"from":10}"#,
        #"{"op":"reset"}"#,
        #"{"op":"select","letter":"A"}"#,
        #"{"juice":"mango"}"#,
        #"{}"#,
        #"[]"#,
    ])
    func changeDecoderRefusesWhatNoReplicaPrepares(_ text: String) {
        #expect(!decodes(FruitStock.Change.self, text))
    }

    /// States met in play: fresh, played with names that need escaping, at
    /// both ends of the range, with 20 recent makes.
    static func playedStates() throws -> [FruitStock.State] {
        var states: [FruitStock.State] = [FruitStock.initialState]
        var replica = bar(1, stockState([.strawberry: 999, .banana: 999, .pineapple: 0, .kiwi: 999, .mango: 999]))
        try order(&replica, .make(.mangoKiwi), by: "ana")
        try order(&replica, .make(.strawberryBanana), by: "bo \"the\" builder")
        try order(&replica, .make(.kiwi), by: "")
        states.append(replica.state)
        for index in 0..<30 { try order(&replica, .make(Juice.allCases[index % 3 == 0 ? 0 : 6]), by: "p\(index % 4)") }
        try order(&replica, .setStock(.banana, to: 0, from: replica.state.count(of: .banana)), by: "cy")
        states.append(replica.state)
        return states
    }

    @Test func stateRoundTrips() throws {
        let states = try Self.playedStates()
        #expect(states.last?.recent.count == 20)
        for state in states {
            #expect(FruitStock.violations(of: state).isEmpty)
            #expect(try roundTrip(state) == state)
            let checkpoint = Checkpoint<FruitStock>(state: state, frontier: Stamp(lamport: 4, replica: ReplicaID(2)),
                                                    versions: VersionVector())
            #expect(try roundTrip(checkpoint) == checkpoint)
        }
        #expect(try json(FruitStock.initialState)
            == #"{"made":{},"recent":[],"stock":{"banana":10,"kiwi":10,"mango":10,"pineapple":10,"strawberry":10}}"#)
        #expect(try json(stockState([.kiwi: 9], made: [.mangoKiwi: 1], recent: [.init(who: "ana", juice: .mangoKiwi)]))
            == #"{"made":{"mango_kiwi":1},"recent":[{"juice":"mango_kiwi","who":"ana"}],"stock":{"banana":10,"kiwi":9,"mango":10,"# +
               #""pineapple":10,"strawberry":10}}"#)
    }

    @Test func stateDecoderAcceptsAValidStoredState() throws {
        let text = #"{"stock":{"strawberry":10,"banana":9,"pineapple":10,"kiwi":9,"mango":8},"made":{"mango_kiwi":1},"# +
                   #""recent":[{"who":"ana","juice":"mango_kiwi"}]}"#
        let state = try JSONDecoder().decode(FruitStock.State.self, from: Data(text.utf8))
        #expect(countsText(state) == "10 9 10 9 8")
        #expect(state.made == [.mangoKiwi: 1] && state.recent == [.init(who: "ana", juice: .mangoKiwi)])
    }

    @Test(arguments: [
        // count 1000, -1
        #"{"stock":{"strawberry":1000,"banana":9,"pineapple":10,"kiwi":9,"mango":8},"made":{},"recent":[]}"#,
        #"{"stock":{"strawberry":10,"banana":-1,"pineapple":10,"kiwi":9,"mango":8},"made":{},"recent":[]}"#,
        // a fruit missing, an unknown fruit, a fruit twice under another spelling
        #"{"stock":{"strawberry":10,"banana":9,"pineapple":10,"kiwi":9},"made":{},"recent":[]}"#,
        #"{"stock":{"strawberry":10,"banana":9,"pineapple":10,"kiwi":9,"mango":8,"apple":3},"made":{},"recent":[]}"#,
        #"{"stock":{"strawberry":10,"banana":9,"pineapple":10,"kiwi":9,"Mango":8},"made":{},"recent":[]}"#,
        #"{"stock":{},"made":{},"recent":[]}"#,
        // counts that are not whole numbers
        #"{"stock":{"strawberry":10,"banana":9,"pineapple":10,"kiwi":9,"mango":8.5},"made":{},"recent":[]}"#,
        #"{"stock":{"strawberry":10,"banana":9,"pineapple":10,"kiwi":9,"mango":"8"},"made":{},"recent":[]}"#,
        // made: an unknown juice, a negative count
        #"{"stock":{"strawberry":10,"banana":9,"pineapple":10,"kiwi":9,"mango":8},"made":{"apple":1},"recent":[]}"#,
        #"{"stock":{"strawberry":10,"banana":9,"pineapple":10,"kiwi":9,"mango":8},"made":{"mango":-1},"recent":[]}"#,
        // recent: an unknown juice, no who
        #"{"stock":{"strawberry":10,"banana":9,"pineapple":10,"kiwi":9,"mango":8},"made":{},"recent":[{"who":"ana","juice":"apple"}]}"#,
        #"{"stock":{"strawberry":10,"banana":9,"pineapple":10,"kiwi":9,"mango":8},"made":{},"recent":[{"juice":"mango"}]}"#,
        // a member missing
        #"{"stock":{"strawberry":10,"banana":9,"pineapple":10,"kiwi":9,"mango":8},"recent":[]}"#,
        #"{"stock":{"strawberry":10,"banana":9,"pineapple":10,"kiwi":9,"mango":8},"made":{}}"#,
        #"{"made":{},"recent":[]}"#,
    ])
    func stateDecoderRefusesInvalidStates(_ text: String) throws {
        #expect(!decodes(FruitStock.State.self, text))
        // Nor does a checkpoint carrying it decode (one with a valid state does).
        let valid = Checkpoint<FruitStock>(state: FruitStock.initialState, frontier: Stamp(lamport: 3, replica: ReplicaID(1)),
                                           versions: VersionVector())
        let validText = try json(valid)
        let validState = try json(valid.state)
        #expect(decodes(Checkpoint<FruitStock>.self, validText))
        #expect(validText.contains(validState))
        #expect(!decodes(Checkpoint<FruitStock>.self, validText.replacingOccurrences(of: validState, with: text)))
    }

    @Test func stateDecoderRefuses21RecentMakes() throws {
        let recent = Array(repeating: #"{"who":"ana","juice":"mango"}"#, count: 21).joined(separator: ",")
        let text = #"{"stock":{"strawberry":10,"banana":9,"pineapple":10,"kiwi":9,"mango":8},"made":{"mango":21},"recent":["# + recent
            + "]}"
        #expect(!decodes(FruitStock.State.self, text))
        let twenty = Array(repeating: #"{"who":"ana","juice":"mango"}"#, count: 20).joined(separator: ",")
        #expect(decodes(FruitStock.State.self, text.replacingOccurrences(of: recent, with: twenty)))
    }

    @Test func stateDecoderRefusesWhatViolationsName() throws {
        var broken: [FruitStock.State] = []
        broken.append(stockState([.kiwi: 1000]))
        broken.append(stockState([.kiwi: -1]))
        var missing = FruitStock.initialState
        missing.stock[.banana] = nil
        broken.append(missing)
        broken.append(stockState(made: [.mango: -3]))
        broken.append(stockState(recent: Array(repeating: .init(who: "bo", juice: .kiwi), count: 21)))
        for state in broken {
            #expect(!FruitStock.violations(of: state).isEmpty)
            let data = try JSONEncoder().encode(state)
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(FruitStock.State.self, from: data) }
        }
    }

    @Test func checkpointFromAPeerIsAdoptedOnlyWhenValid() throws {
        // A valid checkpoint decodes and a replica adopts it.
        let state = stockState([.mango: 0], made: [.mango: 3])
        let checkpoint = Checkpoint<FruitStock>(state: state, frontier: Stamp(lamport: 9, replica: ReplicaID(100)),
                                                versions: VersionVector())
        let decoded = try roundTrip(checkpoint)
        var client = bar(1)
        let report = try client.adopt(decoded, freshID: { ReplicaID(2) })
        #expect(report.adopted && client.state == state)
        // The same with a count of 1000 never reaches a replica.
        let text = String(decoding: try JSONEncoder().encode(checkpoint),
                          as: UTF8.self).replacingOccurrences(of: #""mango":0"#, with: #""mango":1000"#)
        #expect(text.contains("1000"))
        #expect(!decodes(Checkpoint<FruitStock>.self, text))
    }

    @Test func refusalsRoundTrip() throws {
        let refusals: [StockRefusal] = [
            .notEnoughFruit(.strawberry, [.init(fruit: .strawberry, have: 4, need: 16)]),
            .notEnoughFruit(.mangoKiwi, [.init(fruit: .mango, have: 1, need: 2), .init(fruit: .kiwi, have: 0, need: 1)]),
            .outOfRange(.kiwi, count: 999, by: 1), .outOfRange(.kiwi, count: 0, by: .min),
            .outOfRange(.kiwi, count: 9, by: nil, to: 1000),
            .stale(.kiwi, now: 9, saw: 10),
        ]
        for refusal in refusals { #expect(try roundTrip(refusal) == refusal) }
        #expect(Set(refusals.map(\.code)) == ["not_enough_fruit", "out_of_range", "stale"])
    }
}
