/// JSON text written straight into bytes: the hub's hot frames (a state per
/// board change, an ack per intent) are made of many short pieces, and a
/// byte append costs a fraction of a `String` append (no UTF-8 bookkeeping,
/// no small-string forms). A whole state's bytes become its outgoing frame
/// as they are.
public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 128) {
        bytes.reserveCapacity(capacity)
    }

    /// Text that is JSON already (punctuation, keys with their quotes,
    /// encoded values).
    @inline(__always)
    public mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `json`, JSON already (an encoded leaf, a kind's members). Named
    /// apart from `raw(_:)`: a string literal would pick a `String`
    /// overload over the `StaticString` one.
    public mutating func raw(json: String) {
        var json = json
        json.withUTF8 { bytes.append(contentsOf: $0) }
    }

    public mutating func raw(_ byte: UInt8) {
        bytes.append(byte)
    }

    /// A whole number, in decimal.
    public mutating func number<T: BinaryInteger>(_ value: T) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            digits(UInt64(clamping: value.magnitude))
        } else {
            digits(UInt64(clamping: value))
        }
    }

    private mutating func digits(_ value: UInt64) {
        guard value >= 10 else {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        // At most 20 digits, written from the end of a small stack buffer.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var at = 20
            var rest = value
            while rest > 0 {
                at -= 1
                buffer[at] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[at..<20]))
        }
    }

    public mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    /// `text` as a JSON string literal, escaping what JSON requires: `"`,
    /// `\` and the control characters below U+0020 (`\n`, `\r`, `\t` by
    /// name, the others as `\u00XX`). Everything else, non-ASCII included,
    /// is written as its UTF-8.
    public mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            bytes.append(UInt8(ascii: "\""))
            var plainFrom = 0
            for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainFrom..<index]))
                plainFrom = index + 1
                escape(byte)
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainFrom...]))
            bytes.append(UInt8(ascii: "\""))
        }
    }

    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): raw("\\\"")
        case UInt8(ascii: "\\"): raw("\\\\")
        case UInt8(ascii: "\n"): raw("\\n")
        case UInt8(ascii: "\r"): raw("\\r")
        case UInt8(ascii: "\t"): raw("\\t")
        default:
            raw("\\u00")
            bytes.append(Self.hexDigit(byte >> 4))
            bytes.append(Self.hexDigit(byte & 0xF))
        }
    }

    /// The lowercase hex digit of `nibble` (0...15).
    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// The text written so far.
    public var text: String { String(decoding: bytes, as: UTF8.self) }
}
