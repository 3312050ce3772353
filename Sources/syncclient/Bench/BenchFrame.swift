import Foundation

/// The few fields the bench reads from a hub frame, scanned in place without
/// allocating: the bench must not be the bottleneck (JSONDecoder would be).
struct BenchFrame {
    enum Kind { case state, ack, rejected, error, other }
    var kind: Kind
    var version: UInt64 = 0
    var ref: Int?
    /// A letter board's `order`, five bits a letter (A = 1), first letter
    /// lowest: compared for convergence without allocating per frame.
    var order: UInt64 = 0

    /// `readsOrder`: a letter board's `order` (Set frames have none). One
    /// pass over the frame finds every key it needs (`type`, `version`,
    /// `ref`, `order`): the tool reads tens of thousands of frames a second
    /// on one thread, so the k-th client of a fan-out waits for the frames
    /// read before it.
    init?(_ bytes: UnsafeRawBufferPointer, readsOrder: Bool = true) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        var typeAt: Int?, versionAt: Int?, refAt: Int?, orderAt: Int?
        let count = bytes.count
        var index = 0
        while index + 5 < count {
            // A key is `"name":`; the names looked for are 3 to 7 letters.
            // memchr jumps from quote to quote (a frame's bytes are mostly between them).
            guard let quote = memchr(base + index, Int32(UInt8(ascii: "\"")), count - 5 - index) else { break }
            index = base.distance(to: quote.assumingMemoryBound(to: UInt8.self))
            let first = base[index + 1]
            func matches(_ key: StaticString) -> Int? {
                let length = key.utf8CodeUnitCount
                guard index + length + 3 <= count, base[index + length + 1] == UInt8(ascii: "\""),
                      base[index + length + 2] == UInt8(ascii: ":") else { return nil }
                return memcmp(base + index + 2, key.utf8Start + 1, length - 1) == 0 ? index + length + 3 : nil
            }
            switch first {
            case UInt8(ascii: "t") where typeAt == nil: typeAt = matches("type")
            case UInt8(ascii: "v") where versionAt == nil: versionAt = matches("version")
            case UInt8(ascii: "r") where refAt == nil: refAt = matches("ref")
            case UInt8(ascii: "o") where orderAt == nil && readsOrder: orderAt = matches("order")
            default: break
            }
            index += 1
        }
        guard let typeAt else { return nil }
        switch Self.byte(bytes, typeAt + 1) {
        case UInt8(ascii: "s"): kind = .state
        case UInt8(ascii: "a"): kind = .ack
        case UInt8(ascii: "r"): kind = .rejected
        case UInt8(ascii: "e"): kind = .error
        default: kind = .other
        }
        if let versionAt { version = Self.number(bytes, versionAt) }
        // A Set table's state frame is long and carries no ref: not read for one.
        if kind != .state || readsOrder, let refAt { ref = Int(exactly: Self.number(bytes, refAt + 1)) }
        if kind == .state, readsOrder, var at = orderAt {
            var shift: UInt64 = 0
            while at < bytes.count, bytes[at] != UInt8(ascii: "]"), shift < 60 {
                let c = bytes[at]
                if c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z") {
                    order |= UInt64(c - UInt8(ascii: "A") + 1) << shift
                    shift += 5
                }
                at += 1
            }
        }
    }

    private static func byte(_ bytes: UnsafeRawBufferPointer, _ index: Int) -> UInt8 {
        index < bytes.count ? bytes[index] : 0
    }

    /// The unsigned integer at `start` (0 when no digit is there); the Set
    /// table's reader (`SetView`) reads its numbers with it too.
    static func number(_ bytes: UnsafeRawBufferPointer, _ start: Int) -> UInt64 {
        var value: UInt64 = 0
        var index = start
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            value = value &* 10 &+ UInt64(bytes[index] - UInt8(ascii: "0"))
            index += 1
        }
        return value
    }
}
