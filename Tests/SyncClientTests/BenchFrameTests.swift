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
}
