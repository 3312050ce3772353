import BoardCRDT
import Foundation

/// The juice bar on the wire (docs/rules/stock.md): `make` with `juice`,
/// `restock` with `fruit` and `by`, `set_stock` with `fruit`, `to`, `from`,
/// `reset_stock`; state members `stock`, `can_make`, `made`, `recent`.
extension FruitStock: WireKind {
    public static let pathSegment = "stock"
    public static let intentTypes = ["make", "restock", "set_stock", "reset_stock"]

    private struct Fields: Decodable {
        var juice: String?
        var fruit: String?
        var by: Int?
        var to: Int?
        var from: Int?
    }

    public static func intent(type: String, frame: Data) throws(ProtocolError) -> Intent? {
        guard intentTypes.contains(type) else { return nil }
        let fields = try WireDecoding.decode(Fields.self, from: frame)
        switch type {
        case "make":
            guard let name = fields.juice else {
                throw ProtocolError("missing_field",
                                    "make needs \"juice\": one of \(Juice.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            guard let juice = Juice(rawValue: name) else {
                throw ProtocolError(
                    "bad_juice",
                    "\"\(name.prefix(32))\" is not a juice; use one of \(Juice.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return .make(juice)
        case "restock":
            let fruit = try fruit(fields.fruit, for: type)
            guard let by = fields.by else { throw ProtocolError("missing_field", "restock needs \"by\": an integer, e.g. 1 or -1") }
            return .restock(fruit, by: by)
        case "set_stock":
            let fruit = try fruit(fields.fruit, for: type)
            guard let to = fields.to else { throw ProtocolError("missing_field", "set_stock needs \"to\": the new count") }
            guard let from = fields.from else { throw ProtocolError("missing_field", "set_stock needs \"from\": the count you saw") }
            return .setStock(fruit, to: to, from: from)
        default:
            return .resetStock
        }
    }

    private static func fruit(_ name: String?, for type: String) throws(ProtocolError) -> Fruit {
        let names = Fruit.allCases.map(\.rawValue).joined(separator: ", ")
        guard let name else { throw ProtocolError("missing_field", "\(type) needs \"fruit\": one of \(names)") }
        guard let fruit = Fruit(rawValue: name) else {
            throw ProtocolError("bad_fruit", "\"\(name.prefix(32))\" is not a fruit; use one of \(names)")
        }
        return fruit
    }

    public static func intentMembers(_ intent: Intent) -> String {
        switch intent {
        case let .make(juice): "\"type\":\"make\",\"juice\":\"\(juice.rawValue)\""
        case let .restock(fruit, by): "\"type\":\"restock\",\"fruit\":\"\(fruit.rawValue)\",\"by\":\(by)"
        case let .setStock(fruit, to, from): "\"type\":\"set_stock\",\"fruit\":\"\(fruit.rawValue)\",\"to\":\(to),\"from\":\(from)"
        case .resetStock: "\"type\":\"reset_stock\""
        }
    }

    public static func stateShape(_ state: State) -> [ShapeMember] {
        // Each recent make by its number among all makes (J7 counts them):
        // a make is one `add` at the end and one `remove` of the oldest,
        // not a shift of every place.
        let total = state.made.values.reduce(0) { $0 &+ $1 }
        let first = total &- state.recent.count
        let recent: [IdentifiedShape] = state.recent.enumerated().map { index, made in
            IdentifiedShape(id: String(first &+ index),
                            .object([ShapeMember("who", .string(made.who)), ShapeMember("juice", .string(made.juice.rawValue))]))
        }
        return [
            ShapeMember("stock", .object(Fruit.allCases.map { ShapeMember($0.rawValue, .int(state.count(of: $0))) })),
            ShapeMember("can_make", .object(Juice.allCases.map { ShapeMember($0.rawValue, .int(state.canMake($0))) })),
            ShapeMember("made",
                        .object(Juice.allCases.compactMap { juice in state.made[juice].map { ShapeMember(juice.rawValue, .int($0)) } })),
            ShapeMember("recent", .identified(recent)),
        ]
    }

    public static func changeJSON(_ change: Change) -> String {
        switch change {
        case let .make(juice): "{\"op\":\"make\",\"juice\":\"\(juice.rawValue)\"}"
        case let .restock(fruit, by): "{\"op\":\"restock\",\"fruit\":\"\(fruit.rawValue)\",\"by\":\(by)}"
        case let .setStock(fruit, to, from): "{\"op\":\"set_stock\",\"fruit\":\"\(fruit.rawValue)\",\"to\":\(to),\"from\":\(from)}"
        case .resetStock: "{\"op\":\"reset_stock\"}"
        }
    }

    /// J3: a make's ack says the juice is ready.
    public static func ackMembers(for operation: BoardCRDT.Operation<Change>?) -> String {
        guard case let .make(juice)? = operation?.change else { return "" }
        var out = "\"message\":"
        HubMessage.appendJSONString("\(juice.title) is ready. Enjoy!", to: &out)
        return out
    }

    /// JC2: what a make the total order refused is called when it is taken back.
    public static func summary(of change: Change) -> String {
        switch change {
        case let .make(juice): "your \(juice.title.lowercased())"
        case let .restock(fruit, _): "your restock of \(fruit)"
        case let .setStock(fruit, _, _): "your edit of \(fruit)"
        case .resetStock: "your stock reset"
        }
    }
}
