/// The banchan shop (docs/rules/shop.md): customers order side dishes while
/// the staff edit the catalog, and no dish is ever oversold (PC1) nor sold at
/// a price its customer did not see (PC2). The fifth `BoardKind`.
///
/// Every rule is a check where the change lands in the total order: an order
/// takes every line or none (P6) and names the prices it saw; an edit names
/// the values it saw (`from`, P9), so it never silently undoes what was
/// ordered before it (PC4) and of two edits of one field the later is stale
/// (PC5); restocks are deltas and commute (PC4).
public enum BanchanShop: BoardKind {
    public static let name = "shop"
    public static let stockRange = 0...9_999
    public static let priceRange = 0...10_000_000
    /// Limits of one shop (docs/rules/shop.md, "Limits").
    public static let dishesMax = 300
    public static let imagesMax = 200
    public static let ordersKept = 5_000
    public static let linesMax = 20
    public static let quantityRange = 1...99

    public enum Intent: Equatable, Sendable {
        case order([OrderLine])
        /// `id` nil: the shop makes one up (returned in the ack).
        case addDish(Dish, idGiven: Bool)
        /// An `add_dish` naming a section that is not one of P1's: refused
        /// `bad_field` like any other bad value (P10), never stored.
        case addDishToUnknownSection(String)
        case removeDish(String)
        case editDish(String, set: [FieldValue], from: [FieldValue])
        case restock(String, by: Int)
        case setStock(String, to: Int, from: Int)
        /// An image stored over HTTP (P4): its name becomes usable in the catalog.
        case addImage(name: String, ShopImage)
    }

    public enum Change: Equatable, Sendable {
        case order([OrderLine])
        case addDish(Dish)
        case removeDish(String)
        case editDish(String, set: [FieldValue], from: [FieldValue])
        case restock(String, by: Int)
        case setStock(String, to: Int, from: Int)
        case addImage(name: String, ShopImage)
    }

    public struct State: Equatable, Sendable {
        /// Every dish, in catalog order (each section's in the order added).
        public var dishes: [Dish]
        /// Image names the catalog may use (the sample's and those stored).
        public var images: [String: ShopImage]
        /// The latest `ordersKept` orders, oldest first.
        public var orders: [PlacedOrder]

        public init(dishes: [Dish] = [], images: [String: ShopImage] = [:], orders: [PlacedOrder] = []) {
            self.dishes = dishes
            self.images = images
            self.orders = orders
        }

        public func index(of id: String) -> Int? { dishes.firstIndex { $0.id == id } }
        public func dish(_ id: String) -> Dish? { index(of: id).map { dishes[$0] } }
        public func dishes(in section: ShopSection) -> [Dish] { dishes.filter { $0.section == section } }
        /// Images stored over HTTP (the sample's do not count against `imagesMax`).
        public var storedImages: Int { images.values.filter { !$0.digest.isEmpty }.count }
    }

    /// P3: the sample catalog.
    public static var initialState: State { SampleCatalog.state }

    public static func prepare(_ intent: Intent, by author: String = "", in state: State) throws(ShopRefusal) -> Change? {
        let change: Change
        switch intent {
        case let .order(lines): change = .order(lines)
        case let .addDish(dish, idGiven):
            var dish = dish
            if !idGiven { dish.id = madeUpID(avoiding: state) }  // the only randomness, drawn here and recorded
            change = .addDish(dish)
        case let .addDishToUnknownSection(name):
            throw .badField(field: "section", why: "a section is main, soup or side, not \"\(name.prefix(32))\"")
        case let .removeDish(id): change = .removeDish(id)
        case let .editDish(id, set, from):
            // In `DishField` order, as its JSON decodes: every replica holds the same change.
            change = .editDish(id, set: set.sorted { $0.field.order < $1.field.order },
                               from: from.sorted { $0.field.order < $1.field.order })
        case let .restock(id, by): change = .restock(id, by: by)
        case let .setStock(id, to, from): change = .setStock(id, to: to, from: from)
        case let .addImage(name, image): change = .addImage(name: name, image)
        }
        // An order is checked without copying the state (its orders can be thousands).
        if case let .order(lines) = change {
            if let refusal = orderRefusal(lines, in: state) { throw refusal }
            return change
        }
        var probe = state
        switch apply(change, id: "", by: author, to: &probe) {
        case .applied: return change
        case .unchanged: return nil
        case let .refused(refusal): throw refusal
        }
    }

    public static func apply(_ operation: Operation<Change>, to state: inout State) -> Outcome<ShopRefusal> {
        apply(operation.change, id: orderID(of: operation.id), by: operation.author, to: &state)
    }

    /// An order's id: its operation's, so every replica names it alike.
    public static func orderID(of operation: OperationID) -> String {
        "o" + String(operation.replica.rawValue, radix: 36) + "-" + String(operation.seq)
    }

    static func apply(_ change: Change, id orderID: String, by author: String, to state: inout State) -> Outcome<ShopRefusal> {
        switch change {
        case let .order(lines): return placeOrder(lines, id: orderID, by: author, in: &state)
        case let .addDish(dish):
            if let problem = DishRules.problem(with: dish, images: state.images) { return .refused(problem) }
            if state.index(of: dish.id) != nil { return .refused(.duplicateID(dish.id)) }
            guard state.dishes.count < dishesMax else {
                return .refused(.full("a shop holds at most \(dishesMax) dishes; remove one first"))
            }
            var added = dish
            added.sold = 0
            insert(added, into: &state)
            return .applied
        case let .removeDish(id):
            guard let index = state.index(of: id) else { return .unchanged }  // removed already: a retry changes nothing
            state.dishes.remove(at: index)
            return .applied
        case let .editDish(id, set, from): return edit(id, set: set, from: from, in: &state)
        case let .restock(id, by):
            guard let index = state.index(of: id) else { return .refused(.unknownDish(id)) }
            let stock = state.dishes[index].stock
            let (result, overflow) = stock.addingReportingOverflow(by)
            guard !overflow, stockRange.contains(result) else { return .refused(.outOfRange(dish: id, stock: stock, by: by)) }
            if by == 0 { return .unchanged }
            state.dishes[index].stock = result
            return .applied
        case let .setStock(id, to, from):
            guard let index = state.index(of: id) else { return .refused(.unknownDish(id)) }
            let stock = state.dishes[index].stock
            guard stock == from else { return .refused(.stale([FieldValue(.stock, .int(stock))])) }
            guard stockRange.contains(to) else {
                return .refused(.badField(field: "to", why: "stock stays within 0 to \(stockRange.upperBound)"))
            }
            if to == from { return .unchanged }
            state.dishes[index].stock = to
            return .applied
        case let .addImage(name, image):
            if let problem = DishRules.imageProblem(name: name, image: image) { return .refused(problem) }
            if let known = state.images[name] {
                return known == image ? .unchanged : .refused(.imageExists(name))
            }
            guard state.storedImages < imagesMax else {
                return .refused(.full("a shop holds at most \(imagesMax) images besides the sample's"))
            }
            state.images[name] = image
            return .applied
        }
    }

    /// P6, PC1-PC3: all lines or none, each checked against the dish as it is here.
    static func placeOrder(_ lines: [OrderLine], id: String, by author: String, in state: inout State) -> Outcome<ShopRefusal> {
        if let refusal = orderRefusal(lines, in: state) { return .refused(refusal) }
        for line in lines {
            guard let index = state.index(of: line.dish) else { continue }
            state.dishes[index].stock -= line.quantity
            let (sold, overflow) = state.dishes[index].sold.addingReportingOverflow(line.quantity)
            state.dishes[index].sold = overflow ? .max : sold  // only a crafted checkpoint comes near
        }
        state.orders.append(PlacedOrder(id: id, who: author, lines: lines, total: total(of: lines)))
        if state.orders.count > ordersKept { state.orders.removeFirst(state.orders.count - ordersKept) }
        return .applied
    }

    /// Why `lines` cannot be taken from `state`, or nil (P6: shape, then each line's first fault).
    static func orderRefusal(_ lines: [OrderLine], in state: State) -> ShopRefusal? {
        if let problem = DishRules.problem(with: lines) { return problem }
        var wanted: [String: Int] = [:]
        for line in lines { wanted[line.dish, default: 0] += line.quantity }
        var problems: [LineProblem] = []
        for (index, line) in lines.enumerated() {
            guard let dish = state.dish(line.dish) else {
                problems.append(LineProblem(index: index, code: "unavailable"))
                continue
            }
            if dish.stock == 0 {
                problems.append(LineProblem(index: index, code: "sold_out"))
            } else if wanted[line.dish, default: 0] > dish.stock {
                problems.append(LineProblem(index: index, code: "not_enough_stock", available: dish.stock))
            } else if !dish.available {
                problems.append(LineProblem(index: index, code: "unavailable"))
            } else if line.price != dish.price {
                problems.append(LineProblem(index: index, code: "price_changed", price: dish.price))
            }
        }
        return problems.isEmpty ? nil : .order(problems)
    }

    /// P6: the sum of price x quantity (both bounded by P2 and P6, so it cannot overflow).
    public static func total(of lines: [OrderLine]) -> Int { lines.reduce(0) { $0 &+ $1.price &* $1.quantity } }

    /// P8, P9, PC5: each field over the value its editor saw; fields not named stay.
    static func edit(_ id: String, set: [FieldValue], from: [FieldValue], in state: inout State) -> Outcome<ShopRefusal> {
        guard let index = state.index(of: id) else { return .refused(.unknownDish(id)) }
        // What the editor saw first (P9): a stale edit is stale, whatever its values.
        let current = state.dishes[index]
        let stale = from.filter { current.value(of: $0.field) != $0.value }
        guard stale.isEmpty else { return .refused(.stale(stale.map { FieldValue($0.field, current.value(of: $0.field)) })) }
        var dish = current
        for change in set {
            guard dish.set(change.field, to: change.value) else {
                let why = change.field == .section ? "a section is main, soup or side" : "has the wrong type"
                return .refused(.badField(field: change.field.rawValue, why: why))
            }
        }
        if let problem = DishRules.problem(with: dish, images: state.images, blaming: set.map(\.field)) { return .refused(problem) }
        if dish == current { return .unchanged }
        if dish.section != current.section {
            state.dishes.remove(at: index)
            insert(dish, into: &state)
        } else {
            state.dishes[index] = dish
        }
        return .applied
    }

    /// A new or moved dish goes last in its section.
    static func insert(_ dish: Dish, into state: inout State) {
        let after = state.dishes.lastIndex { $0.section.order <= dish.section.order }
        state.dishes.insert(dish, at: after.map { $0 + 1 } ?? 0)
    }

    static func madeUpID(avoiding state: State) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        while true {
            let id = "d" + String((0..<7).map { _ in alphabet.randomElement()! })
            if state.index(of: id) == nil { return id }
        }
    }
}

extension ShopSection {
    /// Its place among the sections (P1).
    var order: Int { ShopSection.allCases.firstIndex(of: self) ?? 0 }
}
