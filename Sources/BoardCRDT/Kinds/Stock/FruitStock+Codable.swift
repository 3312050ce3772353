/// Compact JSON for changes: `{"op":"make","juice":"mango_kiwi"}`,
/// `{"op":"restock","fruit":"kiwi","by":1}`,
/// `{"op":"set_stock","fruit":"kiwi","to":12,"from":10}`, `{"op":"reset_stock"}`.
extension FruitStock.Change: Codable {
    private enum Key: String, CodingKey { case op, juice, fruit, by, to, from }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let op = try container.decode(String.self, forKey: .op)
        switch op {
        case "make": self = .make(try container.decode(Juice.self, forKey: .juice))
        case "restock":
            self = .restock(try container.decode(Fruit.self, forKey: .fruit), by: try container.decode(Int.self, forKey: .by))
        case "set_stock":
            self = .setStock(try container.decode(Fruit.self, forKey: .fruit), to: try container.decode(Int.self, forKey: .to),
                             from: try container.decode(Int.self, forKey: .from))
        case "reset_stock": self = .resetStock
        default:
            throw DecodingError.dataCorruptedError(forKey: .op, in: container, debugDescription: "unknown change \"\(op.prefix(16))\"")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        switch self {
        case let .make(juice):
            try container.encode("make", forKey: .op)
            try container.encode(juice, forKey: .juice)
        case let .restock(fruit, by):
            try container.encode("restock", forKey: .op)
            try container.encode(fruit, forKey: .fruit)
            try container.encode(by, forKey: .by)
        case let .setStock(fruit, to, from):
            try container.encode("set_stock", forKey: .op)
            try container.encode(fruit, forKey: .fruit)
            try container.encode(to, forKey: .to)
            try container.encode(from, forKey: .from)
        case .resetStock:
            try container.encode("reset_stock", forKey: .op)
        }
    }
}

/// `{"stock":{"strawberry":10,...},"made":{"mango":2},"recent":[{"who":"ana","juice":"mango"}]}`.
/// A decoded state must pass `FruitStock.violations(of:)`: a checkpoint from
/// a peer is input like any other.
extension FruitStock.State: Codable {
    private enum Key: String, CodingKey { case stock, made, recent }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let stock = try container.decode([String: Int].self, forKey: .stock)
        let made = try container.decode([String: Int].self, forKey: .made)
        var state = FruitStock.State(stock: [:], made: [:], recent: try container.decode([FruitStock.MadeJuice].self, forKey: .recent))
        for (name, count) in stock {
            guard let fruit = Fruit(rawValue: name) else {
                throw DecodingError.dataCorruptedError(forKey: .stock, in: container,
                                                       debugDescription: "unknown fruit \"\(name.prefix(16))\"")
            }
            state.stock[fruit] = count
        }
        for (name, count) in made {
            guard let juice = Juice(rawValue: name) else {
                throw DecodingError.dataCorruptedError(forKey: .made, in: container,
                                                       debugDescription: "unknown juice \"\(name.prefix(16))\"")
            }
            state.made[juice] = count
        }
        let problems = FruitStock.violations(of: state)
        guard problems.isEmpty else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "not a valid stock: " + problems.prefix(3).joined(separator: "; ")))
        }
        self = state
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(Dictionary(uniqueKeysWithValues: stock.map { ($0.key.rawValue, $0.value) }), forKey: .stock)
        try container.encode(Dictionary(uniqueKeysWithValues: made.map { ($0.key.rawValue, $0.value) }), forKey: .made)
        try container.encode(recent, forKey: .recent)
    }
}
