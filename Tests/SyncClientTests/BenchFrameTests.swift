@testable import BoardCRDT
import Foundation
import Testing
@testable import syncclient

/// The load tool's one-pass frame reader: kind, version, ref and a letter
/// board's order, as a full JSON reader would give them.
@Suite struct BenchFrameTests {
    private func read(_ text: String, readsOrder: Bool = true) -> BenchFrame? {
        Array(text.utf8).withUnsafeBytes { BenchFrame($0, readsOrder: readsOrder) }
    }

    @Test func aStateGivesItsVersionAndOrder() throws {
        let frame = try #require(read(#"{"type":"state","board":"b0","version":7,"order":["F","A","Z"],"clients":2,"names":["ref","order"]}"#))
        #expect(frame.kind == .state && frame.version == 7 && frame.ref == nil)
        #expect(frame.order == 6 | 1 << 5 | 26 << 10, "F, A, Z, first lowest")
        #expect(try #require(read(#"{"type":"state","version":9,"order":["B"]}"#, readsOrder: false)).order == 0)
    }

    @Test func answersGiveTheirRefAndVersion() throws {
        let ack = try #require(read(#"{"type":"ack","ref":"12","version":8}"#))
        #expect(ack.kind == .ack && ack.ref == 12 && ack.version == 8)
        let refused = try #require(read(#"{"version":3,"type":"rejected","ref":"13","code":"full","message":"the \"order\" is full"}"#))
        #expect(refused.kind == .rejected && refused.ref == 13 && refused.version == 3)
        #expect(read(#"{"type":"error","code":"bad_json"}"#)?.kind == .error)
        #expect(read(#"{"type":"overwritten","ref":"4"}"#)?.kind == .other)
    }

    @Test func framesWithoutATypeAndShortFramesAreNotFrames() {
        #expect(read(#"{"version":3}"#) == nil)
        #expect(read(#"{"ty"#) == nil)
        #expect(read("") == nil)
        #expect(read(#"{"type":"#)?.kind == .other, "a type cut off: other, no crash")
    }

    /// Seeded frames with the wanted keys in any order among others, and
    /// string values holding quotes, escapes and key-like text: the reader
    /// agrees with JSONSerialization on every one.
    @Test func seededFramesReadAsAFullJSONReaderReadsThem() throws {
        var random = SetDeck.SplitMix64(seed: 19)
        let texts = [#"\"ref\":1"#, #"a\\"#, "order", #"\"version\":"#, "", "type"]
        for _ in 0..<2_000 {
            var members: [String] = []
            let type = ["state", "ack", "rejected", "error", "overwritten"][Int(random.next() % 5)]
            members.append(#""type":"\#(type)""#)
            if random.next() % 4 != 0 { members.append(#""version":\#(random.next() % 1_000_000)"#) }
            if random.next() % 2 == 0 { members.append(#""ref":"\#(random.next() % 1_000_000_000)""#) }
            let letters = (0..<Int(random.next() % 7)).map { _ in "\"\(Character(UnicodeScalar(UInt8(65 + random.next() % 26))))\"" }
            if random.next() % 2 == 0 { members.append(#""order":[\#(letters.joined(separator: ","))]"#) }
            for filler in ["board", "names", "clients", "x"] where random.next() % 2 == 0 {
                members.append(#""\#(filler)":"\#(texts[Int(random.next() % UInt64(texts.count))])""#)
            }
            for index in members.indices.reversed() { members.swapAt(index, Int(random.next() % UInt64(index + 1))) }
            let text = "{" + members.joined(separator: ",") + "}"
            let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
            let frame = try #require(read(text), "\(text)")
            let kinds: [String: BenchFrame.Kind] = ["state": .state, "ack": .ack, "rejected": .rejected, "error": .error]
            #expect(frame.kind == kinds[type] ?? .other, "\(text)")
            #expect(frame.version == (object["version"] as? Int).map(UInt64.init) ?? 0, "\(text)")
            if type != "state" || object["ref"] != nil {
                #expect(frame.ref == (object["ref"] as? String).flatMap { Int($0) }, "\(text)")
            }
            if type == "state" {
                let order = (object["order"] as? [String] ?? []).prefix(12).enumerated().reduce(UInt64(0)) { sum, letter in
                    sum | UInt64(letter.element.utf8.first! - 64) << (5 * UInt64(letter.offset))
                }
                #expect(frame.order == order, "\(text)")
            }
        }
    }
}
