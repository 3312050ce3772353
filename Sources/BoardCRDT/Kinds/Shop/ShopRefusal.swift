/// Every refusal a customer or the shop's staff can meet (P6, P8-P10, PC1-PC5).
public enum ShopRefusal: KindRefusal, CustomStringConvertible {
    /// P6: the order is not taken; every failing line, the first one's code.
    case order([LineProblem])
    /// P10: a value outside P2's limits, an unknown section or an image name not stored.
    case badField(field: String, why: String)
    /// P9, PC4, PC5: what the editor saw (`from`) is no longer so; the fields as they are now.
    case stale([FieldValue])
    /// P8: a restock would take the stock outside 0...9,999.
    case outOfRange(dish: String, stock: Int, by: Int)
    /// No dish of that id (edit, remove, restock, set_stock).
    case unknownDish(String)
    /// `add_dish` with an id the shop already has.
    case duplicateID(String)
    /// P4: an image name is never reused for other bytes.
    case imageExists(String)
    /// P4: at most 200 images besides the sample's; the catalog at most `BanchanShop.dishesMax` dishes.
    case full(String)

    public var code: String {
        switch self {
        case let .order(lines): lines.first?.code ?? "unavailable"
        case .badField: "bad_field"
        case .stale: "stale"
        case .outOfRange: "out_of_range"
        case .unknownDish: "unknown_dish"
        case .duplicateID: "duplicate_id"
        case .imageExists: "image_exists"
        case .full: "shop_full"
        }
    }

    public var message: String {
        switch self {
        case let .order(lines):
            guard let first = lines.first else { return "the order cannot be taken" }
            let more = lines.count > 1 ? " (and \(lines.count - 1) more line\(lines.count > 2 ? "s" : ""))" : ""
            switch first.code {
            case "sold_out": return "line \(first.index + 1) is sold out\(more)"
            case "not_enough_stock": return "line \(first.index + 1): only \(first.available ?? 0) left\(more)"
            case "price_changed": return "line \(first.index + 1): the price is now \(first.price ?? 0) won; " +
                                         "order again at the new price\(more)"
            default: return "line \(first.index + 1) is not on sale\(more)"
            }
        case let .badField(field, why): return "\(field): \(why)"
        case let .stale(current):
            let fields = current.map(\.field.rawValue).joined(separator: ", ")
            return "someone changed \(fields) since you looked; look again and edit from what is there now"
        case let .outOfRange(dish, stock, by):
            return "\(dish) has \(stock); \(by > 0 ? "+" : "")\(by) would take it outside 0 to \(BanchanShop.stockRange.upperBound)"
        case let .unknownDish(id): return "there is no dish \"\(id.prefix(32))\""
        case let .duplicateID(id): return "a dish \"\(id)\" exists already"
        case let .imageExists(name): return "an image \"\(name)\" exists with other bytes; choose another name"
        case let .full(what): return what
        }
    }

    public var description: String { message }
}
