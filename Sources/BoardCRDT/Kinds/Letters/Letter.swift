/// One of the 26 tiles, `A` to `Z` (B1).
public struct Letter: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// 0 for A ... 25 for Z.
    public let index: UInt8

    public init?(index: Int) {
        guard (0..<26).contains(index) else { return nil }
        self.index = UInt8(index)
    }

    /// Parses exactly one upper-case ASCII letter.
    public init?(_ text: some StringProtocol) {
        let scalars = text.unicodeScalars
        guard scalars.count == 1, let scalar = scalars.first,
              scalar.value >= 65, scalar.value <= 90 else { return nil }
        index = UInt8(scalar.value - 65)
    }

    public static let all: [Letter] = (0..<26).map { Letter(index: $0)! }

    public var character: Character { Character(Unicode.Scalar(index + 65)) }
    /// "A" ... "Z", from a table: a state frame names every selected letter.
    public var description: String { Self.names[Int(index)] }
    private static let names: [String] = (0..<26).map { String(Character(Unicode.Scalar(UInt8($0) + 65))) }
    public static func < (a: Letter, b: Letter) -> Bool { a.index < b.index }
}

extension Letter: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let letter = Letter(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "\"\(text.prefix(8))\" is not a letter A-Z"))
        }
        self = letter
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
