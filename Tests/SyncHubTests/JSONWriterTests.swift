import Foundation
import SyncWire
import Testing

/// `JSONWriter`, the bytes the hub's state frames, acks and patches are
/// written into: strings escaped as JSON requires and read back unchanged,
/// numbers as `String` writes them.
@Suite struct JSONWriterTests {
    static func written(_ text: String) -> String {
        var out = JSONWriter()
        out.string(text)
        return out.text
    }

    @Test func everyStringReadsBackUnchanged() throws {
        let controls = String((0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) })
        for text in ["", "plain", "say \"hi\"", #"back\slash"#, "a\nb\rc\td", controls, "\u{7F}", "é 東京 🍉", "end\\", "\"",
                     "mixed \u{1} \"x\" é\n"] {
            let json = Self.written(text)
            let back = try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed) as? String
            #expect(back == text, "\(json)")
        }
    }

    @Test func escapesAreTheShortFormsAndLowercaseHex() {
        #expect(Self.written("a\"b\\c") == #""a\"b\\c""#)
        #expect(Self.written("\n\r\t") == #""\n\r\t""#)
        #expect(Self.written("\u{1}\u{1F}") == #""\u0001\u001f""#)
        #expect(Self.written("é") == "\"é\"", "non-ASCII stays UTF-8")
        var legacy = ""
        HubMessage.appendJSONString("x\u{2}\"", to: &legacy)
        #expect(legacy == #""x\u0002\"""#, "the String form writes the same")
    }

    @Test func numbersAreWrittenAsStringWritesThem() {
        for value: Int64 in [0, 7, 9, 10, 99, 100, 12_345, -1, -10, .max, .min] {
            var out = JSONWriter()
            out.number(value)
            #expect(out.text == String(value))
        }
        for value: UInt64 in [0, 10, 1_000_000_007, .max] {
            var out = JSONWriter()
            out.number(value)
            #expect(out.text == String(value))
        }
    }

    /// The writer keeps its bytes in an allocation of its own: a copy of a
    /// writer is a value (appending to one leaves the other as it was), and
    /// a frame larger than the first allocation grows it with nothing lost.
    @Test func aCopyIsAValueAndGrowingKeepsEveryByte() {
        var first = JSONWriter(capacity: 4)
        first.raw("[")
        let before = first
        var second = first
        first.string("one")
        second.number(2)
        #expect(before.text == "[", "the copy taken before the appends is unchanged")
        #expect(first.text == #"["one""#)
        #expect(second.text == "[2")
        // Far past the first allocation (16 bytes at least), through several
        // doublings, in pieces of every kind; the reference is a String
        // escaped scalar by scalar, apart from the writer.
        var grown = JSONWriter(capacity: 1)
        var expected = ""
        for index in 0..<500 {
            // Every third piece has nothing to escape (the writer's fast path), long or short.
            let text = index % 3 == 0 ? String(repeating: "plain é ", count: index % 40)
                                      : String(repeating: "é\"", count: index % 7) + "\u{1}"
            grown.raw(",")
            grown.string(text)
            grown.number(-index)
            grown.raw(json: "[\(index)]")
            expected += ","
            expected += Self.escaped(text) + "\(-index)[\(index)]"
        }
        #expect(grown.text == expected)
        #expect(grown.count == expected.utf8.count)
        #expect(grown.bytes == Array(expected.utf8))
        grown.withUnsafeBytes { #expect(Array($0) == Array(expected.utf8)) }
    }

    /// A JSON string literal as the rules read (the reference for the writer).
    static func escaped(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    @Test func aShapeIsWrittenMemberByMemberInOrder() {
        let shape = StateShape.object([
            ShapeMember("type", .string("state")), ShapeMember("n", .int(-3)), ShapeMember("ok", .bool(true)),
            ShapeMember("none", .null), ShapeMember("raw", .value(#"{"a":[1]}"#)),
            ShapeMember("list", .array([.string("A"), .number(2)])),
            ShapeMember("items", .identified([IdentifiedShape(id: "i1", .object([ShapeMember("id", .string("i1"))]))])),
            ShapeMember("k\"ey", .array([])),
        ])
        let expected = #"{"type":"state","n":-3,"ok":true,"none":null,"raw":{"a":[1]},"list":["A",2],"items":[{"id":"i1"}],"k\"ey":[]}"#
        #expect(shape.json == expected)
        #expect(shape.jsonBytes.bytes == Array(expected.utf8))
        var appended = "x"
        shape.write(to: &appended)
        #expect(appended == "x" + expected)
    }
}
