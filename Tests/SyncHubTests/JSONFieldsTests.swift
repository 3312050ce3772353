import Foundation
import SyncWire
import BoardCRDT
import Testing
@testable import SyncHub

/// The hand reader of hot-path JSON against Foundation's: same values on
/// what it reads, nil (never a different value) on what it cannot.
@Suite struct JSONFieldsTests {
    static func fields<T>(_ text: String, _ body: (JSONFields?) -> T) -> T {
        Array(text.utf8).withUnsafeBytes { body(JSONFields($0)) }
    }

    @Test func readsStringsNumbersBooleansAndArraysOfStrings() {
        Self.fields(#" { "a" : "x\"y\\z\/\n\t\u00e9\ud83d\ude00" , "n":18446744073709551615,"m":-42,"t":true,"f":false,"z":null,"# +
                    #""s":["p","q\u0041"],"o":{"k":[1,{"x":"}"}]}} "#) { fields in
            guard let fields else { Issue.record("not read"); return }
            let byKey = Dictionary(uniqueKeysWithValues: fields.members.map { ($0.key, $0.range) })
            #expect(fields.string(byKey["a"]!) == "x\"y\\z/\n\té😀")
            #expect(fields.unsigned(byKey["n"]!) == UInt64.max)
            #expect(fields.integer(byKey["m"]!) == -42)
            #expect(fields.bool(byKey["t"]!) == true && fields.bool(byKey["f"]!) == false && fields.isNull(byKey["z"]!))
            #expect(fields.strings(byKey["s"]!) == ["p", "qA"])
            #expect(JSONFields(fields.slice(byKey["o"]!))?.members.first?.key == "k")
        }
    }

    @Test(arguments: [#"{"a":1"#, #"{"a" 1}"#, #"["a"]"#, #"{"a":1}x"#, "{\"a\":\"\u{1}\"}", #"{,}"#, "", #"{"a":1,}"#, #"{"a"}"#])
    func malformedObjectsAreNotRead(_ text: String) {
        Self.fields(text) { fields in #expect(fields == nil, "\(text)") }
    }

    @Test(arguments: [#"{"a":"\q"}"#, #"{"a":"\ud800"}"#, #"{"a":"\u12"}"#, #"{"a":"\udc00x"}"#])
    func badStringsAreNil(_ text: String) {
        Self.fields(text) { fields in
            #expect(fields != nil && fields!.members.allSatisfy { fields!.string($0.range) == nil }, "\(text)")
        }
    }

    @Test func numbersOutOfRangeOrNotWholeAreNil() {
        Self.fields(#"{"a":18446744073709551616,"b":1.5,"c":01,"d":-1,"e":1e3}"#) { fields in
            let values = fields!.members.map { fields!.unsigned($0.range) }
            #expect(values.allSatisfy { $0 == nil })
        }
    }

    /// Every entry a hub writes reads back the same by hand as by JSONDecoder.
    @Test func entriesReadByHandEqualJSONDecoders() throws {
        typealias Room = KindRoom<LetterBoard>
        let changes: [LetterBoard.Change] = [.select(Letter("A")!), .deselect(Letter("Z")!),
                                             .move(Letter("B")!, anchor: Letter("C")!, side: .after, place: 3),
                                             .reset(seen: [OperationID(replica: ReplicaID(5), seq: 2)])]
        var entries: [SharedEntry<LetterBoard.Change>] = []
        for (index, change) in changes.enumerated() {
            var entry = SharedEntry<LetterBoard.Change>(hub: "h\(index)\"é", number: UInt64(index), author: "ana \u{1F600}",
                                                        key: "k\(index)")
            entry.change = change
            entries.append(entry)
        }
        var refused = SharedEntry<LetterBoard.Change>(hub: "h", number: 9)
        refused.refusal = ["taken", "A is \"taken\""]
        refused.key = "kk"
        entries.append(refused)
        var noop = SharedEntry<LetterBoard.Change>(hub: "h", number: 10)
        noop.noop = true
        noop.basedOn = 77
        entries.append(noop)
        var ops = SharedEntry<LetterBoard.Change>(hub: "h", number: 11)
        ops.operations = [Operation(id: OperationID(replica: ReplicaID(3), seq: 1), lamport: 4, author: "bo",
                                    change: .select(Letter("Q")!))]
        ops.replica = ReplicaID(3)
        entries.append(ops)
        let decoder = JSONDecoder()
        for entry in entries {
            let text = Room.entryJSON(entry, number: entry.number)
            let byHand = try #require(Room.readEntry(Array(text.utf8), decoder: decoder), "\(text)")
            let byFoundation = try decoder.decode(SharedEntry<LetterBoard.Change>.self, from: Data(text.utf8))
            #expect(byHand.hub == byFoundation.hub && byHand.number == byFoundation.number && byHand.author == byFoundation.author
                    && byHand.key == byFoundation.key && byHand.change == byFoundation.change
                        && byHand.operations == byFoundation.operations
                    && byHand.replica == byFoundation.replica && byHand.refusal == byFoundation.refusal && byHand.noop == byFoundation.noop
                    && byHand.basedOn == byFoundation.basedOn, "\(text)")
        }
        // The letter board's changes are read by its scanner, not the fallback.
        for change in changes.prefix(3) {
            let text = LetterBoard.changeJSON(change)
            let scanned = Array(text.utf8).withUnsafeBytes { bytes in JSONFields(bytes).flatMap { LetterBoard.scanChange($0) } }
            #expect(scanned == change, "\(text)")
        }
        // Something entryJSON never writes is left to JSONDecoder.
        #expect(Room.readEntry(Array(#"{"h":"x","n":1,"c":null}"#.utf8), decoder: decoder) == nil)
        #expect(Room.readEntry(Array(#"{"h":"x","n":1,"extra":1}"#.utf8), decoder: decoder) == nil)
    }
}
