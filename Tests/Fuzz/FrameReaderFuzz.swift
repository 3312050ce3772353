// The bulk reader's frame parser (`HubFrameReader`, Sources/WebSocketLoop)
// on any bytes as a hub's stream: read in one piece, cut in two where the
// a hash of the input says, and a byte at a time, the three readings must give the
// same events and the same refusal, and no message may pass the limit.
// Any crash or trap is a finding too.

enum FrameReaderFuzz {
    /// Small, so inputs of a few hundred bytes reach the 1009 refusal.
    static let limit = 300

    static func fuzz(_ bytes: UnsafeRawBufferPointer) {
        let whole = read(bytes, cuts: [])
        // Where to cut: from a hash of the whole input, so the cut does not
        // move with the first frame's opcode byte alone.
        let hash = bytes.reduce(UInt64(14_695_981_039_346_656_037)) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
        let cut = bytes.isEmpty ? 0 : Int(hash % UInt64(bytes.count + 1))
        let halves = read(bytes, cuts: [cut])
        let single = read(bytes, cuts: Array(0..<bytes.count))
        for (name, other) in [("cut at \(cut)", halves), ("a byte at a time", single)] where other != whole {
            DecoderFuzz.fail("frames", bytes, "one piece: \(whole)\n\(name): \(other)")
        }
    }

    private static func read(_ bytes: UnsafeRawBufferPointer, cuts: [Int]) -> [String] {
        var reader = HubFrameReader(maxMessageBytes: limit)
        var events: [String] = []
        var start = 0
        for end in cuts + [bytes.count] where end > start {
            let refusal = reader.read(UnsafeRawBufferPointer(rebasing: bytes[start..<end])) { event in
                switch event {
                case let .message(payload, isText):
                    if payload.count > limit { DecoderFuzz.fail("frames", bytes, "a message of \(payload.count) bytes passed the limit") }
                    events.append("\(isText ? "text" : "binary") \(Array(payload))")
                case let .ping(payload): events.append("ping \(Array(payload))")
                case .pong: events.append("pong")
                case let .close(code, reason): events.append("close \(code ?? -1) \(reason)")
                }
            }
            if let refusal { events.append("refused \(refusal.code) \(refusal.reason)") }
            start = end
        }
        return events
    }
}
