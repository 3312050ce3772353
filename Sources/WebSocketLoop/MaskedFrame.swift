/// A client's frame as it goes on the wire (RFC 6455 section 5.2): final,
/// masked with a fresh key (section 5.3). For the bulk reader's connections,
/// which write their frames themselves.
enum MaskedFrame {
    static let text: UInt8 = 0x1
    static let close: UInt8 = 0x8
    static let pong: UInt8 = 0xA

    /// The frame's bytes: header, mask key, masked payload.
    static func encode(opcode: UInt8, payload: UnsafeRawBufferPointer, mask: UInt32) -> [UInt8] {
        let count = payload.count
        var frame: [UInt8] = []
        frame.reserveCapacity(count + 14)
        frame.append(0x80 | opcode)
        if count < 126 {
            frame.append(0x80 | UInt8(count))
        } else if count <= 0xFFFF {
            frame.append(0x80 | 126)
            frame.append(UInt8(count >> 8))
            frame.append(UInt8(count & 0xFF))
        } else {
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8(truncatingIfNeeded: UInt64(count) >> UInt64(shift))) }
        }
        let key = [UInt8(mask >> 24), UInt8(truncatingIfNeeded: mask >> 16), UInt8(truncatingIfNeeded: mask >> 8),
                   UInt8(truncatingIfNeeded: mask)]
        frame.append(contentsOf: key)
        for (index, byte) in payload.enumerated() { frame.append(byte ^ key[index & 3]) }
        return frame
    }

    static func encode(opcode: UInt8, _ bytes: [UInt8], mask: UInt32) -> [UInt8] {
        bytes.withUnsafeBytes { encode(opcode: opcode, payload: $0, mask: mask) }
    }

    /// A close frame's payload: the code, then up to 123 bytes of reason.
    static func closePayload(code: Int, reason: String) -> [UInt8] {
        [UInt8(truncatingIfNeeded: code >> 8), UInt8(truncatingIfNeeded: code)] + Array(reason.utf8.prefix(123))
    }

    /// A fresh key (one `getrandom` a frame; the bulk reader's clients send
    /// a few hundred frames a second).
    static func randomMask() -> UInt32 {
        var generator = SystemRandomNumberGenerator()
        return UInt32(truncatingIfNeeded: generator.next())
    }
}
