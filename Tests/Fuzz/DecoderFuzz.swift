// libFuzzer harness for the wire decoders of every board kind (issue #9,
// docs/FUZZING.md).
//
// Not a SwiftPM target: scripts/fuzz.sh compiles this file together with
// Sources/SyncWire/**/*.swift into one module named SyncWire (so `internal`
// things such as `HubMessage.encode` are visible), against BoardCRDT built
// with -enable-testing, with
// `swiftc -sanitize=fuzzer,address -parse-as-library -O`.
//
// Every input goes through every kind (`LetterBoard`, `SetTable`,
// `FruitStock`, `TodoList`, `BanchanShop`: their own checks are in
// TodoFuzz.swift and ShopFuzz.swift), and:
//  1. letters only: `ThinIntentScanner.scan` (the fast path) against the full
//     JSON decoder on the same frame. `ClientMessage.parse` tries the scanner
//     first and the full decoder is private, so the full path is reached by
//     handing `parse` the same frame in two forms the scanner always defers
//     and JSONDecoder reads as the same object: behind a UTF-8 byte order
//     mark, and with an unknown member `"_fuzz":0` put first. Both must give
//     exactly what the scanner gave. A third, independent oracle reads the
//     frame with Foundation's JSONSerialization and checks the scanner's
//     message is what the JSON says.
//  2. client frames: `ClientMessage<Kind>.parse` never traps; whatever it
//     accepts (intent, join, hello, ops) is written again with the kind's
//     client encoders (`thinFrame`, `joinFrame`, `helloFrame`,
//     `operationsFrame`) and must parse back identical (strings byte for byte).
//  3. operations: every operation decoded from the input (client `ops`, hub
//     frames, bare operations) decodes back equal from its hand-written
//     `Kind.operationJSON` and from its Codable JSON.
//  4. replica frames and states: the input decoded as `SyncFrame<Kind>`,
//     `Checkpoint<Kind>`, `Kind.State`, an operation and an array of them.
//     What decodes is re-encoded (the hub's writers, JSONEncoder) and must
//     decode back equal; a decoded state (bare or in a checkpoint) must have
//     no violations (the Codable decoders validate), and the kind's
//     hand-written `state` frame members must say what the state holds.
//  5. the engine: decoded operations and checkpoints are applied to a client
//     replica (as a `sync`/`ops`/`checkpoint` frame from the hub), and the
//     operations are sent, one replica's run per `ops` frame, to a hub
//     replica that seals its order (`ReplicaLimits(sealsOrder: true)`,
//     compacting), which relays what it integrated to an observing client
//     and to the operations' authors. `checkInvariants()` (engine and
//     `Kind.violations(of:)`) must be empty after each step, acks stay final
//     on the hub, and the observer shows the hub's state. The Set table's
//     and the stock's main invariants are also checked here independently
//     of `violations`.
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
    /// The kinds every input goes through: a kind joins with one line here
    /// and its `FuzzedKind` conformance in a file of its own.
    static let kinds: [any FuzzedKind.Type] = [LetterBoard.self, SetTable.self, FruitStock.self, TodoList.self, BanchanShop.self]

    static func run(_ bytes: UnsafeRawBufferPointer) {
        for kind in kinds { kind.fuzz(bytes) }
        FrameReaderFuzz.fuzz(bytes)
    }

    /// The replicas of the engine check. Inputs may name these ids too;
    /// the checks that assume they are nobody else's are then skipped.
    static let clientID = ReplicaID(0x5EED)
    static let hubID = ReplicaID(0x4855_B000_0000_0001)
    static let observerID = ReplicaID(0x0B5E_0000_0000_0002)
    static let freshID = ReplicaID(0xF2E5)
    /// The hub replica compacts to this many operations once it holds twice
    /// as many: small, so compaction (and operations held behind a gap it
    /// folds past) happens within one short input.
    static let hubKept = 1

    // MARK: support

    /// The input as a Swift string literal, bytes outside printable ASCII as \x...
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

    /// A string's bytes, or [0xFF] (never UTF-8) for nil.
    static func utf8(_ text: String?) -> [UInt8] { text.map { Array($0.utf8) } ?? [0xFF] }
}

// MARK: - 1. letters: the fast path against the full decoder

enum ThinIntentOracle {
    typealias Message = ClientMessage<LetterBoard>

    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
    static let unknownMember = Array(#""_fuzz":0,"#.utf8)

    static func check(_ bytes: UnsafeRawBufferPointer, parsed: Result<Message, ProtocolError>) {
        guard let fast = ThinIntentScanner.scan(bytes) else { return }
        // parse() returns the scanner's answer first: it must be this one.
        guard case let .success(fromParse) = parsed, KindFuzz<LetterBoard>.identical(fromParse, fast) else {
            DecoderFuzz.fail("letters: parse", bytes, "scanner gave \(fast) but parse gave \(parsed)")
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
            DecoderFuzz.fail("letters: scanner", bytes, "the scanner returned \(fast), not an intent")
        }
        let expected = jsonSays(bytes, ref: fastRef, key: fastKey)
        guard let said = expected.message, KindFuzz<LetterBoard>.identical(said, fast) else {
            DecoderFuzz.fail("letters: scanner-vs-JSONSerialization", bytes,
                             "scanner: \(fast)\nJSONSerialization: \(expected.message.map { "\($0)" } ?? expected.why)")
        }
    }

    static func checkFullPath(_ original: UnsafeRawBufferPointer, variant: [UInt8], name: String, fast: Message) {
        variant.withUnsafeBytes { buffer in
            if ThinIntentScanner.scan(buffer) != nil {
                DecoderFuzz.fail("letters: harness", original,
                                 "the scanner accepted the \(name) variant: the oracle would not reach the full decoder")
            }
            let full = KindFuzz<LetterBoard>.parse(buffer)
            guard case let .success(slow) = full, KindFuzz<LetterBoard>.identical(slow, fast) else {
                DecoderFuzz.fail("letters: scanner-vs-full-decoder", original, "scanner: \(fast)\n\(name): \(full)")
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
    static func jsonSays(_ bytes: UnsafeRawBufferPointer, ref fastRef: String?, key fastKey: String?) -> (message: Message?, why: String) {
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
            guard text.count <= ClientLimits.maxRefLength else { return (nil, "\"ref\" is longer than 64 characters") }
            ref = text
        }
        var key: String?
        if let value = fields["key"] {
            guard let read = value as? String else { return (nil, "\"key\" is not a string") }
            let text = undoDroppedMark(read, scanner: fastKey)
            guard !text.isEmpty, text.count <= ClientLimits.maxKeyLength else { return (nil, "\"key\" is not 1 to 64 characters") }
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
            guard let letter, to == nil else { return (nil, "\(type) needs a letter and no place") }
            return (.intent(type == "select" ? .select(letter) : .deselect(letter), ref: ref, key: key), "")
        case "move":
            guard let letter, let to else { return (nil, "move without a letter or a place") }
            return (.intent(.move(letter, to: to), ref: ref, key: key), "")
        case "reset":
            guard letter == nil, to == nil else { return (nil, "reset with a letter or a place") }
            return (.intent(.reset, ref: ref, key: key), "")
        default:
            return (nil, "type \"\(type)\" is not a thin intent")
        }
    }
}

// MARK: - what the harness needs to know of each kind

/// Per-kind checks independent of the kind's own code.
protocol FuzzedKind: WireKind {
    /// Checks 2-5 on `bytes`, and the kind's own oracles (the letters' fast
    /// path, the todo list's replays) where it has them.
    static func fuzz(_ bytes: UnsafeRawBufferPointer)
    /// Broken invariants found without `Self.violations(of:)`.
    static func independentViolations(of state: State) -> [String]
    /// What a `state` frame (written with `stateMembers`) gets wrong about
    /// `state` once read back by JSONDecoder, or nil.
    static func stateFrameProblem(_ frame: Data, _ state: State) -> String?
}

extension FuzzedKind {
    static func fuzz(_ bytes: UnsafeRawBufferPointer) { KindFuzz<Self>.run(bytes, parsed: KindFuzz<Self>.parse(bytes)) }
}

extension LetterBoard: FuzzedKind {
    static func fuzz(_ bytes: UnsafeRawBufferPointer) {
        let parsed = KindFuzz<LetterBoard>.parse(bytes)
        ThinIntentOracle.check(bytes, parsed: parsed)
        KindFuzz<LetterBoard>.run(bytes, parsed: parsed)
    }

    static func independentViolations(of state: State) -> [String] { [] }

    private struct StateFrame: Decodable {
        var type: String
        var kind: String
        var order: [String]
    }

    static func stateFrameProblem(_ frame: Data, _ state: State) -> String? {
        let read: StateFrame
        do { read = try JSONDecoder().decode(StateFrame.self, from: frame) } catch { return "does not decode: \(error)" }
        guard read.type == "state", read.kind == name else { return "type \(read.type), kind \(read.kind)" }
        let order = state.selections.map { "\($0.letter)" }
        return read.order == order ? nil : "order \(read.order), the state's \(order)"
    }
}

extension SetTable: FuzzedKind {
    /// S1: every card in exactly one of table, deck and taken (so the table
    /// never holds a taken card); S5: every player's score is their matches,
    /// and every match's player scores.
    static func independentViolations(of state: State) -> [String] {
        guard state.game > 0 else {
            return state.table.isEmpty && state.deck.isEmpty && state.matches.isEmpty && state.players.isEmpty ? []
                : ["before any game, something is on the table"]
        }
        var problems: [String] = []
        var places: [UInt8: [String]] = [:]
        for case let card? in state.table { places[card.index, default: []].append("table") }
        for card in state.deck { places[card.index, default: []].append("deck") }
        for match in state.matches {
            for card in match.cards { places[card.index, default: []].append("taken by \(match.player)") }
        }
        for index in 0..<81 {
            let where_ = places[UInt8(index)] ?? []
            if where_.count != 1 { problems.append("card \(Card(index: index)!) is in \(where_)") }
        }
        if places.keys.contains(where: { $0 >= 81 }) { problems.append("a card index beyond 80") }
        let taken = Set(state.matches.flatMap(\.cards))
        for case let card? in state.table where taken.contains(card) { problems.append("the table holds taken card \(card)") }
        var matches: [String: Int] = [:]
        for match in state.matches { matches[match.player, default: 0] += 1 }
        for (name, player) in state.players where player.score != matches[name, default: 0] {
            problems.append("\(name) scores \(player.score) with \(matches[name, default: 0]) matches")
        }
        for (name, count) in matches where state.players[name]?.score != count {
            problems.append("\(name) has \(count) matches and scores \(state.players[name]?.score ?? -1)")
        }
        return problems
    }

    private struct StateFrame: Decodable {
        struct PlayerFrame: Decodable, Equatable {
            var score: Int
            var misses: Int
            var picked: [Card]
            var mismatch: Bool
        }
        var type: String
        var kind: String
        var game: Int
        var table: [Card?]
        var deck: Int
        var sets_on_table: Int
        var over: Bool
        var players: [String: PlayerFrame]
        var last: LastPick?
    }

    static func stateFrameProblem(_ frame: Data, _ state: State) -> String? {
        let read: StateFrame
        do { read = try JSONDecoder().decode(StateFrame.self, from: frame) } catch { return "does not decode: \(error)" }
        guard read.type == "state", read.kind == name else { return "type \(read.type), kind \(read.kind)" }
        guard read.game == state.game, read.table == state.table, read.deck == state.deck.count,
              read.sets_on_table == state.setsOnTable, read.over == state.over, read.last == state.last else {
            return "read back \(read)"
        }
        let players = state.players.mapValues {
            StateFrame.PlayerFrame(score: $0.score, misses: $0.misses, picked: $0.picked, mismatch: $0.mismatch)
        }
        guard read.players == players, read.players.keys.allSatisfy({ key in
            state.players.keys.contains { Array($0.utf8) == Array(key.utf8) }
        }) else { return "players read back \(read.players), the state's \(players)" }
        return nil
    }
}

extension FruitStock: FuzzedKind {
    /// J1, JC1: every fruit counted, within 0...999; J7: made counts not
    /// negative, at most 20 recent makes.
    static func independentViolations(of state: State) -> [String] {
        var problems: [String] = []
        for fruit in Fruit.allCases where !(0...999).contains(state.stock[fruit] ?? -1) {
            problems.append("\(fruit) is \(state.stock[fruit].map(String.init) ?? "missing")")
        }
        for (juice, count) in state.made where count < 0 { problems.append("\(juice) made \(count) times") }
        if state.recent.count > 20 { problems.append("\(state.recent.count) recent makes") }
        return problems
    }

    private struct StateFrame: Decodable {
        struct Made: Decodable, Equatable {
            var who: String
            var juice: String
        }
        var type: String
        var kind: String
        var stock: [String: Int]
        var can_make: [String: Int]
        var made: [String: Int]
        var recent: [Made]
    }

    static func stateFrameProblem(_ frame: Data, _ state: State) -> String? {
        let read: StateFrame
        do { read = try JSONDecoder().decode(StateFrame.self, from: frame) } catch { return "does not decode: \(error)" }
        guard read.type == "state", read.kind == name else { return "type \(read.type), kind \(read.kind)" }
        let stock = Dictionary(uniqueKeysWithValues: Fruit.allCases.map { ($0.rawValue, state.stock[$0] ?? 0) })
        // J6: how many of each juice the counts allow, worked out here.
        let canMake = Dictionary(uniqueKeysWithValues: Juice.allCases.map { juice in
            (juice.rawValue, juice.uses.map { max(0, state.stock[$0.fruit] ?? 0) / $0.count }.min() ?? 0)
        })
        let made = Dictionary(uniqueKeysWithValues: state.made.map { ($0.key.rawValue, $0.value) })
        let recent = state.recent.map { StateFrame.Made(who: $0.who, juice: $0.juice.rawValue) }
        guard read.stock == stock, read.can_make == canMake, read.made == made, read.recent == recent,
              read.recent.map({ Array($0.who.utf8) }) == recent.map({ Array($0.who.utf8) }) else {
            return "read back \(read)\nexpected stock \(stock), can_make \(canMake), made \(made), recent \(recent)"
        }
        return nil
    }
}

// MARK: - 2-5. every kind

enum KindFuzz<Kind: FuzzedKind> {
    typealias Message = ClientMessage<Kind>
    typealias Op = BoardCRDT.Operation<Kind.Change>

    static func run(_ bytes: UnsafeRawBufferPointer, parsed: Result<Message, ProtocolError>) {
        clientRoundTrip(bytes, parsed: parsed)
        replicaFrames(bytes)
    }

    static func fail(_ what: String, _ bytes: UnsafeRawBufferPointer, _ detail: String) -> Never {
        DecoderFuzz.fail("\(Kind.name): \(what)", bytes, detail)
    }

    static func parse(_ bytes: UnsafeRawBufferPointer) -> Result<Message, ProtocolError> {
        do throws(ProtocolError) { return .success(try Message.parse(bytes)) } catch { return .failure(error) }
    }

    static func parse(_ text: String) -> Result<Message, ProtocolError> {
        var text = text
        return text.withUTF8 { parse(UnsafeRawBufferPointer($0)) }
    }

    /// Equal, and every string in them equal byte for byte (Swift's `==` on
    /// String is canonical equivalence: "\u{E9}" == "e\u{301}").
    static func identical(_ a: Message, _ b: Message) -> Bool {
        func strings(_ message: Message) -> [[UInt8]] {
            switch message {
            case let .intent(_, ref, key): [DecoderFuzz.utf8(ref), DecoderFuzz.utf8(key)]
            case let .join(name, ref): [DecoderFuzz.utf8(name), DecoderFuzz.utf8(ref)]
            case let .operations(operations, ref): [DecoderFuzz.utf8(ref)] + operations.map { DecoderFuzz.utf8($0.author) }
            case let .hello(hello): [DecoderFuzz.utf8(hello.name)]
            case let .editing(id, ref): [DecoderFuzz.utf8(id), DecoderFuzz.utf8(ref)]
            case let .auth(token, ref): [DecoderFuzz.utf8(token), DecoderFuzz.utf8(ref)]
            case let .subscribe(_, ref): [DecoderFuzz.utf8(ref)]
            case let .query(type, ref): [DecoderFuzz.utf8(type), DecoderFuzz.utf8(ref)]
            }
        }
        return a == b && strings(a) == strings(b)
    }

    static func identical(_ a: [Op], _ b: [Op]) -> Bool {
        a == b && a.map { DecoderFuzz.utf8($0.author) } == b.map { DecoderFuzz.utf8($0.author) }
    }

    // MARK: 2. client frames: decode, encode, decode

    static func clientRoundTrip(_ bytes: UnsafeRawBufferPointer, parsed: Result<Message, ProtocolError>) {
        guard case let .success(message) = parsed else { return }
        let text: String
        switch message {
        case let .intent(intent, ref, key):
            text = Message.thinFrame(intent, ref: ref, key: key)
        case let .join(name, ref):
            text = Message.joinFrame(name: name, ref: ref)
        case let .hello(hello):
            text = Message.helloFrame(hello)
        case let .editing(id, ref):
            text = Message.editingFrame(id: id, ref: ref)
        case let .auth(token, ref):
            // No client encoder for `auth` (the pages and syncclient write it): as they do.
            var frame = "{\"type\":\"auth\",\"token\":"
            HubMessage.appendJSONString(token, to: &frame)
            if let ref {
                frame += ",\"ref\":"
                HubMessage.appendJSONString(ref, to: &frame)
            }
            text = frame + "}"
        case let .operations(operations, ref):
            text = Message.operationsFrame(operations, ref: ref)
            for operation in operations { checkOperation(operation, input: bytes) }
        case let .subscribe(format, ref):
            var frame = String(Message.subscribeFrame(format).dropLast())
            if let ref {
                frame += ",\"ref\":"
                HubMessage.appendJSONString(ref, to: &frame)
            }
            text = frame + "}"
        case let .query(type, ref):
            // A query is its type and a ref (the shop's `my_orders`).
            var frame = "{\"type\":"
            HubMessage.appendJSONString(type, to: &frame)
            if let ref {
                frame += ",\"ref\":"
                HubMessage.appendJSONString(ref, to: &frame)
            }
            text = frame + "}"
        }
        let again = parse(text)
        guard case let .success(back) = again, identical(back, message) else {
            fail("client-round-trip", bytes, "parsed: \(message)\nwritten: \(text)\nparsed again: \(again)")
        }
        if case let .operations(operations, _) = message {
            checkEngine(Delta(operations: operations), input: bytes)
        }
    }

    // MARK: 3. operations

    /// An operation's two encodings (hand-written `operationJSON`, Codable) both decode back to it.
    static func checkOperation(_ operation: Op, input: UnsafeRawBufferPointer) {
        let handWritten = Kind.operationJSON(operation)
        let decoded = Result { try JSONDecoder().decode(Op.self, from: Data(handWritten.utf8)) }
        guard case let .success(back) = decoded, identical([back], [operation]) else {
            fail("operationJSON", input, "operation: \(operation)\noperationJSON: \(handWritten)\ndecoded: \(decoded)")
        }
        let coded = Result { try JSONDecoder().decode(Op.self, from: JSONEncoder().encode(operation)) }
        guard case let .success(again) = coded, identical([again], [operation]) else {
            fail("operation-codable", input, "operation: \(operation)\ndecoded: \(coded)")
        }
    }

    // MARK: 4. replica frames (hub to client) and states

    static func replicaFrames(_ bytes: UnsafeRawBufferPointer) {
        let data = Data(bytes)
        let decoder = JSONDecoder()
        if let frame = try? decoder.decode(SyncFrame<Kind>.self, from: data) {
            checkSyncFrame(frame, input: bytes)
        }
        if let checkpoint = try? decoder.decode(Checkpoint<Kind>.self, from: data) {
            checkCheckpoint(checkpoint, input: bytes)
        }
        if let state = try? decoder.decode(Kind.State.self, from: data) {
            checkState(state, input: bytes, what: "decoded state")
            let encoded = Result { try JSONEncoder().encode(state) }
            let again = encoded.flatMap { data in Result { try JSONDecoder().decode(Kind.State.self, from: data) } }
            guard case .success(state) = again else {
                fail("state-round-trip", bytes, "decoded: \(state)\nagain: \(again)")
            }
        }
        if let operation = try? decoder.decode(Op.self, from: data) {
            checkOperation(operation, input: bytes)
            checkEngine(Delta(operations: [operation]), input: bytes)
        }
        if let operations = try? decoder.decode([Op].self, from: data) {
            for operation in operations { checkOperation(operation, input: bytes) }
            checkEngine(Delta(operations: operations), input: bytes)
        }
    }

    /// A checkpoint from a peer: its state is valid, it round-trips, and a
    /// replica can start from it (as a hub loading its store does).
    static func checkCheckpoint(_ checkpoint: Checkpoint<Kind>, input: UnsafeRawBufferPointer) {
        checkState(checkpoint.state, input: input, what: "decoded checkpoint's state")
        let encoded = Result { try JSONEncoder().encode(checkpoint) }
        let again = encoded.flatMap { data in Result { try JSONDecoder().decode(Checkpoint<Kind>.self, from: data) } }
        guard case .success(checkpoint) = again else {
            fail("checkpoint-round-trip", input, "decoded: \(checkpoint)\nagain: \(again)")
        }
        let loaded = Replica<Kind>(id: DecoderFuzz.hubID, checkpoint: checkpoint,
                                   limits: ReplicaLimits(keptOperations: DecoderFuzz.hubKept, sealsOrder: true))
        require(loaded, "hub replica loaded from a checkpoint", input, after: "loading \(checkpoint)")
        checkEngine(Delta(checkpoint: checkpoint), input: input)
    }

    /// A decoded state has no violations (the decoders validate), by the
    /// kind's own check and the harness's, and its `state` frame says what it holds.
    static func checkState(_ state: Kind.State, input: UnsafeRawBufferPointer, what: String) {
        let problems = Kind.violations(of: state) + Kind.independentViolations(of: state)
        guard problems.isEmpty else {
            fail("decoded-state-violations", input, "\(what): \(state)\n" + problems.joined(separator: "\n"))
        }
        checkStateFrame(state, input: input)
    }

    static func checkStateFrame(_ state: Kind.State, input: UnsafeRawBufferPointer) {
        let frame = HubMessage.state(board: "b", kind: Kind.name, version: 1, members: Kind.stateMembers(state), clients: 1,
                                     names: ["ana"])
        if let problem = Kind.stateFrameProblem(Data(frame.utf8), state) {
            fail("state-frame", input, "state: \(state)\nframe: \(frame)\n\(problem)")
        }
    }

    static func checkSyncFrame(_ frame: SyncFrame<Kind>, input: UnsafeRawBufferPointer) {
        func same(_ a: SyncFrame<Kind>, _ b: SyncFrame<Kind>) -> Bool {
            a.type == b.type && a.board == b.board && a.version == b.version && a.replica == b.replica && a.have == b.have
                && a.name == b.name && DecoderFuzz.utf8(a.name) == DecoderFuzz.utf8(b.name)
                && DecoderFuzz.utf8(a.board) == DecoderFuzz.utf8(b.board)
                && a.checkpoint == b.checkpoint && identical(a.operations, b.operations)
        }
        func decode(_ text: String) -> SyncFrame<Kind>? { try? JSONDecoder().decode(SyncFrame<Kind>.self, from: Data(text.utf8)) }
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
            fail("sync-frame-round-trip", input,
                 "decoded: \(frame)\nwritten: \(text)\ndecoded again: \(decode(text).map { "\($0)" } ?? "nil")")
        }
        // The public writers of the three kinds of frame.
        let delta = Delta<Kind>(checkpoint: frame.checkpoint, operations: frame.operations)
        let replica = frame.replica ?? ReplicaID(0), have = frame.have ?? 0, name = frame.name ?? ""
        var expectations = [
            (written { () throws(FrameEncodingError) in
                try HubMessage.sync(delta, board: frame.board, version: frame.version, replica: replica, have: have, name: name) },
             SyncFrame<Kind>(type: "sync", board: frame.board, version: frame.version, replica: replica, have: have, name: name,
                             checkpoint: frame.checkpoint, operations: frame.operations)),
            (HubMessage.operations(frame.operations, of: Kind.self, board: frame.board, version: frame.version),
             SyncFrame<Kind>(type: "ops", board: frame.board, version: frame.version, replica: nil, have: nil, name: nil,
                             checkpoint: nil, operations: frame.operations)),
        ]
        if let checkpoint = frame.checkpoint {
            expectations.append((
                written { () throws(FrameEncodingError) in try HubMessage.checkpoint(checkpoint, board: frame.board,
                                                                                     version: frame.version) },
                SyncFrame<Kind>(type: "checkpoint", board: frame.board, version: frame.version, replica: nil, have: nil, name: nil,
                                checkpoint: checkpoint, operations: [])))
        }
        for (text, expected) in expectations {
            guard let back = decode(text), same(back, expected) else {
                fail("hub-writer-round-trip", input,
                     "expected: \(expected)\nwritten: \(text)\ndecoded: \(decode(text).map { "\($0)" } ?? "nil")")
            }
        }
        for operation in frame.operations { checkOperation(operation, input: input) }
        if let checkpoint = frame.checkpoint { checkState(checkpoint.state, input: input, what: "sync frame's checkpoint state") }
        checkEngine(delta, input: input)
    }

    // MARK: 5. the engine

    static func require(_ replica: Replica<Kind>, _ who: String, _ input: UnsafeRawBufferPointer, after step: @autoclosure () -> String) {
        let problems = replica.checkInvariants() + Kind.independentViolations(of: replica.state)
        guard problems.isEmpty else {
            fail("replica-invariants", input, "\(who) \(replica.id), after \(step()):\n" + problems.joined(separator: "\n"))
        }
    }

    /// Whatever decodes leaves every replica consistent and never traps:
    /// a client replica catching up from the delta (a hub frame); a hub
    /// replica sealing its order that receives the operations as clients'
    /// `ops` frames (one replica's run each) and relays what it integrated
    /// to an observing client replica and to the operations' authors, which
    /// hold their own operations already.
    static func checkEngine(_ delta: Delta<Kind>, input: UnsafeRawBufferPointer) {
        var client = Replica<Kind>(id: DecoderFuzz.clientID, limits: ReplicaLimits(compacts: false))
        client.apply(delta, freshID: { DecoderFuzz.freshID })
        require(client, "client replica", input, after: "applying \(delta)")

        let operations = delta.operations
        guard !operations.isEmpty else { return }
        var hub = Replica<Kind>(id: DecoderFuzz.hubID, limits: ReplicaLimits(keptOperations: DecoderFuzz.hubKept, sealsOrder: true))
        var observer = Replica<Kind>(id: DecoderFuzz.observerID, limits: ReplicaLimits(compacts: false))
        let ours: Set<ReplicaID> = [DecoderFuzz.hubID, DecoderFuzz.observerID]
        // Ops frames carrying the hub's or the observer's id would be their
        // own operations to them: the order and convergence checks assume not.
        let strangers = !operations.contains { ours.contains($0.id.replica) }
        // The authors (up to four) hold their own operations already, as
        // `record` made them; the hub's re-stamped versions come back to them.
        var authors: [(replica: Replica<Kind>, own: Int)] = []
        if strangers {
            var seen: Set<ReplicaID> = []
            for operation in operations where authors.count < 4 && seen.insert(operation.id.replica).inserted {
                guard let own = recorded(by: operation.id.replica, in: operations) else { continue }
                var replica = Replica<Kind>(id: operation.id.replica, limits: ReplicaLimits(compacts: false))
                replica.receive(own)
                require(replica, "author replica", input, after: "taking its own operations \(own)")
                authors.append((replica, own.count))
            }
        }
        var acked: [OperationID: Outcome<Kind.Refusal>] = [:]
        var start = 0
        while start < operations.count {
            var end = start + 1
            while end < operations.count, operations[end].id.replica == operations[start].id.replica { end += 1 }
            let frame = Array(operations[start..<end])
            start = end

            let lastBefore = hub.log.last?.stamp ?? hub.checkpoint.frontier
            let report = hub.receive(frame)
            require(hub, "hub replica", input, after: "receiving \(frame)")
            if strangers {
                // A sealing hub re-stamps what would land too early: it
                // never refuses an operation as stale (retiring its replica).
                if let stale = report.refused.first(where: { if case .stale = $0 { true } else { false } }) {
                    fail("hub-refused-stale", input, "the hub refused \(stale) on receiving \(frame)")
                }
                // An ack is final: the hub's log only grows at its end, and
                // no integrated operation's outcome ever changes.
                if let earliest = report.integratedOperations.map(\.stamp).min(), !(lastBefore < earliest) {
                    fail("hub-sealed-order", input, "the hub integrated \(report.integratedOperations) before \(lastBefore)")
                }
                for operation in report.integratedOperations {
                    if let outcome = hub.outcome(of: operation.id) { acked[operation.id] = outcome }
                }
                for (operation, outcome) in zip(hub.log, hub.outcomes) where acked[operation.id] != outcome {
                    fail("hub-ack-final", input,
                         "\(operation) was acked \(acked[operation.id].map { "\($0)" } ?? "never") but is now \(outcome)")
                }
            }
            let relayed = report.integratedOperations
            guard !relayed.isEmpty else { continue }
            observer.receive(relayed)
            require(observer, "observer replica", input, after: "the hub relayed \(relayed)")
            if strangers, observer.state != hub.state {
                fail("observer-converges", input, "after the hub relayed \(relayed):\nhub: \(hub.state)\nobserver: \(observer.state)")
            }
            for index in authors.indices {
                authors[index].replica.receive(relayed)
                require(authors[index].replica, "author replica", input, after: "the hub relayed \(relayed)")
            }
        }
        for (replica, own) in authors where hub.versions[replica.id] == UInt64(own) && replica.state != hub.state {
            // Every operation of the author reached the hub, and the author
            // got everything the hub integrated back: the same operations
            // at the same stamps, so the same state.
            fail("author-converges", input, "hub: \(hub.state)\nauthor \(replica.id): \(replica.state)")
        }
        if hub.state != Kind.initialState { checkStateFrame(hub.state, input: input) }
    }

    /// The operations of `replica` as its author holds them, when the
    /// input's could have been made by `Replica.record`: the copy of each
    /// sequence number the hub takes (the first well-formed one), numbered
    /// 1...n with Lamport times rising. Nil otherwise.
    static func recorded(by replica: ReplicaID, in operations: [Op]) -> [Op]? {
        let bound = Replica<Kind>.maxLamport
        var copies: [UInt64: Op] = [:]
        for operation in operations where operation.id.replica == replica && copies[operation.id.seq] == nil {
            guard (1...bound).contains(operation.id.seq), (1...bound).contains(operation.lamport) else { continue }
            copies[operation.id.seq] = operation
        }
        let own = copies.values.sorted { $0.id.seq < $1.id.seq }
        for (index, operation) in own.enumerated() {
            guard operation.id.seq == UInt64(index + 1), index == 0 || own[index - 1].lamport < operation.lamport else { return nil }
        }
        return own.isEmpty ? nil : own
    }
}
