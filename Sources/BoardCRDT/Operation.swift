/// One change made by one replica, stamped for the total order.
public struct Operation<Change: Equatable & Codable & Sendable>: Equatable, Sendable {
    public var id: OperationID
    public var lamport: UInt64
    /// Who acted: the display name the change was made under ("" when the
    /// client gave none and the kind does not care). The hub checks it is
    /// the connection's own name before it merges the operation.
    public var author: String
    public var change: Change

    public init(id: OperationID, lamport: UInt64, author: String = "", change: Change) {
        self.id = id
        self.lamport = lamport
        self.author = author
        self.change = change
    }

    public var stamp: Stamp { Stamp(lamport: lamport, replica: id.replica) }
}

/// `{"id":[replica,seq],"lamport":l,"by":"ana","change":{...}}`; `by` is left
/// out when empty.
extension Operation: Codable {
    private enum Key: String, CodingKey { case id, lamport, by, change }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        id = try container.decode(OperationID.self, forKey: .id)
        lamport = try container.decode(UInt64.self, forKey: .lamport)
        author = try container.decodeIfPresent(String.self, forKey: .by) ?? ""
        change = try container.decode(Change.self, forKey: .change)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(id, forKey: .id)
        try container.encode(lamport, forKey: .lamport)
        if !author.isEmpty { try container.encode(author, forKey: .by) }
        try container.encode(change, forKey: .change)
    }
}
