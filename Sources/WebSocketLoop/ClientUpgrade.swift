import CLibWebsockets

/// The opening handshake of a bulk-read connection (RFC 6455 section 4.1):
/// the upgrade request a client writes on a plain socket, and what it makes
/// of the hub's answer. Pure but for the SHA-1 and base64 of libwebsockets.
public struct ClientUpgrade {
    /// `Sec-WebSocket-Key`: 16 random bytes in base64.
    public let key: String
    /// The `Sec-WebSocket-Accept` that answers `key`, worked out once here,
    /// so reading the answer calls no C.
    let expectedAccept: String

    public init(key: String) {
        self.key = key
        expectedAccept = Self.accept(for: key)
    }

    /// A fresh random key.
    public static func random() -> ClientUpgrade {
        var generator = SystemRandomNumberGenerator()
        let words = [generator.next(), generator.next()] as [UInt64]
        let bytes = words.flatMap { word in (0..<8).map { UInt8(truncatingIfNeeded: word >> ($0 * 8)) } }
        return ClientUpgrade(key: base64(bytes))
    }

    /// The request: the headers an upgrade needs and the token, no more (no
    /// `Origin`: that says "a browser page", which a hub checks against its
    /// origins, A12; no subprotocol and no extension is asked for).
    public func request(for url: WebSocketURL, authorization: String?) -> [UInt8] {
        let host = url.host.contains(":") && !url.host.hasPrefix("[") ? "[\(url.host)]" : url.host
        var text = "GET \(url.path) HTTP/1.1\r\nHost: \(host):\(url.port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        text += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        if let authorization { text += "Authorization: \(authorization)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// What the hub's answer says so far.
    public enum Answer: Equatable {
        /// The header has not fully arrived.
        case incomplete
        /// Upgraded; the header took this many bytes, frames follow.
        case upgraded(headerBytes: Int)
        /// Refused with this status; `challenge` is the `WWW-Authenticate` value ("" if none).
        case refused(status: Int, challenge: String)
        /// Not a WebSocket upgrade this client can accept; why, for a person.
        case invalid(String)
    }

    /// The longest answer header read before giving up.
    public static let maxHeaderBytes = 16384

    public func read(_ bytes: UnsafeRawBufferPointer) -> Answer {
        guard let end = headerEnd(bytes) else {
            return bytes.count > Self.maxHeaderBytes ? .invalid("the hub's answer to the upgrade has no end of header") : .incomplete
        }
        let lines = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<end]), as: UTF8.self)
            .split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusWords = lines.first?.split(separator: " ", maxSplits: 2) ?? []
        guard statusWords.count >= 2, statusWords[0].hasPrefix("HTTP/1."), let status = Int(statusWords[1]) else {
            return .invalid("the hub's answer to the upgrade is not HTTP: \(lines.first.map { String($0.prefix(80)) } ?? "")")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: " \t")
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
        guard status == 101 else { return .refused(status: status, challenge: headers["www-authenticate"] ?? "") }
        guard headers["upgrade"]?.lowercased() == "websocket" else {
            return .invalid("the hub's 101 answer does not upgrade to websocket")
        }
        guard let connection = headers["connection"],
              connection.lowercased().split(separator: ",").contains(where: { $0.trimmingCharacters(in: " \t") == "upgrade" }) else {
            return .invalid("the hub's 101 answer has no Connection: upgrade")
        }
        guard headers["sec-websocket-accept"] == expectedAccept else {
            return .invalid("the hub's Sec-WebSocket-Accept does not answer this client's key")
        }
        if let extensions = headers["sec-websocket-extensions"], !extensions.isEmpty {
            return .invalid("the hub agreed to extensions this client did not offer: \(extensions)")
        }
        if let subprotocol = headers["sec-websocket-protocol"], !subprotocol.isEmpty {
            return .invalid("the hub chose a subprotocol this client did not offer: \(subprotocol)")
        }
        return .upgraded(headerBytes: end + 4)
    }

    /// `Sec-WebSocket-Accept` for `key`: base64 of the SHA-1 of the key and the protocol's GUID.
    public static func accept(for key: String) -> String {
        let text = Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)
        var digest = [UInt8](repeating: 0, count: 20)
        _ = lws_SHA1(text, text.count, &digest)
        return base64(digest)
    }

    private static func base64(_ bytes: [UInt8]) -> String {
        var out = [CChar](repeating: 0, count: bytes.count * 4 / 3 + 8)
        let count = bytes.withUnsafeBytes { raw in
            lws_b64_encode_string(raw.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), &out, Int32(out.count))
        }
        return String(decoding: out.prefix(Int(max(count, 0))).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Where "\r\n\r\n" starts, if it has arrived.
    private func headerEnd(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }
}

private extension Substring {
    func trimmingCharacters(in set: String) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}
