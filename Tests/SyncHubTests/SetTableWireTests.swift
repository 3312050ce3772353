import Foundation
import Testing
import BoardCRDT
import SyncWire

/// The Set table's wire adapter: changes, intents and state members.
@Suite struct SetTableWireTests {
    @Test func changeJSONDecodesToTheSameChange() throws {
        let changes: [SetTable.Change] = [
            .newGame(seed: 0), .newGame(seed: .max), .deal(game: 3),
            .choose(Card(code: "2SFR")!, game: 3, seen: []),
            .choose(Card(code: "2SFR")!, game: 3, seen: [Card(code: "1DOP")!, Card(code: "3OTG")!]),
        ]
        for change in changes {
            let json = SetTable.changeJSON(change)
            #expect(try JSONDecoder().decode(SetTable.Change.self, from: Data(json.utf8)) == change, "\(json)")
        }
        #expect(SetTable.changeJSON(.choose(Card(code: "2SFR")!, game: 3, seen: [Card(code: "1DOP")!]))
                == #"{"op":"choose","card":"2SFR","game":3,"seen":["1DOP"]}"#)
    }

    @Test func intentsDecodeAndEncode() throws {
        func intent(_ text: String) throws(ProtocolError) -> SetTable.Intent? {
            let data = Data(text.utf8)
            let type = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["type"] as? String ?? ""
            return try SetTable.intent(type: type, frame: data)
        }
        #expect(try intent(#"{"type":"choose","card":"2SFR"}"#) == .choose(Card(code: "2SFR")!))
        #expect(try intent(#"{"type":"deal"}"#) == .deal)
        #expect(try intent(#"{"type":"deal","card":5}"#) == .deal, "deal reads no field")
        #expect(try intent(#"{"type":"new_game"}"#) == .newGame(seed: nil))
        #expect(try intent(#"{"type":"new_game","seed":123}"#) == .newGame(seed: 123))
        #expect(try intent(#"{"type":"select","letter":"A"}"#) == nil)
        #expect(throws: ProtocolError("missing_field", "choose needs \"card\": \(Card.codeFormat)")) { try intent(#"{"type":"choose"}"#) }
        #expect(throws: ProtocolError("bad_card",
                                      "\"4DFR\" is not a card: \(Card.codeFormat)")) { try intent(#"{"type":"choose","card":"4DFR"}"#) }
        for value in [SetTable.Intent.choose(Card(code: "1DOP")!), .deal, .newGame(seed: nil), .newGame(seed: 9)] {
            #expect(try intent("{" + SetTable.intentMembers(value) + "}") == value)
        }
        #expect(SetTable.opening == .newGame(seed: nil))
        #expect(SetTable.pathSegment == "set")
    }

    @Test func stateMembersFollowTheRules() throws {
        let state = SetTable.State(game: 3, table: [Card(code: "2SFR"), nil], deck: [], matches: [],
                                   players: ["bo": .init(score: 0, misses: 1, picked: [], mismatch: false),
                                             "a\"na": .init(score: 0, misses: 0, picked: [Card(code: "2SFR")!], mismatch: false)],
                                   last: .init(player: "bo", cards: [Card(code: "3OTG")!, Card(code: "2OTG")!, Card(code: "1OTG")!],
                                               result: .set))
        #expect(SetTable.stateMembers(state) == #""game":3,"table":["2SFR",null],"deck":0,"sets_on_table":0,"over":true,"# +
                                                #""players":{"a\"na":{"score":0,"misses":0,"picked":["2SFR"],"mismatch":false},"# +
                                                #""bo":{"score":0,"misses":1,"picked":[],"mismatch":false}},"last":{"player":"bo","# +
                                                #""cards":["3OTG","2OTG","1OTG"],"result":"set"}"#)
        let members = SetTable.stateMembers(SetTable.initialState)
        #expect(members == #""game":0,"table":[],"deck":0,"sets_on_table":0,"over":false,"players":{},"last":null"#)
        // The whole members parse as JSON.
        _ = try JSONSerialization.jsonObject(with: Data(("{" + SetTable.stateMembers(state) + "}").utf8))
    }
}
