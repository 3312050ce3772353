import CLibWebsockets

/// A buffer of complete server-to-client WebSocket frames (RFC 6455 headers,
/// unmasked, FIN set) written with one `lws_write(..., LWS_WRITE_HTTP)` (lws's LWS_WRITE_RAW: bytes as they are).
final class FrameBatch {
    let capacity: Int
    private let storage: UnsafeMutableRawPointer

    init(capacity: Int) {
        self.capacity = capacity
        storage = .allocate(byteCount: OutgoingFrame.headroom + capacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    var payload: UnsafeMutablePointer<UInt8> {
        (storage + OutgoingFrame.headroom).assumingMemoryBound(to: UInt8.self)
    }

    /// Writes `frame` with its header at `offset`; returns the bytes used, or
    /// nil when it does not fit.
    func append(_ frame: OutgoingFrame, at offset: Int) -> Int? {
        let header = frame.count < 126 ? 2 : frame.count < 65536 ? 4 : 10
        guard offset + header + frame.count <= capacity else { return nil }
        let out = payload + offset
        out[0] = frame.isText ? 0x81 : 0x82
        switch header {
        case 2:
            out[1] = UInt8(frame.count)
        case 4:
            out[1] = 126
            out[2] = UInt8(frame.count >> 8)
            out[3] = UInt8(frame.count & 0xFF)
        default:
            out[1] = 127
            for index in 0..<8 { out[2 + index] = UInt8((UInt64(frame.count) >> (56 - 8 * UInt64(index))) & 0xFF) }
        }
        (out + header).update(from: frame.payload, count: frame.count)
        return header + frame.count
    }
}
