import BoardCRDT
import Foundation

/// The banchan shop on the wire (docs/rules/shop.md): `order` with `lines`;
/// `add_dish`, `edit_dish`, `remove_dish`, `restock`, `set_stock` for the
/// staff (A13: admin); `my_orders` answered to its sender alone. State
/// member `sections`: the three sections, each with its dishes by id.
extension BanchanShop: WireKind {
    public static let pathSegment = "shop"
    public static let intentTypes = ["order", "add_dish", "edit_dish", "remove_dish", "restock", "set_stock"]
    public static let queryTypes = ["my_orders"]
    /// P7: a replica would hold every customer's orders.
    public static let takesReplicaClients = false
    /// P7: how many of a customer's latest orders `my_orders` answers.
    public static let myOrdersShown = 20

    private struct Fields: Decodable {
        var lines: [OrderLine]?
        var dish: String?
        var id: String?
        var section: String?
        var title: String?
        var description: String?
        var price: Int?
        var originalPrice: Int?
        var badges: [String]?
        var thumb: String?
        var images: [String]?
        var detailImages: [String]?
        var stock: Int?
        var available: Bool?
        var set: FieldValues?
        var from: FieldValues?
        var by: Int?
        var to: Int?
        var fromCount: Int?

        private enum Key: String, CodingKey {
            case lines, dish, id, section, title, description, price, badges, thumb, images, stock, available, set, from, by, to
            case originalPrice = "original_price", detailImages = "detail_images"
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Key.self)
            lines = try c.decodeIfPresent([OrderLine].self, forKey: .lines)
            dish = try c.decodeIfPresent(String.self, forKey: .dish)
            id = try c.decodeIfPresent(String.self, forKey: .id)
            section = try c.decodeIfPresent(String.self, forKey: .section)
            title = try c.decodeIfPresent(String.self, forKey: .title)
            description = try c.decodeIfPresent(String.self, forKey: .description)
            price = try c.decodeIfPresent(Int.self, forKey: .price)
            originalPrice = try c.decodeIfPresent(Int.self, forKey: .originalPrice)
            badges = try c.decodeIfPresent([String].self, forKey: .badges)
            thumb = try c.decodeIfPresent(String.self, forKey: .thumb)
            images = try c.decodeIfPresent([String].self, forKey: .images)
            detailImages = try c.decodeIfPresent([String].self, forKey: .detailImages)
            stock = try c.decodeIfPresent(Int.self, forKey: .stock)
            available = try c.decodeIfPresent(Bool.self, forKey: .available)
            by = try c.decodeIfPresent(Int.self, forKey: .by)
            to = try c.decodeIfPresent(Int.self, forKey: .to)
            // `from` is a count for set_stock and an object for edit_dish.
            if let count = try? c.decodeIfPresent(Int.self, forKey: .from) {
                fromCount = count
            } else {
                from = try c.decodeIfPresent(FieldValues.self, forKey: .from)
            }
            set = try c.decodeIfPresent(FieldValues.self, forKey: .set)
        }
    }

    public static func intent(type: String, frame: Data) throws(ProtocolError) -> Intent? {
        guard intentTypes.contains(type) else { return nil }
        let fields = try WireDecoding.decode(Fields.self, from: frame)
        func dish() throws(ProtocolError) -> String {
            guard let id = fields.dish else { throw ProtocolError("missing_field", "\(type) needs \"dish\": a dish id") }
            return id
        }
        switch type {
        case "order":
            guard let lines = fields.lines else {
                throw ProtocolError("missing_field", "order needs \"lines\": [{\"dish\":ID,\"quantity\":1-99,\"price\":what you saw}]")
            }
            return .order(lines)
        case "add_dish":
            guard let sectionName = fields.section else {
                throw ProtocolError("missing_field", "add_dish needs \"section\": main, soup or side")
            }
            // P10: an unknown section is a refused value, like a bad price.
            guard let section = ShopSection(rawValue: sectionName) else { return .addDishToUnknownSection(sectionName) }
            guard let title = fields.title else { throw ProtocolError("missing_field", "add_dish needs \"title\"") }
            guard let price = fields.price else { throw ProtocolError("missing_field", "add_dish needs \"price\": won, 0 to 10,000,000") }
            let dish = Dish(id: fields.id ?? "", section: section, title: title, description: fields.description ?? "", price: price,
                            originalPrice: fields.originalPrice, badges: fields.badges ?? [], thumb: fields.thumb,
                            images: fields.images ?? [],
                            detailImages: fields.detailImages ?? [], stock: fields.stock ?? 0, available: fields.available ?? true)
            return .addDish(dish, idGiven: fields.id != nil)
        case "edit_dish":
            let id = try dish()
            guard let set = fields.set, !set.list.isEmpty else {
                throw ProtocolError("missing_field", "edit_dish needs \"set\": the fields to change, e.g. {\"price\":5900}")
            }
            guard let from = fields.from else {
                throw ProtocolError("missing_field", "edit_dish needs \"from\": each field of \"set\" as you saw it")
            }
            if let missing = set.list.first(where: { change in !from.list.contains { $0.field == change.field } }) {
                throw ProtocolError("missing_field", "\"from\" needs \"\(missing.field.rawValue)\": the value you saw")
            }
            return .editDish(id, set: set.list, from: from.list.filter { seen in set.list.contains { $0.field == seen.field } })
        case "remove_dish":
            return .removeDish(try dish())
        case "restock":
            let id = try dish()
            guard let by = fields.by else { throw ProtocolError("missing_field", "restock needs \"by\": a signed change, e.g. 5 or -2") }
            return .restock(id, by: by)
        default:
            let id = try dish()
            guard let to = fields.to else { throw ProtocolError("missing_field", "set_stock needs \"to\": the new stock") }
            guard let from = fields.fromCount else { throw ProtocolError("missing_field", "set_stock needs \"from\": the stock you saw") }
            return .setStock(id, to: to, from: from)
        }
    }

    /// P12, A13: catalog intents need the admin role; ordering needs write.
    public static func needsAdmin(_ intent: Intent) -> Bool {
        if case .order = intent { return false }
        return true
    }

    public static var adminOnlyMessage: String { "only the shop's staff (an admin token) may change the catalog" }

    /// An image's name reaches the log only through the hub's HTTP PUT, made
    /// by an admin; a replica client's `add_image` needs the role too.
    public static func needsAdmin(change: Change) -> Bool {
        if case .order = change { return false }
        return true
    }

    public static func intentMembers(_ intent: Intent) -> String {
        switch intent {
        case let .order(lines): "\"type\":\"order\",\"lines\":" + json(lines)
        case let .addDish(dish, idGiven):
            "\"type\":\"add_dish\"," + dishMembers(dish, withID: idGiven, section: true, sold: false)
        case let .addDishToUnknownSection(name): "\"type\":\"add_dish\",\"section\":" + quoted(name)
        case let .removeDish(id): "\"type\":\"remove_dish\",\"dish\":" + quoted(id)
        case let .editDish(id, set, from):
            "\"type\":\"edit_dish\",\"dish\":" + quoted(id) + ",\"set\":" + json(FieldValues(set)) + ",\"from\":" + json(FieldValues(from))
        case let .restock(id, by): "\"type\":\"restock\",\"dish\":" + quoted(id) + ",\"by\":\(by)"
        case let .setStock(id, to, from): "\"type\":\"set_stock\",\"dish\":" + quoted(id) + ",\"to\":\(to),\"from\":\(from)"
        case let .addImage(name, image):
            "\"type\":\"add_image\",\"name\":" + quoted(name) + ",\"image_type\":" + quoted(image.type) + ",\"bytes\":\(image.bytes)"
        }
    }

    public static func stateShape(_ state: State) -> [ShapeMember] {
        let sections = ShopSection.allCases.map { section in
            IdentifiedShape(id: section.rawValue, .object([
                ShapeMember("id", .string(section.rawValue)),
                ShapeMember("title", .string(section.title)),
                ShapeMember("subtitle", .string(section.subtitle)),
                ShapeMember("dishes",
                            .identified(state.dishes(in: section).map { IdentifiedShape(id: $0.id, dishShape($0, section: false)) })),
            ]))
        }
        return [ShapeMember("sections", .identified(sections))]
    }

    /// A dish as the state frame (no `section`) or `GET /shop/NAME/dishes/ID` (with it) shows it.
    public static func dishShape(_ dish: Dish, section: Bool) -> StateShape {
        var members = [ShapeMember("id", .string(dish.id))]
        if section { members.append(ShapeMember("section", .string(dish.section.rawValue))) }
        members += [
            ShapeMember("title", .string(dish.title)),
            ShapeMember("description", .string(dish.description)),
            ShapeMember("price", .int(dish.price)),
            ShapeMember("original_price", dish.originalPrice.map { .int($0) } ?? .null),
            ShapeMember("badges", .array(dish.badges.map { .string($0) })),
            ShapeMember("thumb", dish.thumb.map { .string($0) } ?? .null),
            ShapeMember("images", .array(dish.images.map { .string($0) })),
            ShapeMember("detail_images", .array(dish.detailImages.map { .string($0) })),
            ShapeMember("stock", .int(dish.stock)),
            ShapeMember("available", .bool(dish.available)),
            ShapeMember("sold", .int(dish.sold)),
        ]
        return .object(members)
    }

    /// One section as the state frame shows it (P5's `GET .../sections/ID`).
    public static func sectionShape(_ section: ShopSection, in state: State) -> [ShapeMember] {
        [ShapeMember("id", .string(section.rawValue)), ShapeMember("title", .string(section.title)),
         ShapeMember("subtitle", .string(section.subtitle)),
         ShapeMember("dishes", .array(state.dishes(in: section).map { dishShape($0, section: false) }))]
    }

    public static func changeJSON(_ change: Change) -> String {
        switch change {
        case let .order(lines): "{\"op\":\"order\",\"lines\":" + json(lines) + "}"
        case let .addDish(dish): "{\"op\":\"add_dish\",\"dish\":{" + dishMembers(dish, withID: true, section: true, sold: true) + "}}"
        case let .removeDish(id): "{\"op\":\"remove_dish\",\"dish\":" + quoted(id) + "}"
        case let .editDish(id, set, from):
            "{\"op\":\"edit_dish\",\"dish\":" + quoted(id) + ",\"set\":" + json(FieldValues(set)) + ",\"from\":" + json(FieldValues(from))
                + "}"
        case let .restock(id, by): "{\"op\":\"restock\",\"dish\":" + quoted(id) + ",\"by\":\(by)}"
        case let .setStock(id, to, from): "{\"op\":\"set_stock\",\"dish\":" + quoted(id) + ",\"to\":\(to),\"from\":\(from)}"
        case let .addImage(name, image):
            "{\"op\":\"add_image\",\"name\":" + quoted(name) + ",\"type\":" + quoted(image.type) + ",\"digest\":" + quoted(image.digest)
                + ",\"bytes\":\(image.bytes)}"
        }
    }

    /// P6: a taken order's id, total and message; P8: an added dish's id.
    public static func ackMembers(for operation: BoardCRDT.Operation<Change>?) -> String {
        switch operation?.change {
        case let .order(lines)?:
            guard let operation else { return "" }
            return "\"order\":" + quoted(orderID(of: operation.id)) + ",\"total\":\(total(of: lines)),\"message\":\"주문이 완료되었습니다\""
        case let .addDish(dish)?: return "\"id\":" + quoted(dish.id)
        case .addImage?: return "\"created\":true"
        default: return ""
        }
    }

    /// P6, P9, P10: what a refusal carries besides its code and message.
    public static func refusalMembers(_ refusal: ShopRefusal) -> String {
        switch refusal {
        case let .order(lines): "\"lines\":" + json(lines)
        case let .badField(field, _): "\"field\":" + quoted(field)
        case let .stale(current): "\"current\":" + json(FieldValues(current))
        default: ""
        }
    }

    /// P7: the asker's latest orders, newest first, as ack members.
    public static func answer(query: String, by author: String, in state: State) -> String {
        let mine = state.orders.reversed().filter { $0.who == author }.prefix(myOrdersShown)
        let orders = mine.map { "{\"order\":" + quoted($0.id) + ",\"lines\":" + json($0.lines) + ",\"total\":\($0.total)}" }
        return "\"orders\":[" + orders.joined(separator: ",") + "]"
    }

    /// P5: `sections/ID` (that section as in the state frame) and `dishes/ID`
    /// (one dish with its `section`), each with the board's `version`.
    public static func read(path: [Substring], in state: State, version: UInt64) -> (status: UInt32, json: String)? {
        guard path.count == 2 else { return nil }
        switch path[0] {
        case "sections":
            guard let section = ShopSection(rawValue: String(path[1])) else {
                return (404, #"{"error":"unknown_section","message":"sections are main, soup and side"}"#)
            }
            return (200, StateShape.object(sectionShape(section, in: state) + [ShapeMember("version", .int(version))]).json)
        case "dishes":
            guard let dish = state.dish(String(path[1])) else {
                return (404, "{\"error\":\"unknown_dish\",\"message\":" + quoted("there is no dish \"\(path[1].prefix(32))\"") + "}")
            }
            guard case var .object(members) = dishShape(dish, section: true) else { return nil }
            members.append(ShapeMember("version", .int(version)))
            return (200, StateShape.object(members).json)
        default:
            return nil
        }
    }

    public static func image(named name: String, in state: State) -> (type: String, digest: String)? {
        state.images[name].map { ($0.type, $0.digest) }
    }

    /// A shop as its `state` frame shows it (sections of dishes; the images
    /// its dishes name; no orders: they are their owners' alone, P7).
    public static func state(fromFrame frame: Data) -> State? {
        struct Frame: Decodable {
            struct Section: Decodable {
                var id: String
                var dishes: [FrameDish]
            }
            var sections: [Section]
        }
        struct FrameDish: Decodable {
            var id: String
            var title: String
            var description: String
            var price: Int
            var original_price: Int?
            var badges: [String]
            var thumb: String?
            var images: [String]
            var detail_images: [String]
            var stock: Int
            var available: Bool
            var sold: Int
        }
        guard let read = try? JSONDecoder().decode(Frame.self, from: frame) else { return nil }
        var state = State()
        for section in read.sections {
            // A section this client does not know is left out, not the whole shop.
            guard let kind = ShopSection(rawValue: section.id) else { continue }
            for d in section.dishes {
                state.dishes.append(Dish(id: d.id, section: kind, title: d.title, description: d.description, price: d.price,
                                         originalPrice: d.original_price, badges: d.badges, thumb: d.thumb, images: d.images,
                                         detailImages: d.detail_images, stock: d.stock, available: d.available, sold: d.sold))
            }
        }
        return state
    }

    public static func summary(of change: Change) -> String {
        switch change {
        case .order: "your order"
        case let .addDish(dish): "your new dish \(dish.title)"
        case let .removeDish(id): "your removal of \(id)"
        case let .editDish(id, _, _): "your edit of \(id)"
        case let .restock(id, _): "your restock of \(id)"
        case let .setStock(id, _, _): "your stock of \(id)"
        case let .addImage(name, _): "your image \(name)"
        }
    }

    static func dishMembers(_ dish: Dish, withID: Bool, section: Bool, sold: Bool) -> String {
        var members: [ShapeMember] = []
        guard case let .object(all) = dishShape(dish, section: section) else { return "" }
        for member in all where (withID || member.key != "id") && (sold || member.key != "sold") { members.append(member) }
        return ShapeMember.text(members)
    }

    static func quoted(_ text: String) -> String {
        var out = ""
        HubMessage.appendJSONString(text, to: &out)
        return out
    }

    static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }
}
