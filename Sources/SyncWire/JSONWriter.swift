/// JSON text written straight into bytes: the hub's hot frames (a state per
/// board change, an ack per intent) are made of many short pieces, and a
/// byte append costs a fraction of a `String` append (no UTF-8 bookkeeping,
/// no small-string forms). A whole state's bytes are copied once more, into
/// its outgoing frame.
///
/// The bytes live in a buffer of its own, copied on write like an array's:
/// an append is a bounds check and a copy, where `Array.append(contentsOf:)`
/// of a few bytes cost about a hundred instructions (a state frame is a
/// dozen keys and short strings; BENCHMARKS.md, "Fewer instructions before
/// the first send").
public struct JSONWriter {
    // Plain fields, not a `ManagedBuffer`'s header: a class's stored
    // property pays a dynamic exclusivity check per access.
    private var start: UnsafeMutablePointer<UInt8>
    private var used = 0
    private var capacity: Int
    /// Frees `start` once no writer shares it.
    private var allocation: Allocation

    private final class Allocation {
        let start: UnsafeMutablePointer<UInt8>
        init(capacity: Int) { start = .allocate(capacity: capacity) }
        deinit { start.deallocate() }
    }

    public init(capacity: Int = 128) {
        self.capacity = max(capacity, 16)
        allocation = Allocation(capacity: self.capacity)
        start = allocation.start
    }

    /// The bytes written so far.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// The text written so far.
    public var text: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    /// How many bytes are written.
    public var count: Int { used }

    /// The bytes written so far, in place.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withExtendedLifetime(allocation) { try body(UnsafeRawBufferPointer(start: start, count: used)) }
    }

    /// Room for `extra` more bytes in an allocation of this writer's own:
    /// copied when shared (a copy of the writer was taken), doubled when full.
    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if _slowPath(used + extra > capacity || !isKnownUniquelyReferenced(&allocation)) {
            let larger = max(used + extra, capacity * 2)
            let moved = Allocation(capacity: larger)
            moved.start.initialize(from: start, count: used)
            allocation = moved
            start = moved.start
            capacity = larger
        }
    }

    /// Appends `count` bytes from `source` (room reserved).
    @inline(__always)
    private mutating func put(_ source: UnsafePointer<UInt8>, _ count: Int) {
        (start + used).initialize(from: source, count: count)
        used += count
    }

    @inline(__always)
    private mutating func put(_ byte: UInt8) {
        (start + used).initialize(to: byte)
        used += 1
    }

    /// Appends the bytes of `source`.
    @inline(__always)
    private mutating func append(_ source: UnsafeBufferPointer<UInt8>) {
        guard let base = source.baseAddress, !source.isEmpty else { return }
        reserve(source.count)
        put(base, source.count)
    }

    /// Text that is JSON already (punctuation, keys with their quotes,
    /// encoded values).
    @inline(__always)
    public mutating func raw(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `json`, JSON already (an encoded leaf, a kind's members). Named
    /// apart from `raw(_:)`: a string literal would pick a `String`
    /// overload over the `StaticString` one.
    public mutating func raw(json: String) {
        var json = json
        json.withUTF8 { append($0) }
    }

    public mutating func raw(_ byte: UInt8) {
        reserve(1)
        put(byte)
    }

    /// A whole number, in decimal.
    public mutating func number<T: BinaryInteger>(_ value: T) {
        if value < 0 {
            raw(UInt8(ascii: "-"))
            digits(UInt64(clamping: value.magnitude))
        } else {
            digits(UInt64(clamping: value))
        }
    }

    private mutating func digits(_ value: UInt64) {
        guard value >= 10 else {
            raw(UInt8(ascii: "0") + UInt8(value))
            return
        }
        // At most 20 digits, written from the end of a small stack buffer.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var at = 20
            var rest = value
            while rest > 0 {
                at -= 1
                digits[at] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
            append(UnsafeBufferPointer(rebasing: digits[at..<20]))
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
            guard let base = utf8.baseAddress else {
                raw("\"\"")
                return
            }
            var escapes = false
            for byte in utf8 where Self.needsEscape(byte) {
                escapes = true
                break
            }
            if !escapes {
                // Most text: both quotes and the bytes with one reserve.
                reserve(utf8.count + 2)
                put(UInt8(ascii: "\""))
                put(base, utf8.count)
                put(UInt8(ascii: "\""))
                return
            }
            raw(UInt8(ascii: "\""))
            var plainFrom = 0
            for index in 0..<utf8.count where Self.needsEscape(utf8[index]) {
                append(UnsafeBufferPointer(rebasing: utf8[plainFrom..<index]))
                plainFrom = index + 1
                escape(utf8[index])
            }
            append(UnsafeBufferPointer(rebasing: utf8[plainFrom...]))
            raw(UInt8(ascii: "\""))
        }
    }

    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
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
            raw(Self.hexDigit(byte >> 4))
            raw(Self.hexDigit(byte & 0xF))
        }
    }

    /// The lowercase hex digit of `nibble` (0...15).
    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
