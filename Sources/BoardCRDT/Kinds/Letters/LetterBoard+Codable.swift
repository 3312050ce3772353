/// Compact JSON for changes: `{"op":"select","letter":"C"}`,
/// `{"op":"move","letter":"C","anchor":"D","side":"after","place":2}`,
/// `{"op":"reset","seen":[[replica,seq],...]}`.
extension LetterBoard.Change: Codable {
    private enum Key: String, CodingKey { case op, letter, anchor, side, place, seen }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let op = try container.decode(String.self, forKey: .op)
        switch op {
        case "select": self = .select(try container.decode(Letter.self, forKey: .letter))
        case "deselect": self = .deselect(try container.decode(Letter.self, forKey: .letter))
        case "move":
            self = .move(
                try container.decode(Letter.self, forKey: .letter),
                anchor: try container.decode(Letter.self, forKey: .anchor),
                side: try container.decode(LetterBoard.Side.self, forKey: .side),
                place: try container.decode(Int.self, forKey: .place)
            )
        case "reset":
            let seen = try container.decode([OperationID].self, forKey: .seen)
            guard seen.count <= LetterBoard.capacity else {
                throw DecodingError.dataCorruptedError(forKey: .seen, in: container, debugDescription: "a reset names at most 6 selections")
            }
            self = .reset(seen: seen)
        default:
            throw DecodingError.dataCorruptedError(forKey: .op, in: container, debugDescription: "unknown change \"\(op.prefix(16))\"")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        switch self {
        case let .select(letter):
            try container.encode("select", forKey: .op)
            try container.encode(letter, forKey: .letter)
        case let .deselect(letter):
            try container.encode("deselect", forKey: .op)
            try container.encode(letter, forKey: .letter)
        case let .move(letter, anchor, side, place):
            try container.encode("move", forKey: .op)
            try container.encode(letter, forKey: .letter)
            try container.encode(anchor, forKey: .anchor)
            try container.encode(side, forKey: .side)
            try container.encode(place, forKey: .place)
        case let .reset(seen):
            try container.encode("reset", forKey: .op)
            try container.encode(seen, forKey: .seen)
        }
    }
}

/// A decoded state must satisfy B2 (at most 6 distinct letters, each picked
/// by a different operation): a checkpoint from a peer is input like any other.
extension LetterBoard.State {
    private enum Key: String, CodingKey { case selections }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let selections = try container.decode([LetterBoard.Selection].self, forKey: .selections)
        guard selections.count <= LetterBoard.capacity else {
            throw DecodingError.dataCorruptedError(forKey: .selections, in: container,
                                                   debugDescription: "a board holds at most 6 selections, not \(selections.count)")
        }
        guard Set(selections.map(\.letter)).count == selections.count,
              Set(selections.map(\.selectedBy)).count == selections.count else {
            throw DecodingError.dataCorruptedError(forKey: .selections, in: container,
                                                   debugDescription: "a letter or a selecting operation appears twice")
        }
        self.init(selections: selections)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(selections, forKey: .selections)
    }
}
