/// One of the 81 cards of Set (S1): a number, a shape, a shading and a
/// colour, each with three values. On the wire a card is four characters in
/// that order, `2SFR` = two solid red squiggles.
public struct Card: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// 0...80: `number * 27 + shape * 9 + shading * 3 + colour`, each
    /// feature counted from 0, so `1DFR` is 0 and `3OOP` is 80.
    public let index: UInt8

    /// S1: how many symbols the card shows.
    public enum Number: Int, CaseIterable, Sendable {
        case one, two, three
        /// 1, 2 or 3.
        public var count: Int { rawValue + 1 }
    }
    /// S1: `D` diamond, `S` squiggle, `O` oval.
    public enum Shape: Int, CaseIterable, Sendable { case diamond, squiggle, oval }
    /// S1: `F` solid (filled), `T` striped, `O` open.
    public enum Shading: Int, CaseIterable, Sendable { case solid, striped, open }
    /// S1: `R` red, `G` green, `P` purple.
    public enum Colour: Int, CaseIterable, Sendable { case red, green, purple }

    /// The card with `index` 0...80, nil outside.
    public init?(index: Int) {
        guard (0..<81).contains(index) else { return nil }
        self.index = UInt8(index)
    }

    public init(number: Number, shape: Shape, shading: Shading, colour: Colour) {
        index = UInt8(number.rawValue * 27 + shape.rawValue * 9 + shading.rawValue * 3 + colour.rawValue)
    }

    /// Parses a four-character wire code (S1), upper case, e.g. `2SFR`; nil
    /// for anything else (`4DFR`, `1XFR`, `2sfr`, `2SFRR`).
    public init?(code: some StringProtocol) {
        var values: [Int] = []
        for scalar in code.unicodeScalars {
            guard values.count < 4, let value = Card.value(of: scalar, feature: values.count) else { return nil }
            values.append(value)
        }
        guard values.count == 4 else { return nil }
        index = UInt8(values[0] * 27 + values[1] * 9 + values[2] * 3 + values[3])
    }

    /// The characters of each feature, in value order.
    private static let codeLetters: [[Unicode.Scalar]] = [["1", "2", "3"], ["D", "S", "O"], ["F", "T", "O"], ["R", "G", "P"]]

    private static func value(of scalar: Unicode.Scalar, feature: Int) -> Int? {
        codeLetters[feature].firstIndex(of: scalar)
    }

    /// The value 0...2 of feature 0 (number) ... 3 (colour).
    func feature(_ feature: Int) -> Int {
        switch feature {
        case 0: Int(index) / 27
        case 1: Int(index) / 9 % 3
        case 2: Int(index) / 3 % 3
        default: Int(index) % 3
        }
    }

    public var number: Number { Number(rawValue: feature(0)) ?? .one }
    public var shape: Shape { Shape(rawValue: feature(1)) ?? .diamond }
    public var shading: Shading { Shading(rawValue: feature(2)) ?? .solid }
    public var colour: Colour { Colour(rawValue: feature(3)) ?? .red }

    /// The four-character wire code (S1), e.g. `2SFR`.
    public var code: String {
        var text = ""
        text.unicodeScalars.append(contentsOf: (0..<4).map { Card.codeLetters[$0][feature($0)] })
        return text
    }

    public var description: String { code }

    /// The card in words, number first, for screen readers and the terminal
    /// (SV7): "two solid red squiggles", "one open purple diamond",
    /// "three striped green ovals".
    public var words: String {
        let numbers = ["one", "two", "three"]
        let shadings = ["solid", "striped", "open"]
        let colours = ["red", "green", "purple"]
        let shapes = ["diamond", "squiggle", "oval"]
        let plural = feature(0) == 0 ? "" : "s"
        return "\(numbers[feature(0)]) \(shadings[feature(2)]) \(colours[feature(3)]) \(shapes[feature(1)])\(plural)"
    }

    /// The 81 cards in index order (S1).
    public static let all: [Card] = (0..<81).map { Card(uncheckedIndex: $0) }

    private init(uncheckedIndex: Int) { index = UInt8(uncheckedIndex) }

    public static func < (a: Card, b: Card) -> Bool { a.index < b.index }

    /// S2: three distinct cards form a set when every feature is the same on
    /// all three or different on all three. With values 0...2 that is: each
    /// feature's values sum to a multiple of 3.
    public static func isSet(_ a: Card, _ b: Card, _ c: Card) -> Bool {
        guard a != b, b != c, a != c else { return false }
        return (0..<4).allSatisfy { (a.feature($0) + b.feature($0) + c.feature($0)) % 3 == 0 }
    }

    /// S2: the one card that makes a set with `a` and `b` (`1DFR` + `2DTG`
    /// needs `3DOP`); `a` itself when `a == b`, which makes no set.
    public static func completing(_ a: Card, _ b: Card) -> Card {
        var index = 0
        for feature in 0..<4 {
            let value = (6 - a.feature(feature) - b.feature(feature)) % 3
            index = index * 3 + value
        }
        return Card(uncheckedIndex: index)
    }
}

/// A card is its code on the wire and in the store: `"2SFR"`.
extension Card: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let card = Card(code: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "\"\(text.prefix(8))\" is not a card: \(Card.codeFormat)"))
        }
        self = card
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(code)
    }

    /// The wire format in words, for error messages.
    public static let codeFormat = "a card is 4 characters: number 1-3, shape D/S/O, shading F/T/O, colour R/G/P, e.g. 2SFR"
}
