// libFuzzer harness for the wire decoders (issue #9, docs/FUZZING.md).
//
// Not a SwiftPM target: scripts/fuzz.sh compiles this file together with
// Sources/SyncWire/*.swift into one module named SyncWire (so `internal`
// things such as `HubMessage.encode` are visible), against BoardCRDT built
// with -enable-testing (for `Replica.checkInvariants()`), with
// `swiftc -sanitize=fuzzer,address -parse-as-library -O`.
//
// For every input it runs, and checks:
//  1. thin intents: `ThinIntentScanner.scan` (the fast path) against the full
//     JSON decoder on the same frame. `ClientMessage.parse` tries the scanner
//     first and the full decoder's `Envelope` is private, so the full path is
//     reached by handing `parse` the same frame in two forms the scanner always
//     defers and JSONDecoder reads as the same object: behind a UTF-8 byte
//     order mark, and with an unknown member `"_fuzz":0` put first (unknown
//     members are ignored by the full decoder). Both must give exactly what the
//     scanner gave. A third, independent oracle reads the frame with
//     Foundation's JSONSerialization and checks the scanner's message is what
//     the JSON says (valid JSON object, only type/letter/to/ref/key, same
//     values, the same rules per type, ref at most 64 characters, key 1 to 64).
//  2. client frames (any type, either path): whatever `parse` accepts is
//     written again with the client encoders (`thinFrame`, `helloFrame`,
//     `operationsFrame`) and must parse back equal; every operation's
//     hand-written `jsonText` and its Codable JSON must decode back equal.
//  3. replica frames (hub to client): the input decoded as `SyncFrame`,
//     `Checkpoint<LetterBoard>`, `BoardOperation` and `[BoardOperation]`;
//     what decodes (every field: replica, have, checkpoint with its forget
//     horizon, operations) is re-encoded (`HubMessage.encode`, `HubMessage.sync`,
//     the hand-written `HubMessage.operations`, `HubMessage.checkpoint`,
//     JSONEncoder) and must decode back equal. Decoded operations and checkpoints
//     are applied to a fresh `Replica` whose invariants must still hold.
// Any crash or trap is a finding; a disagreement prints what differed and
// aborts, so libFuzzer saves the input.
//
// The comparison (1) is made on every input, UTF-8 or not: the hub only
// passes text frames libwebsockets has validated as UTF-8, but `parse`
// promises the same answer from both paths whatever the bytes.

import Foundation
@testable import BoardCRDT

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    DecoderFuzz.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

enum DecoderFuzz {
    static func run(_ bytes: UnsafeRawBufferPointer) {
        let parsed = parse(bytes)
        thinIntents(bytes, parsed: parsed)
        clientRoundTrip(bytes, parsed: parsed)
        replicaFrames(bytes)
    }

    // MARK: 1. the fast path against the full decoder

    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
    static let unknownMember = Array(#""_fuzz":0,"#.utf8)

    static func thinIntents(_ bytes: UnsafeRawBufferPointer, parsed: Result<ClientMessage, ProtocolError>) {
        guard let fast = ThinIntentScanner.scan(bytes) else { return }
        // parse() returns the scanner's answer first: it must be this one.
        guard case let .success(fromParse) = parsed, identical(fromParse, fast) else {
            fail("parse", bytes, "scanner gave \(fast) but parse gave \(parsed)")
        }

        // The full decoder on the same object, behind a byte order mark.
        let marked = byteOrderMark + Array(bytes)
        checkFullPath(bytes, variant: marked, name: "full decoder (after a BOM)", fast: fast)

        // The full decoder on the same object with an unknown member first.
        // The scanner only accepts frames whose first non-space byte is "{".
        let open = bytes.firstIndex { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }!
        precondition(bytes[open] == UInt8(ascii: "{"), "scanner accepted a frame not starting with {")
        let widened = Array(bytes[...open]) + unknownMember + Array(bytes[(open + 1)...])
        checkFullPath(bytes, variant: widened, name: "full decoder (with an unknown member)", fast: fast)

        // An independent JSON reader: what does the JSON say?
        guard case let .intent(_, fastRef, fastKey) = fast else {
            fail("scanner", bytes, "the scanner returned \(fast), not an intent")
        }
        let expected = jsonSays(bytes, ref: fastRef, key: fastKey)
        guard let said = expected.message, identical(said, fast) else {
            fail("scanner-vs-JSONSerialization", bytes, "scanner: \(fast)\nJSONSerialization: \(expected.message.map { "\($0)" } ?? expected.why)")
        }
    }

    static func checkFullPath(_ original: UnsafeRawBufferPointer, variant: [UInt8], name: String, fast: ClientMessage) {
        variant.withUnsafeBytes { buffer in
            if ThinIntentScanner.scan(buffer) != nil {
                fail("harness", original, "the scanner accepted the \(name) variant: the oracle would not reach the full decoder")
            }
            let full = parse(buffer)
            guard case let .success(slow) = full, identical(slow, fast) else {
                fail("scanner-vs-full-decoder", original, "scanner: \(fast)\n\(name): \(full)")
            }
        }
    }

    /// The message a thin frame means according to JSONSerialization and the
    /// rules of docs/PROTOCOL.md, or why it means none.
    ///
    /// JSONSerialization on Linux (swift-corelibs-foundation) drops a U+FEFF
    /// that begins a string written raw (not as `\ufeff`); JSONDecoder keeps
    /// it, as JSON says. So where the scanner's ref or key is exactly
    /// U+FEFF followed by JSONSerialization's string, the scanner's is taken.
    static func jsonSays(_ bytes: UnsafeRawBufferPointer, ref fastRef: String?, key fastKey: String?) -> (message: ClientMessage?, why: String) {
        func undoDroppedMark(_ text: String, scanner: String?) -> String {
            guard let scanner, Array(scanner.utf8) == byteOrderMark + Array(text.utf8) else { return text }
            return scanner
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
        } catch {
            return (nil, "not JSON: \(error)")
        }
        guard let fields = object as? [String: Any] else { return (nil, "not a JSON object") }
        let known: Set<String> = ["type", "letter", "to", "ref", "key"]
        if let other = fields.keys.first(where: { !known.contains($0) }) {
            return (nil, "member \"\(other)\" is not one the scanner may accept")
        }
        guard let type = fields["type"] as? String else { return (nil, "no string \"type\"") }
        var ref: String?
        if let value = fields["ref"] {
            guard let read = value as? String else { return (nil, "\"ref\" is not a string") }
            let text = undoDroppedMark(read, scanner: fastRef)
            guard text.count <= ClientMessage.maxRefLength else { return (nil, "\"ref\" is longer than 64 characters") }
            ref = text
        }
        var key: String?
        if let value = fields["key"] {
            guard let read = value as? String else { return (nil, "\"key\" is not a string") }
            let text = undoDroppedMark(read, scanner: fastKey)
            guard !text.isEmpty, text.count <= ClientMessage.maxKeyLength else { return (nil, "\"key\" is not 1 to 64 characters") }
            key = text
        }
        var letter: Letter?
        if let value = fields["letter"] {
            guard let text = value as? String else { return (nil, "\"letter\" is not a string") }
            guard let parsed = Letter(text) else { return (nil, "\"letter\" is not A-Z") }
            letter = parsed
        }
        var to: Int?
        if let value = fields["to"] {
            guard let number = value as? NSNumber, let place = Int(exactly: number.doubleValue) else {
                return (nil, "\"to\" is not an integer: \(value)")
            }
            to = place
        }
        switch type {
        case "select", "deselect":
            guard let letter else { return (nil, "\(type) without a letter") }
            return (.intent(type == "select" ? .select(letter) : .deselect(letter), ref: ref, key: key), "")
        case "move":
            guard let letter, let to else { return (nil, "move without a letter or a place") }
            return (.intent(.move(letter, to: to), ref: ref, key: key), "")
        case "reset":
            return (.intent(.reset, ref: ref, key: key), "")
        default:
            return (nil, "type \"\(type)\" is not a thin intent")
        }
    }

    // MARK: 2. client frames: decode, encode, decode

    static func clientRoundTrip(_ bytes: UnsafeRawBufferPointer, parsed: Result<ClientMessage, ProtocolError>) {
        guard case let .success(message) = parsed else { return }
        let text: String
        switch message {
        case let .intent(intent, ref, key):
            text = ClientMessage.thinFrame(intent, ref: ref, key: key)
        case let .hello(hello):
            text = ClientMessage.helloFrame(hello)
        case let .operations(operations, ref):
            text = ClientMessage.operationsFrame(operations, ref: ref)
            for operation in operations { checkOperation(operation, input: bytes) }
        }
        let again = parse(text)
        guard case let .success(back) = again, identical(back, message) else {
            fail("client-round-trip", bytes, "parsed: \(message)\nwritten: \(text)\nparsed again: \(again)")
        }
    }

    /// An operation's two encodings (hand-written `jsonText`, Codable) both decode back to it.
    static func checkOperation(_ operation: BoardOperation, input: UnsafeRawBufferPointer) {
        let handWritten = Data(operation.jsonText.utf8)
        let decoded = Result { try JSONDecoder().decode(BoardOperation.self, from: handWritten) }
        guard case .success(operation) = decoded else {
            fail("operation-jsonText", input, "operation: \(operation)\njsonText: \(operation.jsonText)\ndecoded: \(decoded)")
        }
        let coded = Result { try JSONDecoder().decode(BoardOperation.self, from: JSONEncoder().encode(operation)) }
        guard case .success(operation) = coded else {
            fail("operation-codable", input, "operation: \(operation)\ndecoded: \(coded)")
        }
    }

    // MARK: 3. replica frames (hub to client)

    static func replicaFrames(_ bytes: UnsafeRawBufferPointer) {
        let data = Data(bytes)
        let decoder = JSONDecoder()
        if let frame = try? decoder.decode(SyncFrame.self, from: data) {
            checkSyncFrame(frame, input: bytes)
        }
        if let checkpoint = try? decoder.decode(Checkpoint<LetterBoard>.self, from: data) {
            let encoded = Result { try JSONEncoder().encode(checkpoint) }
            let again = encoded.flatMap { data in Result { try JSONDecoder().decode(Checkpoint<LetterBoard>.self, from: data) } }
            guard case .success(checkpoint) = again else {
                fail("checkpoint-round-trip", bytes, "decoded: \(checkpoint)\nagain: \(again)")
            }
            checkEngine(Delta(checkpoint: checkpoint), input: bytes)
        }
        if let operation = try? decoder.decode(BoardOperation.self, from: data) {
            checkOperation(operation, input: bytes)
            checkEngine(Delta(operations: [operation]), input: bytes)
        }
        if let operations = try? decoder.decode([BoardOperation].self, from: data) {
            for operation in operations { checkOperation(operation, input: bytes) }
            checkEngine(Delta(operations: operations), input: bytes)
        }
    }

    static func checkSyncFrame(_ frame: SyncFrame, input: UnsafeRawBufferPointer) {
        func same(_ a: SyncFrame, _ b: SyncFrame) -> Bool {
            a.type == b.type && a.board == b.board && a.version == b.version && a.replica == b.replica && a.have == b.have
                && a.checkpoint == b.checkpoint && a.operations == b.operations
        }
        func decode(_ text: String) -> SyncFrame? { try? JSONDecoder().decode(SyncFrame.self, from: Data(text.utf8)) }
        func written(_ write: () throws(FrameEncodingError) -> String) -> String {
            do throws(FrameEncodingError) { return try write() } catch {
                fail("sync-frame-encode", input, "decoded: \(frame)\nthe hub cannot write it: \(error)")
            }
        }

        // What the hub writes (HubMessage.encode) decodes back to the frame.
        // (Not compared as text: JSONEncoder's member order varies from one
        // call to the next on Linux, which JSON allows.)
        let text = written { () throws(FrameEncodingError) in try HubMessage.encode(frame) }
        guard let again = decode(text), same(frame, again) else {
            fail("sync-frame-round-trip", input, "decoded: \(frame)\nwritten: \(text)\ndecoded again: \(decode(text).map { "\($0)" } ?? "nil")")
        }
        // The public writers of the three kinds of frame.
        let delta = Delta<LetterBoard>(checkpoint: frame.checkpoint, operations: frame.operations)
        var expectations = [
            (written { () throws(FrameEncodingError) in
                try HubMessage.sync(delta, board: frame.board, version: frame.version, replica: frame.replica ?? ReplicaID(0),
                                    have: frame.have ?? 0) },
             SyncFrame(type: "sync", board: frame.board, version: frame.version, replica: frame.replica ?? ReplicaID(0), have: frame.have ?? 0,
                       checkpoint: frame.checkpoint, operations: frame.operations)),
            (HubMessage.operations(frame.operations, board: frame.board, version: frame.version),
             SyncFrame(type: "ops", board: frame.board, version: frame.version, replica: nil, have: nil, checkpoint: nil, operations: frame.operations)),
        ]
        if let checkpoint = frame.checkpoint {
            expectations.append((
                written { () throws(FrameEncodingError) in try HubMessage.checkpoint(checkpoint, board: frame.board, version: frame.version) },
                SyncFrame(type: "checkpoint", board: frame.board, version: frame.version, replica: nil, have: nil, checkpoint: checkpoint, operations: [])))
        }
        for (text, expected) in expectations {
            guard let back = decode(text), same(back, expected) else {
                fail("hub-writer-round-trip", input, "expected: \(expected)\nwritten: \(text)\ndecoded: \(decode(text).map { "\($0)" } ?? "nil")")
            }
        }
        for operation in frame.operations { checkOperation(operation, input: input) }
        checkEngine(delta, input: input)
    }

    /// A replica client applies what the hub sends; whatever decodes must
    /// leave a replica consistent, never trap.
    static func checkEngine(_ delta: Delta<LetterBoard>, input: UnsafeRawBufferPointer) {
        var replica = Replica<LetterBoard>(id: ReplicaID(0x5EED))
        replica.apply(delta, freshID: { ReplicaID(0xF2E5) })
        let problems = replica.checkInvariants()
        guard problems.isEmpty else {
            fail("replica-invariants", input, "after applying \(delta):\n" + problems.joined(separator: "\n"))
        }
    }

    // MARK: support

    /// Equal, and every string in them equal byte for byte (Swift's `==` on
    /// String is canonical equivalence: "\u{E9}" == "e\u{301}").
    static func identical(_ a: ClientMessage, _ b: ClientMessage) -> Bool {
        func strings(_ message: ClientMessage) -> [[UInt8]] {
            switch message {
            case let .intent(_, ref, key): return [ref.map { Array($0.utf8) } ?? [0xFF], key.map { Array($0.utf8) } ?? [0xFF]]
            case let .operations(_, ref): return [ref.map { Array($0.utf8) } ?? [0xFF]]
            case let .hello(hello): return [hello.name.map { Array($0.utf8) } ?? [0xFF]]
            }
        }
        return a == b && strings(a) == strings(b)
    }

    static func parse(_ bytes: UnsafeRawBufferPointer) -> Result<ClientMessage, ProtocolError> {
        do throws(ProtocolError) { return .success(try ClientMessage.parse(bytes)) } catch { return .failure(error) }
    }

    static func parse(_ text: String) -> Result<ClientMessage, ProtocolError> {
        var text = text
        return text.withUTF8 { parse(UnsafeRawBufferPointer($0)) }
    }

    /// The input as a Swift string literal, bytes outside printable ASCII as \u{..} / \x.
    static func escaped(_ bytes: UnsafeRawBufferPointer) -> String {
        var out = ""
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): out += "\\\""
            case UInt8(ascii: "\\"): out += "\\\\"
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(byte))
            default: out += "\\x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16)
            }
        }
        return out
    }

    static func fail(_ kind: String, _ bytes: UnsafeRawBufferPointer, _ detail: String) -> Never {
        let hex = bytes.map { ($0 < 0x10 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
        let report = """

        ==== DECODER FUZZ DISAGREEMENT [\(kind)]
        input (\(bytes.count) bytes): "\(escaped(bytes))"
        hex: \(hex)
        \(detail)
        ====

        """
        FileHandle.standardError.write(Data(report.utf8))
        abort()
    }
}
