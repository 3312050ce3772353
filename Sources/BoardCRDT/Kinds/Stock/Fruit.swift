/// J1: the five fruits the juice bar keeps, in the order they are shown.
public enum Fruit: String, CaseIterable, Codable, Sendable, Comparable, CustomStringConvertible {
    case strawberry, banana, pineapple, kiwi, mango

    public static func < (a: Fruit, b: Fruit) -> Bool {
        allCases.firstIndex(of: a) ?? 0 < allCases.firstIndex(of: b) ?? 0
    }

    public var description: String { rawValue }
}

/// J2: the seven juices and the fruit each uses, in the order they are shown.
public enum Juice: String, CaseIterable, Codable, Sendable, CustomStringConvertible {
    case strawberry, banana, kiwi, pineapple
    case strawberryBanana = "strawberry_banana"
    case mango
    case mangoKiwi = "mango_kiwi"

    /// What a make takes from the stock, all at once (J3).
    public var uses: [(fruit: Fruit, count: Int)] {
        switch self {
        case .strawberry: [(.strawberry, 16)]
        case .banana: [(.banana, 2)]
        case .kiwi: [(.kiwi, 3)]
        case .pineapple: [(.pineapple, 2)]
        case .strawberryBanana: [(.strawberry, 10), (.banana, 1)]
        case .mango: [(.mango, 3)]
        case .mangoKiwi: [(.mango, 2), (.kiwi, 1)]
        }
    }

    /// How the juice is shown: "Strawberry-banana juice".
    public var title: String {
        switch self {
        case .strawberry: "Strawberry juice"
        case .banana: "Banana juice"
        case .kiwi: "Kiwi juice"
        case .pineapple: "Pineapple juice"
        case .strawberryBanana: "Strawberry-banana juice"
        case .mango: "Mango juice"
        case .mangoKiwi: "Mango-kiwi juice"
        }
    }

    public var description: String { rawValue }
}
