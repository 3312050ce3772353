extension BanchanShop {
    /// P4: whether `name` may name an image (`a-z 0-9 . _ -`, a known ending).
    public static func isImageName(_ name: String) -> Bool { DishRules.isImageName(name) }
    /// The content type `name`'s ending announces (`x.png`: `image/png`).
    public static func imageType(of name: String) -> String? { DishRules.imageType(of: name) }
}

/// P2's limits, P4's image names and P6's order shape: what makes a value
/// bad (P10), checked where a change lands so every replica agrees.
enum DishRules {
    static let idCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789_-")
    static let imageCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789._-")
    static let imageTypes = ["png": "image/png", "jpg": "image/jpeg", "webp": "image/webp", "svg": "image/svg+xml"]

    /// P2: 1-32 of `a-z 0-9 _ -`.
    static func isDishID(_ id: String) -> Bool {
        (1...32).contains(id.count) && id.allSatisfy { idCharacters.contains($0) }
    }

    /// P4: 1-64 of `a-z 0-9 . _ -`, ending in a known type.
    static func isImageName(_ name: String) -> Bool {
        (1...64).contains(name.count) && name.allSatisfy { imageCharacters.contains($0) } && imageType(of: name) != nil
    }

    /// The content type a name's ending announces.
    static func imageType(of name: String) -> String? {
        guard let dot = name.lastIndex(of: ".") else { return nil }
        return imageTypes[String(name[name.index(after: dot)...])]
    }

    static func isLine(_ text: String, _ lengths: ClosedRange<Int>) -> Bool {
        lengths.contains(text.count) && !text.contains(where: \.isNewline)
    }

    /// The first P2 limit `dish` breaks, blaming the first of `blaming` when the fault is between two fields.
    static func problem(with dish: Dish, images: [String: ShopImage], blaming: [DishField] = []) -> ShopRefusal? {
        func bad(_ field: DishField, _ why: String) -> ShopRefusal { .badField(field: field.rawValue, why: why) }
        guard isDishID(dish.id) else { return .badField(field: "id", why: "1 to 32 of a-z, 0-9, _ and -") }
        guard isLine(dish.title, 1...100) else { return bad(.title, "1 to 100 characters on one line") }
        guard dish.description.count <= 500 else { return bad(.description, "at most 500 characters") }
        guard BanchanShop.priceRange.contains(dish.price) else { return bad(.price, "a whole number of won from 0 to 10,000,000") }
        if let original = dish.originalPrice {
            guard BanchanShop.priceRange.contains(original) else {
                return bad(.originalPrice, "null, or a whole number of won up to 10,000,000")
            }
            guard original > dish.price else {
                let field: DishField = blaming.contains(.originalPrice) || !blaming.contains(.price) ? .originalPrice : .price
                return bad(field, "the original price must be above the price (or null: no discount)")
            }
        }
        guard dish.badges.count <= 5 else { return bad(.badges, "at most 5 badges") }
        guard dish.badges.allSatisfy({ isLine($0, 1...20) }) else { return bad(.badges, "each badge 1 to 20 characters on one line") }
        if let thumb = dish.thumb, images[thumb] == nil {
            return bad(.thumb, "no image \"\(thumb.prefix(64))\" is stored; upload it first")
        }
        guard dish.images.count <= 10 else { return bad(.images, "at most 10 images") }
        if let missing = dish.images.first(where: { images[$0] == nil }) {
            return bad(.images, "no image \"\(missing.prefix(64))\" is stored; upload it first")
        }
        guard dish.detailImages.count <= 20 else { return bad(.detailImages, "at most 20 detail images") }
        if let missing = dish.detailImages.first(where: { images[$0] == nil }) {
            return bad(.detailImages, "no image \"\(missing.prefix(64))\" is stored; upload it first")
        }
        guard BanchanShop.stockRange.contains(dish.stock) else { return bad(.stock, "from 0 to 9,999") }
        return nil
    }

    /// P6: 1-20 lines, each naming a dish id, 1-99 of it, at a price in range.
    static func problem(with lines: [OrderLine]) -> ShopRefusal? {
        guard (1...BanchanShop.linesMax).contains(lines.count) else {
            return .badField(field: "lines", why: "an order has 1 to \(BanchanShop.linesMax) lines")
        }
        for line in lines {
            guard isDishID(line.dish) else { return .badField(field: "dish", why: "a dish id: 1 to 32 of a-z, 0-9, _ and -") }
            guard BanchanShop.quantityRange.contains(line.quantity) else { return .badField(field: "quantity", why: "1 to 99 of a dish") }
            guard BanchanShop.priceRange.contains(line.price) else {
                return .badField(field: "price", why: "the price you saw, 0 to 10,000,000 won")
            }
        }
        return nil
    }

    /// P4: a name of the right form whose bytes are of its type, at most 1 MiB.
    static func imageProblem(name: String, image: ShopImage) -> ShopRefusal? {
        guard isImageName(name) else {
            return .badField(field: "name", why: "1 to 64 of a-z, 0-9, ., _ and -, ending in .png, .jpg, .webp or .svg")
        }
        guard imageType(of: name) == image.type else {
            return .badField(field: "type", why: "the bytes are not of the type the name ends in")
        }
        guard (1...(1 << 20)).contains(image.bytes) else { return .badField(field: "bytes", why: "an image is 1 byte to 1 MiB") }
        guard image.digest.count == 64, image.digest.allSatisfy(\.isHexDigit) else {
            return .badField(field: "digest", why: "a SHA-256 in hex")
        }
        return nil
    }
}
