import BoardCRDT
import Foundation

/// The Set table on the wire (docs/rules/set.md, "Frames"): intents
/// `choose` with `card`, `deal`, `new_game` with an optional integer `seed`;
/// state members `game`, `table`, `deck`, `sets_on_table`, `over`, `players`,
/// `last`. A card that is not a 4-character code is the frame error
/// `bad_card` (S8), never a refusal.
extension SetTable: WireKind {
    public static let pathSegment = "set"
    public static let intentTypes = ["choose", "deal", "new_game"]

    /// S3 (last sentence): a board nobody has played yet begins with a new game.
    public static var opening: Intent? { .newGame(seed: nil) }

    /// SV5: what a refusal the total order revealed names ("your choice of
    /// 2SFR was refused: 1DFR was just taken by ana").
    public static func summary(of change: Change) -> String {
        switch change {
        case let .choose(card, _, _): "your choice of \(card.code)"
        case .deal: "your deal"
        case .newGame: "your new game"
        }
    }

    private struct Fields: Decodable {
        var card: String?
        var seed: UInt64?
    }

    public static func intent(type: String, frame: Data) throws(ProtocolError) -> Intent? {
        guard intentTypes.contains(type) else { return nil }
        if type == "deal" { return .deal }
        let fields = try WireDecoding.decode(Fields.self, from: frame)
        switch type {
        case "choose":
            guard let text = fields.card else {
                throw ProtocolError("missing_field", "choose needs \"card\": \(Card.codeFormat)")
            }
            guard let card = Card(code: text) else {
                throw ProtocolError("bad_card", "\"\(text.prefix(16))\" is not a card: \(Card.codeFormat)")
            }
            return .choose(card)
        default: return .newGame(seed: fields.seed)
        }
    }

    public static func intentMembers(_ intent: Intent) -> String {
        switch intent {
        case let .choose(card): "\"type\":\"choose\",\"card\":\"\(card.code)\""
        case .deal: "\"type\":\"deal\""
        case let .newGame(seed?): "\"type\":\"new_game\",\"seed\":\(seed)"
        case .newGame(nil): "\"type\":\"new_game\""
        }
    }

    /// `"game":3,"table":["2SFR",null,...],"deck":54,"sets_on_table":4,
    /// "over":false,"players":{"ana":{"score":2,"misses":0,"picked":["1DOP"],
    /// "mismatch":false}},"last":{"player":"ana","cards":[...],"result":"set"}`
    /// (S9: `sets_on_table` always; players in name order).
    public static func stateShape(_ state: State) -> [ShapeMember] {
        let players = state.players.sorted { $0.key < $1.key }.map { name, player in
            ShapeMember(name, .object([
                ShapeMember("score", .int(player.score)), ShapeMember("misses", .int(player.misses)),
                ShapeMember("picked", .value(cardList(player.picked))), ShapeMember("mismatch", .bool(player.mismatch)),
            ]))
        }
        var last = StateShape.null
        if let played = state.last {
            var out = "{\"player\":"
            HubMessage.appendJSONString(played.player, to: &out)
            out += ",\"cards\":\(cardList(played.cards)),\"result\":\"\(played.result.rawValue)\"}"
            last = .value(out)
        }
        return [
            ShapeMember("game", .int(state.game)),
            ShapeMember("table", .array(state.table.map { place in place.map { .string($0.code) } ?? .null })),
            ShapeMember("deck", .int(state.deck.count)), ShapeMember("sets_on_table", .int(state.setsOnTable)),
            ShapeMember("over", .bool(state.over)), ShapeMember("players", .object(players)), ShapeMember("last", last),
        ]
    }

    /// The same shape as `SetTable.Change`'s `Codable` form.
    public static func changeJSON(_ change: Change) -> String {
        switch change {
        case let .newGame(seed): "{\"op\":\"new_game\",\"seed\":\(seed)}"
        case let .deal(game): "{\"op\":\"deal\",\"game\":\(game)}"
        case let .choose(card, game, seen):
            "{\"op\":\"choose\",\"card\":\"\(card.code)\",\"game\":\(game),\"seen\":\(cardList(seen))}"
        }
    }

    /// `["1DOP","2SFR"]`: card codes need no escaping.
    private static func cardList(_ cards: [Card]) -> String {
        "[" + cards.map { "\"\($0.code)\"" }.joined(separator: ",") + "]"
    }
}
