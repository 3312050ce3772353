/// Compact JSON for changes (what the store writes per operation, and what
/// SyncWire's hand-written `changeJSON` must match):
/// `{"op":"new_game","seed":123}`, `{"op":"deal","game":3}`,
/// `{"op":"choose","card":"2SFR","game":3,"seen":["1DOP"]}`.
extension SetTable.Change: Codable {
    private enum Key: String, CodingKey { case op, seed, game, card, seen }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let op = try container.decode(String.self, forKey: .op)
        switch op {
        case "new_game": self = .newGame(seed: try container.decode(UInt64.self, forKey: .seed))
        case "deal": self = .deal(game: try Self.game(in: container))
        case "choose":
            let card = try container.decode(Card.self, forKey: .card)
            let game = try Self.game(in: container)
            let seen = try container.decode([Card].self, forKey: .seen)
            // S4: a pick holds at most three distinct cards.
            guard seen.count <= SetTable.pickSize, Set(seen).count == seen.count else {
                throw DecodingError.dataCorruptedError(forKey: .seen, in: container,
                                                       debugDescription: "a pick holds at most 3 distinct cards")
            }
            self = .choose(card, game: game, seen: seen)
        default:
            throw DecodingError.dataCorruptedError(forKey: .op, in: container, debugDescription: "unknown change \"\(op.prefix(16))\"")
        }
    }

    /// Plays are only prepared in a dealt game, numbered from 1.
    private static func game(in container: KeyedDecodingContainer<Key>) throws -> Int {
        let game = try container.decode(Int.self, forKey: .game)
        guard game >= 1 else {
            throw DecodingError.dataCorruptedError(forKey: .game, in: container, debugDescription: "games are numbered from 1")
        }
        return game
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        switch self {
        case let .newGame(seed):
            try container.encode("new_game", forKey: .op)
            try container.encode(seed, forKey: .seed)
        case let .deal(game):
            try container.encode("deal", forKey: .op)
            try container.encode(game, forKey: .game)
        case let .choose(card, game, seen):
            try container.encode("choose", forKey: .op)
            try container.encode(card, forKey: .card)
            try container.encode(game, forKey: .game)
            try container.encode(seen, forKey: .seen)
        }
    }
}

/// `{"game":3,"table":["2SFR",null,...],"deck":["1DOP",...],
/// "matches":[{"player":"ana","cards":[...]}],
/// "players":[{"name":"ana","score":1,"misses":0,"picked":[],"mismatch":false}],
/// "last":null}`; players sorted by name so equal states encode alike.
/// A decoded state must pass `SetTable.violations(of:)` (S1 and the rest):
/// a checkpoint from a peer is input like any other.
extension SetTable.State: Codable {
    private enum Key: String, CodingKey { case game, table, deck, matches, players, last }

    private struct NamedPlayer: Codable {
        var name: String
        var score: Int
        var misses: Int
        var picked: [Card]
        var mismatch: Bool
        /// Left out when empty (`Player.lost`).
        var lost: [Card]?
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let named = try container.decode([NamedPlayer].self, forKey: .players)
        var players: [String: SetTable.Player] = [:]
        for player in named {
            guard players[player.name] == nil else {
                throw DecodingError.dataCorruptedError(forKey: .players, in: container,
                                                       debugDescription: "player \"\(player.name.prefix(32))\" appears twice")
            }
            players[player.name] = SetTable.Player(score: player.score, misses: player.misses, picked: player.picked,
                                                   mismatch: player.mismatch,
                                                 lost: player.lost ?? [])
        }
        self.init(
            game: try container.decode(Int.self, forKey: .game),
            table: try container.decode([Card?].self, forKey: .table),
            deck: try container.decode([Card].self, forKey: .deck),
            matches: try container.decode([SetTable.Match].self, forKey: .matches),
            players: players,
            last: try container.decodeIfPresent(SetTable.LastPick.self, forKey: .last)
        )
        let problems = SetTable.violations(of: self)
        guard problems.isEmpty else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath, debugDescription: "not a valid Set table: " + problems.prefix(3).joined(separator: "; ")))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(game, forKey: .game)
        try container.encode(table, forKey: .table)
        try container.encode(deck, forKey: .deck)
        try container.encode(matches, forKey: .matches)
        let named = players.sorted { $0.key < $1.key }.map { name, player in
            NamedPlayer(name: name, score: player.score, misses: player.misses, picked: player.picked, mismatch: player.mismatch,
                        lost: player.lost.isEmpty ? nil : player.lost)
        }
        try container.encode(named, forKey: .players)
        try container.encode(last, forKey: .last)
    }
}
