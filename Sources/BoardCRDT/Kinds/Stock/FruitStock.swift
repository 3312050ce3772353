/// The juice bar's fruit stock (docs/rules/stock.md): several people make
/// juices from one stock and edit it at once, and no count ever goes below
/// zero on any replica (JC1). The third `BoardKind`.
///
/// Every rule is a check in the total order: a make takes all its fruit or
/// none (J3), so replaying makes in any agreed order never goes below zero;
/// restocks are deltas and commute (JC3); an edit names the count it saw
/// (J5), so it never silently undoes a make ordered before it (JC4). With
/// the hub's sealed order (docs/SEMANTICS.md §7c) a make acknowledged as
/// ready is never taken back; one a replica showed optimistically but the
/// total order refuses is taken back there, and its person is told (JC2).
public enum FruitStock: BoardKind {
    public static let name = "stock"
    /// J1: every fruit's count when nobody has used the board, and after `reset_stock` (J9).
    public static let startingCount = 10
    /// J1: counts stay within 0...999.
    public static let counts = 0...999
    /// J7: how many of the latest makes are kept for display.
    public static let recentKept = 20

    /// What a person does.
    public enum Intent: Equatable, Sendable {
        case make(Juice)
        case restock(Fruit, by: Int)
        case setStock(Fruit, to: Int, from: Int)
        case resetStock
    }

    /// What travels: the intents themselves carry all the context they need
    /// (a make is checked where it lands; an edit names the count it saw).
    public enum Change: Equatable, Sendable {
        case make(Juice)
        case restock(Fruit, by: Int)
        case setStock(Fruit, to: Int, from: Int)
        case resetStock
    }

    /// The shared stock (J1, J6, J7).
    public struct State: Equatable, Sendable {
        /// Every fruit's count, 0...999.
        public var stock: [Fruit: Int]
        /// How many of each juice were made (J7).
        public var made: [Juice: Int]
        /// The latest makes, oldest first, at most `recentKept` (J7).
        public var recent: [MadeJuice]

        public init(stock: [Fruit: Int] = FruitStock.fullStock, made: [Juice: Int] = [:], recent: [MadeJuice] = []) {
            self.stock = stock
            self.made = made
            self.recent = recent
        }

        public func count(of fruit: Fruit) -> Int { stock[fruit] ?? 0 }

        /// J6: how many of `juice` the stock could make now.
        public func canMake(_ juice: Juice) -> Int {
            juice.uses.map { count(of: $0.fruit) / $0.count }.min() ?? 0
        }

        /// J3: the fruit `juice` lacks, with what is there and what is needed.
        public func shortfall(for juice: Juice) -> [Shortfall] {
            juice.uses.compactMap { use in
                count(of: use.fruit) < use.count ? Shortfall(fruit: use.fruit, have: count(of: use.fruit), need: use.count) : nil
            }
        }
    }

    /// One make, for display (J7).
    public struct MadeJuice: Equatable, Codable, Sendable {
        public var who: String
        public var juice: Juice
        public init(who: String, juice: Juice) {
            self.who = who
            self.juice = juice
        }
    }

    /// A fruit a make lacks (J3).
    public struct Shortfall: Equatable, Codable, Sendable {
        public var fruit: Fruit
        public var have: Int
        public var need: Int
        public init(fruit: Fruit, have: Int, need: Int) {
            self.fruit = fruit
            self.have = have
            self.need = need
        }
    }

    /// J1, J9: ten of every fruit.
    public static var fullStock: [Fruit: Int] {
        Dictionary(uniqueKeysWithValues: Fruit.allCases.map { ($0, startingCount) })
    }

    public static var initialState: State { State() }

    public static func prepare(_ intent: Intent, by author: String = "", in state: State) throws(StockRefusal) -> Change? {
        let change: Change
        switch intent {
        case let .make(juice): change = .make(juice)
        case let .restock(fruit, by): change = .restock(fruit, by: by)
        case let .setStock(fruit, to, from): change = .setStock(fruit, to: to, from: from)
        case .resetStock: change = .resetStock
        }
        // The rules are the same checks `apply` makes where the change lands.
        var probe = state
        switch apply(change, by: author, to: &probe) {
        case .applied: return change
        case .unchanged: return nil
        case let .refused(refusal): throw refusal
        }
    }

    public static func apply(_ operation: Operation<Change>, to state: inout State) -> Outcome<StockRefusal> {
        apply(operation.change, by: operation.author, to: &state)
    }

    static func apply(_ change: Change, by author: String, to state: inout State) -> Outcome<StockRefusal> {
        switch change {
        case let .make(juice):
            // J3, JC1: all of it or nothing, checked where the make lands.
            let short = state.shortfall(for: juice)
            guard short.isEmpty else { return .refused(.notEnoughFruit(juice, short)) }
            for use in juice.uses { state.stock[use.fruit] = state.count(of: use.fruit) - use.count }
            // J7: counted. A count already at Int.max (only a crafted
            // checkpoint holds one; `violations` allows any count >= 0)
            // stays there: `apply` never traps.
            let made = state.made[juice] ?? 0
            state.made[juice] = made == .max ? made : made + 1
            state.recent.append(MadeJuice(who: author, juice: juice))
            if state.recent.count > recentKept { state.recent.removeFirst(state.recent.count - recentKept) }
            return .applied
        case let .restock(fruit, by):
            // J4, JC3: a delta, so concurrent restocks all count.
            let (result, overflow) = state.count(of: fruit).addingReportingOverflow(by)
            guard !overflow, counts.contains(result) else {
                return .refused(.outOfRange(fruit, count: state.count(of: fruit), by: by))
            }
            if by == 0 { return .unchanged }
            state.stock[fruit] = result
            return .applied
        case let .setStock(fruit, to, from):
            // J5, JC4: only over the count its editor saw.
            guard state.count(of: fruit) == from else { return .refused(.stale(fruit, now: state.count(of: fruit), saw: from)) }
            guard counts.contains(to) else { return .refused(.outOfRange(fruit, count: from, by: nil, to: to)) }
            if to == from { return .unchanged }
            state.stock[fruit] = to
            return .applied
        case .resetStock:
            // J9: every fruit back to ten; what was made stays counted.
            if state.stock == fullStock { return .unchanged }
            state.stock = fullStock
            return .applied
        }
    }
}

/// Every refusal a person can meet at the juice bar (J3-J5, JC1, JC4).
public enum StockRefusal: KindRefusal, CustomStringConvertible {
    /// `not_enough_fruit` (J3, JC1): names each short fruit.
    case notEnoughFruit(Juice, [FruitStock.Shortfall])
    /// `out_of_range` (J4, J5): the count would leave 0...999.
    case outOfRange(Fruit, count: Int, by: Int?, to: Int? = nil)
    /// `stale` (J5, JC4): the count is no longer what the editor saw.
    case stale(Fruit, now: Int, saw: Int)

    public var code: String {
        switch self {
        case .notEnoughFruit: "not_enough_fruit"
        case .outOfRange: "out_of_range"
        case .stale: "stale"
        }
    }

    public var message: String {
        switch self {
        case let .notEnoughFruit(_, short):
            "not enough fruit: " + short.map { "\($0.fruit) \($0.have) of \($0.need)" }.joined(separator: ", ")
        case let .outOfRange(fruit, count, by?, _):
            "\(fruit) is \(count); \(by > 0 ? "+" : "")\(by) would take it outside 0 to 999"
        case let .outOfRange(fruit, _, _, to):
            "\(fruit) cannot be set to \(to.map(String.init) ?? "that"); counts stay within 0 to 999"
        case let .stale(fruit, now, saw):
            "\(fruit) is now \(now), not \(saw): someone changed it; look again and edit from \(now)"
        }
    }

    public var description: String { message }
}
