/// A small reader of one JSON object's members, for the few frames the
/// hub reads on its hottest paths (a cluster's log entries, a kind's
/// changes): each member's key and its value's bytes, and readers for
/// strings, whole numbers and booleans. Anything it cannot read is nil, and
/// the caller falls back to `JSONDecoder` or refuses the input.
public struct JSONFields {
    public let bytes: UnsafeRawBufferPointer
    /// The members in order: the key and its value's byte range in `bytes`.
    public private(set) var members: [(key: String, range: Range<Int>)] = []

    /// Reads the members of the object `bytes` holds (whitespace around
    /// it allowed); nil when it is not one well-formed object.
    public init?(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        var index = skipSpace(0)
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
        index = skipSpace(index + 1)
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            guard skipSpace(index + 1) == bytes.count else { return nil }
            return
        }
        while true {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let keyEnd = stringEnd(index),
                  let key = Self.decodeString(bytes, index..<keyEnd) else { return nil }
            index = skipSpace(keyEnd)
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
            let start = skipSpace(index + 1)
            guard let end = valueEnd(start) else { return nil }
            members.append((key, start..<end))
            index = skipSpace(end)
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: ",") {
                index = skipSpace(index + 1)
                continue
            }
            guard bytes[index] == UInt8(ascii: "}"), skipSpace(index + 1) == bytes.count else { return nil }
            return
        }
    }

    // MARK: Values

    public func string(_ range: Range<Int>) -> String? { Self.decodeString(bytes, range) }

    /// A whole number 0...UInt64.max written without sign, fraction or exponent.
    public func unsigned(_ range: Range<Int>) -> UInt64? {
        guard !range.isEmpty, range.count <= 20 else { return nil }
        if range.count > 1, bytes[range.lowerBound] == UInt8(ascii: "0") { return nil }
        var value: UInt64 = 0
        for index in range {
            let byte = bytes[index]
            guard byte >= 48, byte <= 57 else { return nil }
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(UInt64(byte - 48))
            guard !overflow, !carry else { return nil }
            value = sum
        }
        return value
    }

    /// A whole number in Int's range, possibly negative.
    public func integer(_ range: Range<Int>) -> Int? {
        guard !range.isEmpty else { return nil }
        if bytes[range.lowerBound] == UInt8(ascii: "-") {
            guard let magnitude = unsigned(range.lowerBound + 1..<range.upperBound), magnitude <= UInt64(Int.max) + 1 else { return nil }
            return magnitude == UInt64(Int.max) + 1 ? Int.min : -Int(magnitude)
        }
        guard let value = unsigned(range), value <= UInt64(Int.max) else { return nil }
        return Int(value)
    }

    public func bool(_ range: Range<Int>) -> Bool? {
        if matches(range, "true") { return true }
        if matches(range, "false") { return false }
        return nil
    }

    public func isNull(_ range: Range<Int>) -> Bool { matches(range, "null") }

    /// An array of strings.
    public func strings(_ range: Range<Int>) -> [String]? {
        guard range.count >= 2, bytes[range.lowerBound] == UInt8(ascii: "["), bytes[range.upperBound - 1] == UInt8(ascii: "]") else {
            return nil
        }
        var out: [String] = []
        var index = skipSpace(range.lowerBound + 1)
        if index == range.upperBound - 1 { return out }
        while index < range.upperBound {
            guard bytes[index] == UInt8(ascii: "\""), let end = stringEnd(index), let text = Self.decodeString(bytes, index..<end) else {
                return nil
            }
            out.append(text)
            index = skipSpace(end)
            guard index < range.upperBound else { return nil }
            if bytes[index] == UInt8(ascii: "]") { return index == range.upperBound - 1 ? out : nil }
            guard bytes[index] == UInt8(ascii: ",") else { return nil }
            index = skipSpace(index + 1)
        }
        return nil
    }

    /// The value's bytes (for a nested decoder).
    public func slice(_ range: Range<Int>) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[range]) }

    private func matches(_ range: Range<Int>, _ word: StaticString) -> Bool {
        guard range.count == word.utf8CodeUnitCount else { return false }
        let text = UnsafeRawBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for offset in 0..<range.count where bytes[range.lowerBound + offset] != text[offset] { return false }
        return true
    }

    // MARK: Scanning

    private func skipSpace(_ start: Int) -> Int {
        var index = start
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
            index += 1
        }
        return index
    }

    /// The index just past the string starting at `start` (its quote).
    private func stringEnd(_ start: Int) -> Int? {
        var index = start + 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""): return index + 1
            case UInt8(ascii: "\\"): index += 2
            case 0..<0x20: return nil
            default: index += 1
            }
        }
        return nil
    }

    /// The index just past the value starting at `start`.
    private func valueEnd(_ start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            return stringEnd(start)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var index = start
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    guard let end = stringEnd(index) else { return nil }
                    index = end
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return index + 1 }
                default:
                    break
                }
                index += 1
            }
            return nil
        default:
            var index = start
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") || byte == 0x20
                    || byte == 0x0A || byte == 0x0D || byte == 0x09 { break }
                index += 1
            }
            return index > start ? index : nil
        }
    }

    /// `bytes` as text, nil when they are not UTF-8. ASCII, valid UTF-8 as
    /// it is, skips the validating initialiser (generic, and in profiles
    /// of the hub's hottest path).
    static func utf8String(_ bytes: UnsafeRawBufferPointer) -> String? {
        for byte in bytes where byte >= 0x80 { return String(validating: bytes, as: UTF8.self) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The text of the JSON string in `range` (quotes included), escapes
    /// resolved; nil when it is not a valid string.
    static func decodeString(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String? {
        guard range.count >= 2, bytes[range.lowerBound] == UInt8(ascii: "\""), bytes[range.upperBound - 1] == UInt8(ascii: "\"") else {
            return nil
        }
        let inner = range.lowerBound + 1..<range.upperBound - 1
        var plain = true
        for index in inner where bytes[index] == UInt8(ascii: "\\") || bytes[index] < 0x20 {
            plain = false
            break
        }
        if plain { return utf8String(UnsafeRawBufferPointer(rebasing: bytes[inner])) }
        var out: [UInt8] = []
        out.reserveCapacity(inner.count)
        var index = inner.lowerBound
        func hex4(_ at: Int) -> UInt32? {
            guard at + 4 <= inner.upperBound else { return nil }
            var value: UInt32 = 0
            for offset in 0..<4 {
                let byte = bytes[at + offset]
                let digit: UInt32
                switch byte {
                case 48...57: digit = UInt32(byte - 48)
                case 65...70: digit = UInt32(byte - 55)
                case 97...102: digit = UInt32(byte - 87)
                default: return nil
                }
                value = value << 4 | digit
            }
            return value
        }
        while index < inner.upperBound {
            let byte = bytes[index]
            guard byte >= 0x20 else { return nil }
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                index += 1
                continue
            }
            guard index + 1 < inner.upperBound else { return nil }
            switch bytes[index + 1] {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hex4(index + 2) else { return nil }
                index += 6
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 1 < inner.upperBound, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u"),
                          let low = hex4(index + 2), (0xDC00...0xDFFF).contains(low) else { return nil }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
                guard let unicode = Unicode.Scalar(scalar) else { return nil }
                out.append(contentsOf: Array(String(Character(unicode)).utf8))
                continue
            default:
                return nil
            }
            index += 2
        }
        return String(validating: out, as: UTF8.self)
    }
}
