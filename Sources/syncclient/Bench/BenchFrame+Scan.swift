/// Scanning a frame's bytes in place for a key, shared by every kind's
/// bench reader (`SetView`, `StockView`, ...): the bench reads every state
/// frame of every client, so none of them decodes JSON.
extension BenchFrame {
    static func after(_ pattern: StaticString, in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        after(UnsafeBufferPointer(start: pattern.utf8Start, count: pattern.utf8CodeUnitCount), in: bytes, from: start)
    }

    static func after(_ pattern: [UInt8], in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        pattern.withUnsafeBufferPointer { after($0, in: bytes, from: start) }
    }

    /// Index just after the first occurrence of `pattern` at or after `start`.
    static func after(_ pattern: UnsafeBufferPointer<UInt8>, in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        let count = pattern.count
        guard count > 0 else { return start }
        var index = max(0, start)
        let first = pattern[0]
        while index + count <= bytes.count {
            if bytes[index] == first {
                var same = true
                for offset in 1..<count where bytes[index + offset] != pattern[offset] {
                    same = false
                    break
                }
                if same { return index + count }
            }
            index += 1
        }
        return nil
    }

    /// The `code` of a `rejected` frame (`"code":"taken"`), or "?".
    static func refusalCode(_ bytes: UnsafeRawBufferPointer) -> String {
        guard let at = after("\"code\":\"", in: bytes, from: 0) else { return "?" }
        var end = at
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), end - at < 32 { end += 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[at..<end]), as: UTF8.self)
    }
}
