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
        for text in ["", "plain", "say \"hi\"", #"back\slash"#, "a\nb\rc\td", controls, "\u{7F}", "é 東京 🍉", "end\\", "\"", "mixed \u{1} \"x\" é\n"] {
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
