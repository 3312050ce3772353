/// The shop's three sections, always in this order (P1).
public enum ShopSection: String, CaseIterable, Codable, Sendable {
    case main, soup, side

    public var title: String {
        switch self {
        case .main: "메인반찬"
        case .soup: "국.찌개"
        case .side: "밑반찬"
        }
    }

    public var subtitle: String {
        switch self {
        case .main: "한그릇 뚝딱 메인 요리"
        case .soup: "김이 모락모락 국.찌개"
        case .side: "언제 먹어도 든든한 밑반찬"
        }
    }
}

/// One dish of the catalog (P2).
public struct Dish: Equatable, Sendable {
    public var id: String
    public var section: ShopSection
    public var title: String
    public var description: String
    /// In won, 0...10,000,000.
    public var price: Int
    /// Nil, or above `price`: the dish is discounted.
    public var originalPrice: Int?
    public var badges: [String]
    public var thumb: String?
    public var images: [String]
    public var detailImages: [String]
    /// 0...9,999.
    public var stock: Int
    public var available: Bool
    /// How many were ordered (P7).
    public var sold: Int

    public init(id: String, section: ShopSection, title: String, description: String = "", price: Int,
                originalPrice: Int? = nil, badges: [String] = [], thumb: String? = nil, images: [String] = [],
                detailImages: [String] = [], stock: Int = 0, available: Bool = true, sold: Int = 0) {
        self.id = id
        self.section = section
        self.title = title
        self.description = description
        self.price = price
        self.originalPrice = originalPrice
        self.badges = badges
        self.thumb = thumb
        self.images = images
        self.detailImages = detailImages
        self.stock = stock
        self.available = available
        self.sold = sold
    }

    /// The value of `field` now (for `edit_dish`'s `from` and `stale`'s `current`).
    public func value(of field: DishField) -> ShopValue {
        switch field {
        case .section: .string(section.rawValue)
        case .title: .string(title)
        case .description: .string(description)
        case .price: .int(price)
        case .originalPrice: originalPrice.map(ShopValue.int) ?? .null
        case .badges: .strings(badges)
        case .thumb: thumb.map(ShopValue.string) ?? .null
        case .images: .strings(images)
        case .detailImages: .strings(detailImages)
        case .stock: .int(stock)
        case .available: .bool(available)
        }
    }

    /// Sets `field` to `value`; false when the value has the wrong type for it.
    public mutating func set(_ field: DishField, to value: ShopValue) -> Bool {
        switch (field, value) {
        case let (.section, .string(name)):
            guard let section = ShopSection(rawValue: name) else { return false }
            self.section = section
        case let (.title, .string(text)): title = text
        case let (.description, .string(text)): description = text
        case let (.price, .int(number)): price = number
        case let (.originalPrice, .int(number)): originalPrice = number
        case (.originalPrice, .null): originalPrice = nil
        case let (.badges, .strings(list)): badges = list
        case let (.thumb, .string(name)): thumb = name
        case (.thumb, .null): thumb = nil
        case let (.images, .strings(list)): images = list
        case let (.detailImages, .strings(list)): detailImages = list
        case let (.stock, .int(number)): stock = number
        case let (.available, .bool(flag)): available = flag
        default: return false
        }
        return true
    }
}

/// The fields `edit_dish` may set (P8: every P2 field but `id`; `sold` is the shop's own count).
public enum DishField: String, CaseIterable, Codable, Sendable {
    case section, title, description, price
    case originalPrice = "original_price"
    case badges, thumb, images
    case detailImages = "detail_images"
    case stock, available
}

/// A field's value as the wire carries it.
public enum ShopValue: Equatable, Sendable {
    case int(Int)
    case string(String)
    case strings([String])
    case bool(Bool)
    case null
}

/// One field and its value (`set`, `from`, `current`), in `DishField` order.
public struct FieldValue: Equatable, Codable, Sendable {
    public var field: DishField
    public var value: ShopValue
    public init(_ field: DishField, _ value: ShopValue) {
        self.field = field
        self.value = value
    }
}

/// One line of an order (P6): the price is what the customer saw.
public struct OrderLine: Equatable, Codable, Sendable {
    public var dish: String
    public var quantity: Int
    public var price: Int
    public init(dish: String, quantity: Int, price: Int) {
        self.dish = dish
        self.quantity = quantity
        self.price = price
    }
}

/// A taken order, kept for its customer (P7).
public struct PlacedOrder: Equatable, Codable, Sendable {
    public var id: String
    public var who: String
    public var lines: [OrderLine]
    public var total: Int
    public init(id: String, who: String, lines: [OrderLine], total: Int) {
        self.id = id
        self.who = who
        self.lines = lines
        self.total = total
    }
}

/// A stored image's name, as the catalog knows it (P4): its bytes live in
/// the hub's store, found by `digest`.
public struct ShopImage: Equatable, Codable, Sendable {
    /// `image/png`, `image/jpeg`, `image/webp` or `image/svg+xml`.
    public var type: String
    /// Hex SHA-256 of the bytes; "" for the sample's own drawings.
    public var digest: String
    public var bytes: Int
    public init(type: String, digest: String, bytes: Int) {
        self.type = type
        self.digest = digest
        self.bytes = bytes
    }
}

/// Why one line of an order cannot be taken (P6).
public struct LineProblem: Equatable, Codable, Sendable {
    public var index: Int
    /// `sold_out`, `not_enough_stock`, `unavailable` or `price_changed`.
    public var code: String
    /// `not_enough_stock`: how many are left.
    public var available: Int?
    /// `price_changed`: the price now.
    public var price: Int?
    public init(index: Int, code: String, available: Int? = nil, price: Int? = nil) {
        self.index = index
        self.code = code
        self.available = available
        self.price = price
    }
}
