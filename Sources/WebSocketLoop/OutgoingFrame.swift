import CLibWebsockets

/// One encoded WebSocket message with the `LWS_PRE` headroom lws_write needs.
/// Server frames are not modified by lws_write, so one frame is shared by
/// every client of a board: a board change is encoded once, whatever the
/// number of clients.
public final class OutgoingFrame: @unchecked Sendable {
    // Sendable: immutable after init; the bytes are only read.
    static let headroom = Int(swlws_pre())

    let storage: UnsafeMutableRawPointer
    public let count: Int
    public let isText: Bool

    public init(bytes: UnsafeRawBufferPointer, isText: Bool = true) {
        count = bytes.count
        self.isText = isText
        storage = .allocate(byteCount: Self.headroom + max(count, 1), alignment: 16)
        if let base = bytes.baseAddress, count > 0 {
            (storage + Self.headroom).copyMemory(from: base, byteCount: count)
        }
    }

    public convenience init(text: String) {
        var text = text
        let bytes = text.withUTF8 { Array($0) }
        self.init(bytes, isText: true)
    }

    public convenience init(_ bytes: [UInt8], isText: Bool = true) {
        self.init(placing: bytes, isText: isText)
    }

    private convenience init(placing bytes: [UInt8], isText: Bool) {
        self.init(count: bytes.count, isText: isText)
        bytes.withUnsafeBytes { raw in
            if let base = raw.baseAddress, !raw.isEmpty {
                (storage + Self.headroom).copyMemory(from: base, byteCount: raw.count)
            }
        }
    }

    private init(count: Int, isText: Bool) {
        self.count = count
        self.isText = isText
        storage = .allocate(byteCount: Self.headroom + max(count, 1), alignment: 16)
    }

    deinit { storage.deallocate() }

    /// Pointer to the payload (after the headroom).
    var payload: UnsafeMutablePointer<UInt8> {
        (storage + Self.headroom).assumingMemoryBound(to: UInt8.self)
    }

    /// The payload as text (tests and logs).
    public var text: String {
        String(decoding: UnsafeRawBufferPointer(start: storage + Self.headroom, count: count), as: UTF8.self)
    }
}
