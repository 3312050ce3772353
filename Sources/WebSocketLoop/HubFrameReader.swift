/// Reads the frames a hub sends to a client (RFC 6455 section 5) a block
/// of bytes at a time, for `WebSocketClient`'s bulk reader.
///
/// libwebsockets 4.1.6 parses a client's incoming bytes one call per byte
/// (about 67 instructions a byte, by callgrind), so a load tool reading
/// 50 copies of every change spent most of its time there, and more on
/// longer frames. This reader finds a frame's header and hands its payload
/// on where it lies: a whole frame inside one read costs one header's work
/// and no copy. A frame split across reads, or a fragmented message, is
/// gathered first (the read that completes a split frame is copied whole,
/// a memcpy).
///
/// Pure: no I/O. What it refuses (a masked frame, reserved bits, an unknown
/// opcode, a control frame that is long or fragmented, a continuation with
/// nothing to continue, a close code a peer may not send, a message above
/// `maxMessageBytes`) ends the reading with the close code and words to
/// send; nothing after it is read. It does not check that text is UTF-8
/// (lws's own client, as this loop sets it up, does not either): the load
/// tool's JSON reader refuses what is not.
public struct HubFrameReader {
    public enum Event {
        /// A whole message; the bytes are valid only during the call.
        case message(UnsafeRawBufferPointer, isText: Bool)
        /// A ping; the client answers with a pong carrying the same bytes.
        case ping(UnsafeRawBufferPointer)
        case pong
        /// The hub closes: its code (nil when it sent none) and words.
        case close(code: Int?, reason: String)
    }

    public struct Refusal: Error, Equatable {
        /// The close code to send: 1002 (protocol error) or 1009 (too big).
        public let code: Int
        public let reason: String
    }

    public let maxMessageBytes: Int
    /// The bytes of a frame that has not fully arrived.
    private var partial: [UInt8] = []
    /// A fragmented message's payload so far.
    private var fragments: [UInt8] = []
    /// Whether a fragmented message is open, and its type.
    private var openMessageIsText: Bool?
    /// Set by a close or a refusal: nothing more is read.
    public private(set) var ended = false

    public init(maxMessageBytes: Int) {
        self.maxMessageBytes = maxMessageBytes
    }

    /// Reads `input`, calling `deliver` for each event in order. Returns the
    /// refusal that ended the reading, if one did.
    public mutating func read(_ input: UnsafeRawBufferPointer, _ deliver: (Event) -> Void) -> Refusal? {
        guard !ended, !input.isEmpty else { return nil }
        if partial.isEmpty {
            let used: Int
            switch readFrames(input, deliver) {
            case let .success(count): used = count
            case let .failure(refusal): return refusal
            }
            if used < input.count { partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[used...])) }
            return nil
        }
        partial.append(contentsOf: input)
        var buffered = partial
        partial = []
        let outcome = buffered.withUnsafeBytes { readFrames($0, deliver) }
        switch outcome {
        case let .success(used):
            if used < buffered.count {
                buffered.removeFirst(used)
                partial = buffered
            }
            return nil
        case let .failure(refusal):
            return refusal
        }
    }

    /// Reads whole frames from the start of `bytes`; returns how many bytes they took.
    private mutating func readFrames(_ bytes: UnsafeRawBufferPointer, _ deliver: (Event) -> Void) -> Result<Int, Refusal> {
        var at = 0
        while !ended, bytes.count - at >= 2 {
            let first = bytes[at], second = bytes[at + 1]
            let isFinal = first & 0x80 != 0
            let opcode = first & 0x0F
            guard first & 0x70 == 0 else { return refuse(1002, "the hub set reserved bits of a frame (no extension was agreed)") }
            guard second & 0x80 == 0 else { return refuse(1002, "the hub sent a masked frame (a server's frames are never masked)") }
            var header = 2
            var length = Int(second & 0x7F)
            if length == 126 {
                guard bytes.count - at >= 4 else { break }
                length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
                header = 4
            } else if length == 127 {
                guard bytes.count - at >= 10 else { break }
                guard bytes[at + 2] & 0x80 == 0 else { return refuse(1002, "the hub sent a frame length with its top bit set") }
                var long: UInt64 = 0
                for index in 2..<10 { long = long << 8 | UInt64(bytes[at + index]) }
                guard long <= UInt64(maxMessageBytes) else { return tooBig() }
                length = Int(long)
                header = 10
            }
            let isControl = opcode & 0x08 != 0
            if isControl {
                guard length <= 125 else { return refuse(1002, "the hub sent a control frame of more than 125 bytes") }
                guard isFinal else { return refuse(1002, "the hub sent a fragmented control frame") }
            } else if (openMessageIsText == nil ? 0 : fragments.count) + length > maxMessageBytes {
                return tooBig()
            }
            guard bytes.count - at - header >= length else { break }
            let payload = UnsafeRawBufferPointer(rebasing: bytes[(at + header)..<(at + header + length)])
            at += header + length
            switch opcode {
            case 0x1, 0x2:
                guard openMessageIsText == nil else {
                    return refuse(1002, "the hub began a message before its last one ended")
                }
                if isFinal {
                    deliver(.message(payload, isText: opcode == 0x1))
                } else {
                    openMessageIsText = opcode == 0x1
                    fragments.append(contentsOf: payload)
                }
            case 0x0:
                guard let isText = openMessageIsText else {
                    return refuse(1002, "the hub sent a continuation frame with no message to continue")
                }
                fragments.append(contentsOf: payload)
                if isFinal {
                    fragments.withUnsafeBytes { deliver(.message($0, isText: isText)) }
                    fragments.removeAll(keepingCapacity: fragments.count <= 1 << 16)
                    openMessageIsText = nil
                }
            case 0x8:
                guard length != 1 else { return refuse(1002, "the hub sent a close frame of one byte") }
                let code = length >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : nil
                if let code, !Self.isSendable(closeCode: code) {
                    return refuse(1002, "the hub sent close code \(code), which no peer may send")
                }
                let reason = length > 2 ? String(decoding: UnsafeRawBufferPointer(rebasing: payload[2...]), as: UTF8.self) : ""
                ended = true
                deliver(.close(code: code, reason: reason))
            case 0x9:
                deliver(.ping(payload))
            case 0xA:
                deliver(.pong)
            default:
                return refuse(1002, "the hub sent a frame of unknown opcode \(opcode)")
            }
        }
        return .success(at)
    }

    /// The close codes a peer may put in a close frame (RFC 6455 section
    /// 7.4): 1000-1003, 1007-1011 (and 1012-1014, registered since), 3000-4999.
    static func isSendable(closeCode code: Int) -> Bool {
        (1000...1003).contains(code) || (1007...1014).contains(code) || (3000...4999).contains(code)
    }

    private mutating func tooBig() -> Result<Int, Refusal> {
        let limit = maxMessageBytes >= 1 << 20 ? "\(maxMessageBytes >> 20) MiB" : "\(maxMessageBytes) bytes"
        return refuse(1009, "the hub sent a message of more than \(limit), more than this client takes")
    }

    private mutating func refuse(_ code: Int, _ reason: String) -> Result<Int, Refusal> {
        ended = true
        partial = []
        fragments = []
        return .failure(Refusal(code: code, reason: reason))
    }
}
