import CLibWebsockets

/// One encoded WebSocket message with the `LWS_PRE` headroom lws_write needs.
/// Server frames are not modified by lws_write, so one frame is shared by
/// every client of a board: a board change is encoded once, whatever the
/// number of clients.
public final class OutgoingFrame: @unchecked Sendable {
    // Sendable: immutable after init (all `let`s); bytes only read, but a client frame's, masked by lws_write on its one loop thread.
    static let headroom = Int(swlws_pre())

    let storage: UnsafeMutableRawPointer
    public let count: Int
    public let isText: Bool

    public init(bytes: UnsafeRawBufferPointer, isText: Bool = true) {
        count = bytes.count
        self.isText = isText
        storage = .allocate(byteCount: Self.headroom + max(count, 1), alignment: 16)
        payload = (storage + Self.headroom).assumingMemoryBound(to: UInt8.self)
        if let base = bytes.baseAddress, count > 0 {
            (storage + Self.headroom).copyMemory(from: base, byteCount: count)
        }
    }

    public convenience init(text: String) {
        var text = text
        let count = text.utf8.count
        self.init(count: count, isText: true)
        text.withUTF8 { bytes in
            if let base = bytes.baseAddress, count > 0 {
                (storage + Self.headroom).copyMemory(from: base, byteCount: count)
            }
        }
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
        payload = (storage + Self.headroom).assumingMemoryBound(to: UInt8.self)
    }

    deinit { storage.deallocate() }

    /// Pointer to the payload (after the headroom); stored, so a write
    /// does not go through the lazily set `headroom` each time.
    let payload: UnsafeMutablePointer<UInt8>

    /// The payload as text (tests and logs).
    public var text: String {
        String(decoding: UnsafeRawBufferPointer(start: storage + Self.headroom, count: count), as: UTF8.self)
    }
}
