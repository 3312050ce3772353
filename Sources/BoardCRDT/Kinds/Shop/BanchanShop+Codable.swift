/// Compact JSON for the shop: dishes with P2's wire names, changes as
/// `{"op":"order","lines":[...]}`, `{"op":"edit_dish","dish":"d1","set":{"price":5900},"from":{"price":6500}}`.
/// A decoded state must pass `BanchanShop.violations(of:)`: a checkpoint from
/// a peer is input like any other.
extension Dish: Codable {
    private enum Key: String, CodingKey {
        case id, section, title, description, price, badges, thumb, images, stock, available, sold
        case originalPrice = "original_price"
        case detailImages = "detail_images"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        self.init(id: try c.decode(String.self, forKey: .id), section: try c.decode(ShopSection.self, forKey: .section),
                  title: try c.decode(String.self, forKey: .title),
                  description: try c.decodeIfPresent(String.self, forKey: .description) ?? "",
                  price: try c.decode(Int.self, forKey: .price), originalPrice: try c.decodeIfPresent(Int.self, forKey: .originalPrice),
                  badges: try c.decodeIfPresent([String].self, forKey: .badges) ?? [],
                  thumb: try c.decodeIfPresent(String.self, forKey: .thumb),
                  images: try c.decodeIfPresent([String].self, forKey: .images) ?? [],
                  detailImages: try c.decodeIfPresent([String].self, forKey: .detailImages) ?? [],
                  stock: try c.decodeIfPresent(Int.self, forKey: .stock) ?? 0,
                  available: try c.decodeIfPresent(Bool.self, forKey: .available) ?? true,
                  sold: try c.decodeIfPresent(Int.self, forKey: .sold) ?? 0)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(id, forKey: .id)
        try c.encode(section, forKey: .section)
        try c.encode(title, forKey: .title)
        try c.encode(description, forKey: .description)
        try c.encode(price, forKey: .price)
        try c.encode(originalPrice, forKey: .originalPrice)
        try c.encode(badges, forKey: .badges)
        try c.encode(thumb, forKey: .thumb)
        try c.encode(images, forKey: .images)
        try c.encode(detailImages, forKey: .detailImages)
        try c.encode(stock, forKey: .stock)
        try c.encode(available, forKey: .available)
        try c.encode(sold, forKey: .sold)
    }
}

/// `{"price":5900,"original_price":null}`: fields of a dish with values of
/// each field's own type, in `DishField` order. Unknown names and wrong
/// types are errors naming the field.
public struct FieldValues: Codable, Equatable, Sendable {
    public var list: [FieldValue]
    public init(_ list: [FieldValue]) { self.list = list }

    struct Name: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Name.self)
        var list: [FieldValue] = []
        for key in c.allKeys {
            guard let field = DishField(rawValue: key.stringValue) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: c,
                                                       debugDescription: "not a field of a dish one may set (id and sold are not)")
            }
            list.append(FieldValue(field, try Self.value(of: field, forKey: key, in: c)))
        }
        self.list = list.sorted { $0.field.order < $1.field.order }
    }

    static func value(of field: DishField, forKey key: Name, in c: KeyedDecodingContainer<Name>) throws -> ShopValue {
        switch field {
        case .price, .stock: return .int(try c.decode(Int.self, forKey: key))
        case .originalPrice: return try c.decodeNil(forKey: key) ? .null : .int(try c.decode(Int.self, forKey: key))
        case .thumb: return try c.decodeNil(forKey: key) ? .null : .string(try c.decode(String.self, forKey: key))
        case .section, .title, .description: return .string(try c.decode(String.self, forKey: key))
        case .badges, .images, .detailImages: return .strings(try c.decode([String].self, forKey: key))
        case .available: return .bool(try c.decode(Bool.self, forKey: key))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Name.self)
        for item in list {
            let key = Name(stringValue: item.field.rawValue)
            switch item.value {
            case let .int(number): try c.encode(number, forKey: key)
            case let .string(text): try c.encode(text, forKey: key)
            case let .strings(list): try c.encode(list, forKey: key)
            case let .bool(flag): try c.encode(flag, forKey: key)
            case .null: try c.encodeNil(forKey: key)
            }
        }
    }
}

extension DishField {
    var order: Int { DishField.allCases.firstIndex(of: self) ?? 0 }
}

extension BanchanShop.Change: Codable {
    private enum Key: String, CodingKey { case op, lines, dish, set, from, by, to, name, type, digest, bytes }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        let op = try c.decode(String.self, forKey: .op)
        switch op {
        case "order": self = .order(try c.decode([OrderLine].self, forKey: .lines))
        case "add_dish": self = .addDish(try c.decode(Dish.self, forKey: .dish))
        case "remove_dish": self = .removeDish(try c.decode(String.self, forKey: .dish))
        case "edit_dish":
            self = .editDish(try c.decode(String.self, forKey: .dish), set: try c.decode(FieldValues.self, forKey: .set).list,
                             from: try c.decode(FieldValues.self, forKey: .from).list)
        case "restock": self = .restock(try c.decode(String.self, forKey: .dish), by: try c.decode(Int.self, forKey: .by))
        case "set_stock":
            self = .setStock(try c.decode(String.self, forKey: .dish), to: try c.decode(Int.self, forKey: .to),
                             from: try c.decode(Int.self, forKey: .from))
        case "add_image":
            self = .addImage(name: try c.decode(String.self, forKey: .name),
                             ShopImage(type: try c.decode(String.self, forKey: .type), digest: try c.decode(String.self, forKey: .digest),
                                       bytes: try c.decode(Int.self, forKey: .bytes)))
        default:
            throw DecodingError.dataCorruptedError(forKey: .op, in: c, debugDescription: "unknown change \"\(op.prefix(16))\"")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        switch self {
        case let .order(lines):
            try c.encode("order", forKey: .op)
            try c.encode(lines, forKey: .lines)
        case let .addDish(dish):
            try c.encode("add_dish", forKey: .op)
            try c.encode(dish, forKey: .dish)
        case let .removeDish(id):
            try c.encode("remove_dish", forKey: .op)
            try c.encode(id, forKey: .dish)
        case let .editDish(id, set, from):
            try c.encode("edit_dish", forKey: .op)
            try c.encode(id, forKey: .dish)
            try c.encode(FieldValues(set), forKey: .set)
            try c.encode(FieldValues(from), forKey: .from)
        case let .restock(id, by):
            try c.encode("restock", forKey: .op)
            try c.encode(id, forKey: .dish)
            try c.encode(by, forKey: .by)
        case let .setStock(id, to, from):
            try c.encode("set_stock", forKey: .op)
            try c.encode(id, forKey: .dish)
            try c.encode(to, forKey: .to)
            try c.encode(from, forKey: .from)
        case let .addImage(name, image):
            try c.encode("add_image", forKey: .op)
            try c.encode(name, forKey: .name)
            try c.encode(image.type, forKey: .type)
            try c.encode(image.digest, forKey: .digest)
            try c.encode(image.bytes, forKey: .bytes)
        }
    }
}

/// `{"dishes":[...],"images":{"NAME":{...}},"orders":[...]}`.
extension BanchanShop.State: Codable {
    private enum Key: String, CodingKey { case dishes, images, orders }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        let state = BanchanShop.State(dishes: try c.decode([Dish].self, forKey: .dishes),
                                      images: try c.decode([String: ShopImage].self, forKey: .images),
                                      orders: try c.decode([PlacedOrder].self, forKey: .orders))
        let problems = BanchanShop.violations(of: state)
        guard problems.isEmpty else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "not a valid shop: " + problems.prefix(3).joined(separator: "; ")))
        }
        self = state
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(dishes, forKey: .dishes)
        try c.encode(images, forKey: .images)
        try c.encode(orders, forKey: .orders)
    }
}

/// A value as JSON of its own type: 5900, "text", ["a","b"], true, null.
extension ShopValue: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let flag = try? c.decode(Bool.self) { self = .bool(flag) }
        else if let number = try? c.decode(Int.self) { self = .int(number) }
        else if let text = try? c.decode(String.self) { self = .string(text) }
        else { self = .strings(try c.decode([String].self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case let .int(number): try c.encode(number)
        case let .string(text): try c.encode(text)
        case let .strings(list): try c.encode(list)
        case let .bool(flag): try c.encode(flag)
        case .null: try c.encodeNil()
        }
    }
}

