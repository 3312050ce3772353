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
        let frame = try #require(read(#"{"type":"state","board":"b0","version":7,"order":["F","A","Z"],"clients":2,"names":["ref","# +
                                      #""order"]}"#))
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

    /// The reader as it was before it jumped from quote to quote (6ce5bab's
    /// parent), byte by byte: the reference the seeded comparison below holds
    /// the current one to, field by field.
    private static func byteByByte(_ bytes: [UInt8],
                                   readsOrder: Bool) -> (kind: BenchFrame.Kind, version: UInt64, ref: Int?, order: UInt64)? {
        var typeAt: Int?, versionAt: Int?, refAt: Int?, orderAt: Int?
        let count = bytes.count
        var index = 0
        while index + 5 < count {
            guard bytes[index] == UInt8(ascii: "\"") else { index += 1; continue }
            func matches(_ key: String) -> Int? {
                let key = Array(key.utf8), length = key.count
                guard index + length + 3 <= count, bytes[index + length + 1] == UInt8(ascii: "\""),
                      bytes[index + length + 2] == UInt8(ascii: ":") else { return nil }
                for offset in 1..<length where bytes[index + 1 + offset] != key[offset] { return nil }
                return index + length + 3
            }
            switch bytes[index + 1] {
            case UInt8(ascii: "t") where typeAt == nil: typeAt = matches("type")
            case UInt8(ascii: "v") where versionAt == nil: versionAt = matches("version")
            case UInt8(ascii: "r") where refAt == nil: refAt = matches("ref")
            case UInt8(ascii: "o") where orderAt == nil && readsOrder: orderAt = matches("order")
            default: break
            }
            index += 1
        }
        guard let typeAt else { return nil }
        func number(_ start: Int) -> UInt64 {
            var value: UInt64 = 0, at = start
            while at < count, bytes[at] >= UInt8(ascii: "0"), bytes[at] <= UInt8(ascii: "9") {
                value = value &* 10 &+ UInt64(bytes[at] - UInt8(ascii: "0")); at += 1
            }
            return value
        }
        let kinds: [UInt8: BenchFrame.Kind] = [UInt8(ascii: "s"): .state, UInt8(ascii: "a"): .ack, UInt8(ascii: "r"): .rejected,
                                               UInt8(ascii: "e"): .error]
        let kind = typeAt + 1 < count ? kinds[bytes[typeAt + 1]] ?? .other : .other
        let version = versionAt.map(number) ?? 0
        var ref: Int?
        if kind != .state || readsOrder, let refAt { ref = Int(exactly: number(refAt + 1)) }
        var order: UInt64 = 0
        if kind == .state, readsOrder, var at = orderAt {
            var shift: UInt64 = 0
            while at < count, bytes[at] != UInt8(ascii: "]"), shift < 60 {
                if bytes[at] >= UInt8(ascii: "A") && bytes[at] <= UInt8(ascii: "Z") {
                    order |= UInt64(bytes[at] - UInt8(ascii: "A") + 1) << shift
                    shift += 5
                }
                at += 1
            }
        }
        return (kind, version, ref, order)
    }

    /// Every prefix of seeded strings made of the pieces keys are made of
    /// (quotes, colons, escapes, key names and near misses such as `"refs":`
    /// or `"ty":`), read both ways, with and without `order`: the current
    /// reader finds what the byte-by-byte one found, or nil where it did.
    @Test func seededPrefixesReadAsTheByteByByteReaderReadThem() {
        var random = SetDeck.SplitMix64(seed: 1_919)
        let pieces = ["\"", ":", "\\", ",", "{", "}", "[", "]", "type", "ty", "version", "ref", "order", "state", "ack",
                      "12", "7", "A", "\"F\"", " ", "-", "\"type\":\"", "\"version\":", "\"ref\":\"", "\"order\":[",
                      "\"refs\":", "\"ty\":\"", "\"types\":\"", "\"versions\":", "\"s", "\"a", "\"r", "\"e", "\"o",
                      "\"type\":\"state\",", "\"order\":[\"F\",\"A\"],"]
        var typed = 0, versioned = 0, reffed = 0, ordered = 0
        for _ in 0..<600 {
            let text = (0..<Int(5 + random.next() % 40)).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
            let bytes = Array(text.utf8)
            for end in 0...bytes.count {
                let prefix = Array(bytes[..<end])
                for readsOrder in [true, false] {
                    let reference = Self.byteByByte(prefix, readsOrder: readsOrder)
                    if let reference {
                        typed += 1
                        if reference.version > 0 { versioned += 1 }
                        if reference.ref != nil { reffed += 1 }
                        if reference.order > 0 { ordered += 1 }
                    }
                    let frame = prefix.withUnsafeBytes { BenchFrame($0, readsOrder: readsOrder) }
                    #expect(frame?.kind == reference?.kind && frame?.version == reference?.version
                            && frame?.ref == reference?.ref && frame?.order == reference?.order,
                            "\(String(decoding: prefix, as: UTF8.self)) readsOrder \(readsOrder)")
                }
            }
        }
        #expect(typed > 1_000, "the seeded strings must carry a type often enough to compare fields")
        #expect(versioned > 100 && reffed > 100 && ordered > 100, "versions \(versioned), refs \(reffed), orders \(ordered) compared")
    }
}
