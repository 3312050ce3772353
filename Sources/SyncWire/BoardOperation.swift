import BoardCRDT

/// An operation of the letter board. (Foundation also has an `Operation`.)
public typealias BoardOperation = BoardCRDT.Operation<LetterBoard.Change>

extension BoardCRDT.Operation where Change == LetterBoard.Change {
    /// The operation's JSON, written by hand (the store writes one per change;
    /// JSONEncoder costs more than the SQLite insert). Same shape as `Codable`:
    /// `{"id":[r,s],"lamport":l,"change":{...}}`.
    public var jsonText: String {
        var out = "{\"id\":[\(id.replica.rawValue),\(id.seq)],\"lamport\":\(lamport),\"change\":{\"op\":"
        switch change {
        case let .select(letter): out += "\"select\",\"letter\":\"\(letter)\""
        case let .deselect(letter): out += "\"deselect\",\"letter\":\"\(letter)\""
        case let .move(letter, anchor, side, place):
            out += "\"move\",\"letter\":\"\(letter)\",\"anchor\":\"\(anchor)\",\"side\":\"\(side.rawValue)\",\"place\":\(place)"
        case let .reset(seen):
            out += "\"reset\",\"seen\":[" + seen.map { "[\($0.replica.rawValue),\($0.seq)]" }.joined(separator: ",") + "]"
        }
        return out + "}}"
    }
}
