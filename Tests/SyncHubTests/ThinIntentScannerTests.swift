import BoardCRDT
import SyncWire
import Testing

/// The fast path must accept exactly what the full decoder accepts, with
/// the same result, and leave everything else to it.
struct ThinIntentScannerTests {
    func parse(_ text: String) -> Result<ClientMessage<LetterBoard>, ProtocolError> {
        var text = text
        return text.withUTF8 { buffer in
            do throws(ProtocolError) {
                return .success(try ClientMessage<LetterBoard>.parse(UnsafeRawBufferPointer(buffer)))
            } catch {
                return .failure(error)
            }
        }
    }

    @Test(arguments: [
        (#"{"type":"select","letter":"C","ref":"r1"}"#, ClientMessage<LetterBoard>.intent(.select(Letter("C")!), ref: "r1")),
        (#"{ "letter" : "Z" , "type" : "deselect" }"#, .intent(.deselect(Letter("Z")!), ref: nil)),
        (#"{"type":"move","letter":"A","to":2,"ref":"m"}"#, .intent(.move(Letter("A")!, to: 2), ref: "m")),
        (#"{"type":"move","letter":"A","to":-3}"#, .intent(.move(Letter("A")!, to: -3), ref: nil)),
        (#"{"type":"reset"}"#, .intent(.reset, ref: nil)),
        (#"{"type":"select","letter":"C","ref":"with \"escape\""}"#, .intent(.select(Letter("C")!), ref: "with \"escape\"")),
        (#"{"type":"select","letter":"C","extra":[1,2]}"#, .intent(.select(Letter("C")!), ref: nil)),
    ])
    func acceptedFramesMatch(text: String, expected: ClientMessage<LetterBoard>) throws {
        #expect(try parse(text).get() == expected)
    }

    @Test(arguments: [
        (#"{"type":"move","letter":"A","to":01}"#, "bad_json"),
        (#"{"type":"select","letter":"c"}"#, "bad_letter"),
        (#"{"type":"select","letter":"CD"}"#, "bad_letter"),
        (#"{"type":"move","letter":"A","to":"2"}"#, "bad_field"),
        (#"{"type":"move","letter":"A"}"#, "missing_field"),
        (#"{"type":"select"}"#, "missing_field"),
        (#"{"type":"fly"}"#, "unknown_type"),
        (#"{"type":"select","letter":"A"} trailing"#, "bad_json"),
    ])
    func refusedFramesKeepTheirCodes(text: String, code: String) {
        guard case let .failure(error) = parse(text) else {
            Issue.record("accepted \(text)")
            return
        }
        #expect(error.code == code)
    }

    @Test func scannerDefersWhatItDoesNotKnow() {
        for text in [#"{"type":"select","letter":"C","ref":"a\"b"}"#, #"{"type":"hello","replica":1}"#, #"[1]"#,
                     #"{"type":"select","type":"deselect","letter":"A"}"#] {
            var copy = text
            let result = copy.withUTF8 { ThinIntentScanner.scan(UnsafeRawBufferPointer($0)) }
            #expect(result == nil, "\(text)")
        }
    }
}
