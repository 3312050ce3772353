import Testing
@testable import syncclient

/// Raw terminal bytes to events, including reads cut anywhere.
@Suite struct InputDecoderTests {
    private func decode(_ text: String) -> [InputEvent] {
        var decoder = InputDecoder()
        return decoder.feed(Array(text.utf8))
    }

    private func mouse(_ action: MouseEvent.Action, _ button: MouseButton, _ x: Int, _ y: Int) -> InputEvent {
        .mouse(MouseEvent(action: action, button: button, x: x, y: y))
    }

    @Test func keys() {
        #expect(decode("gQ5?<") == [.key(.character("g")), .key(.character("Q")), .key(.character("5")),
                                    .key(.character("?")), .key(.character("<"))])
        #expect(decode("\u{03}\u{04}\r\t\u{7F}") == [.key(.control("c")), .key(.control("d")), .key(.enter),
                                                     .key(.tab), .key(.backspace)])
        #expect(decode("\u{1B}[A\u{1B}[B\u{1B}[C\u{1B}[D\u{1B}OA") == [.key(.up), .key(.down), .key(.right), .key(.left), .key(.up)])
        #expect(decode("\u{1B}[5~\u{1B}[6~\u{1B}[H\u{1B}[F\u{1B}[Z") == [.key(.pageUp), .key(.pageDown), .key(.home), .key(.end),
                                                                         .key(.backTab)])
    }

    /// SGR reports are 1-based on the wire and 0-based as events.
    @Test func sgrMouseReports() {
        #expect(decode("\u{1B}[<0;12;5M") == [mouse(.press, .left, 11, 4)])
        #expect(decode("\u{1B}[<32;13;6M") == [mouse(.motion, .left, 12, 5)])
        #expect(decode("\u{1B}[<0;13;6m") == [mouse(.release, .left, 12, 5)])
        #expect(decode("\u{1B}[<64;1;1M\u{1B}[<65;1;1M") == [mouse(.press, .wheelUp, 0, 0), mouse(.press, .wheelDown, 0, 0)])
        #expect(decode("\u{1B}[<16;200;100M") == [.mouse(MouseEvent(action: .press, button: .left, x: 199, y: 99, control: true))])
    }

    @Test func legacyX10MouseReport() {
        // Button 0 at column 3, row 2 (each + 32, 1-based).
        #expect(decode("\u{1B}[M #\"") == [mouse(.press, .left, 2, 1)])
    }

    /// A report cut at every possible point still decodes once, whole.
    @Test func splitSGRSequences() {
        let bytes = Array("x\u{1B}[<32;120;45My".utf8)
        for cut in 1..<bytes.count {
            var decoder = InputDecoder()
            let events = decoder.feed(bytes[..<cut]) + decoder.feed(bytes[cut...])
            #expect(events == [.key(.character("x")), mouse(.motion, .left, 119, 44), .key(.character("y"))], "cut at \(cut)")
        }
        var decoder = InputDecoder()
        let oneByOne = bytes.flatMap { decoder.feed([$0]) }
        #expect(oneByOne.count == 3)
        #expect(!decoder.hasPendingInput)
    }

    /// A lone ESC waits: it may be the start of a sequence.
    @Test func loneEscapeWaitsForFlush() {
        var decoder = InputDecoder()
        #expect(decoder.feed([0x1B]).isEmpty)
        #expect(decoder.hasPendingInput)
        #expect(decoder.feed(Array("[D".utf8)) == [.key(.left)])

        #expect(decoder.feed([0x1B]).isEmpty)
        #expect(decoder.flush() == [.key(.escape)])
        #expect(decoder.flush().isEmpty)
        #expect(decode("\u{1B}\u{1B}[A") == [.key(.escape), .key(.up)])
    }

    @Test func utf8SplitAcrossReads() {
        var decoder = InputDecoder()
        let bytes = Array("é".utf8)
        #expect(decoder.feed(bytes[..<1]).isEmpty)
        #expect(decoder.feed(bytes[1...]) == [.key(.character("é"))])
    }

    @Test func garbageNeverWedgesTheDecoder() {
        var decoder = InputDecoder()
        let junk = [0x1B, UInt8(ascii: "[")] + Array(repeating: UInt8(ascii: "1"), count: 40)
        _ = decoder.feed(junk)
        #expect(decoder.feed(Array("\u{1B}[<0;1;1Ma".utf8)).suffix(2) == [mouse(.press, .left, 0, 0), .key(.character("a"))])
        // A two-field report, an unknown sequence and a stray byte vanish.
        var fresh = InputDecoder()
        let bytes = Array("\u{1B}[<1;2M\u{1B}[99q".utf8) + [0xFF] + Array("b".utf8)
        #expect(fresh.feed(bytes) == [.key(.character("b"))])
    }
}
