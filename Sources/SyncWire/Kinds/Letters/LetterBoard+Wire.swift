import BoardCRDT
import Foundation

/// The letter board on the wire (docs/rules/letters.md, "Frames"): `select`/`deselect` with
/// `letter`, `move` with `letter` and `to`, `reset`; state member `order`.
extension LetterBoard: WireKind {
    public static let pathSegment = "boards"
    public static let intentTypes = ["select", "deselect", "move", "reset"]

    private struct Fields: Decodable {
        var letter: String?
        var to: Int?
    }

    public static func intent(type: String, frame: Data) throws(ProtocolError) -> Intent? {
        guard intentTypes.contains(type) else { return nil }
        let fields = try WireDecoding.decode(Fields.self, from: frame)
        switch type {
        case "select": return .select(try letter(fields.letter, for: type))
        case "deselect": return .deselect(try letter(fields.letter, for: type))
        case "move":
            let letter = try letter(fields.letter, for: type)
            guard let place = fields.to else {
                throw ProtocolError("missing_field", "move needs \"to\": the 1-based place to move the letter to")
            }
            return .move(letter, to: place)
        default: return .reset
        }
    }

    private static func letter(_ text: String?, for type: String) throws(ProtocolError) -> Letter {
        guard let text else {
            throw ProtocolError("missing_field", "\(type) needs \"letter\": one of A-Z")
        }
        guard let letter = Letter(text) else {
            throw ProtocolError("bad_letter", "\"\(text.prefix(16))\" is not a letter: use one upper-case letter A-Z")
        }
        return letter
    }

    public static func intentMembers(_ intent: Intent) -> String {
        switch intent {
        case let .select(letter): "\"type\":\"select\",\"letter\":\"\(letter)\""
        case let .deselect(letter): "\"type\":\"deselect\",\"letter\":\"\(letter)\""
        case let .move(letter, place): "\"type\":\"move\",\"letter\":\"\(letter)\",\"to\":\(place)"
        case .reset: "\"type\":\"reset\""
        }
    }

    public static func stateShape(_ state: State) -> [ShapeMember] {
        // By letter (each is selected at most once): a move is one `move`.
        [ShapeMember("order", .identified(state.selections.map { selection in
            let letter = selection.letter.description
            return IdentifiedShape(id: letter, .string(letter))
        }))]
    }

    /// `select`, `deselect` and `move` (every change but `reset`) read by hand.
    public static func scanChange(_ fields: JSONFields) -> Change? {
        var op: String?, letter: Letter?, anchor: Letter?, side: Side?, place: Int?
        for (key, range) in fields.members {
            switch key {
            case "op": op = fields.string(range)
            case "letter": letter = fields.string(range).flatMap { Letter($0) }
            case "anchor": anchor = fields.string(range).flatMap { Letter($0) }
            case "side": side = fields.string(range).flatMap { Side(rawValue: $0) }
            case "place": place = fields.integer(range)
            default: return nil
            }
        }
        switch op {
        case "select": return letter.map { .select($0) }
        case "deselect": return letter.map { .deselect($0) }
        case "move":
            guard let letter, let anchor, let side, let place else { return nil }
            return .move(letter, anchor: anchor, side: side, place: place)
        default: return nil
        }
    }

    public static func changeJSON(_ change: Change) -> String {
        switch change {
        case let .select(letter): "{\"op\":\"select\",\"letter\":\"\(letter)\"}"
        case let .deselect(letter): "{\"op\":\"deselect\",\"letter\":\"\(letter)\"}"
        case let .move(letter, anchor, side, place):
            "{\"op\":\"move\",\"letter\":\"\(letter)\",\"anchor\":\"\(anchor)\",\"side\":\"\(side.rawValue)\",\"place\":\(place)}"
        case let .reset(seen):
            "{\"op\":\"reset\",\"seen\":[" + seen.map { "[\($0.replica.rawValue),\($0.seq)]" }.joined(separator: ",") + "]}"
        }
    }

    public static func summary(of change: Change) -> String {
        switch change {
        case let .select(letter): "your pick of \(letter)"
        case let .deselect(letter): "your deselect of \(letter)"
        case let .move(letter, _, _, _): "your move of \(letter)"
        case .reset: "your reset"
        }
    }

    public static func scanIntent(_ bytes: UnsafeRawBufferPointer) -> ClientMessage<LetterBoard>? {
        ThinIntentScanner.scan(bytes)
    }
}
