@testable import BoardCRDT
import Foundation
import Testing
@testable import WebSocketLoop

/// The bulk reader's parts (`HubFrameReader`, `ClientUpgrade`,
/// `MaskedFrame`) against frames built here by the RFC 6455 rules, written
/// out independently of the code under test.
@Suite struct HubFrameReaderTests {
    // MARK: A server's frames, by hand (RFC 6455 section 5.2)

    private static func frame(_ opcode: UInt8, _ payload: [UInt8], final: Bool = true, masked: Bool = false, rsv: UInt8 = 0) -> [UInt8] {
        var out: [UInt8] = [(final ? 0x80 : 0) | rsv | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        switch payload.count {
        case ..<126: out.append(maskBit | UInt8(payload.count))
        case ...0xFFFF: out += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default: out += [maskBit | 127] + (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        if masked { out += [1, 2, 3, 4] + payload.enumerated().map { $0.element ^ UInt8($0.offset % 4 + 1) } } else { out += payload }
        return out
    }

    private static func text(_ string: String, final: Bool = true) -> [UInt8] { frame(0x1, Array(string.utf8), final: final) }

    /// What a reader made of some bytes: one string a event, in order.
    private struct Reading {
        var events: [String] = []
        var refusal: HubFrameReader.Refusal?
    }

    private static func describe(_ event: HubFrameReader.Event) -> String {
        switch event {
        case let .message(bytes, isText): "\(isText ? "text" : "binary") \(bytes.count) \(checksum(bytes))"
        case let .ping(bytes): "ping \(Array(bytes))"
        case .pong: "pong"
        case let .close(code, reason): "close \(code.map(String.init) ?? "none") \(reason)"
        }
    }

    private static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        bytes.reduce(UInt64(14_695_981_039_346_656_037)) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
    }

    private static func checksum(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { checksum($0) } }

    /// Reads `bytes` cut into pieces at `cuts` (offsets, ascending).
    private static func read(_ bytes: [UInt8], cuts: [Int] = [], max: Int = 1 << 20) -> Reading {
        var reader = HubFrameReader(maxMessageBytes: max)
        var reading = Reading()
        var start = 0
        for end in cuts + [bytes.count] where end >= start {
            let refusal = bytes[start..<end].withUnsafeBytes { piece in
                reader.read(piece) { reading.events.append(describe($0)) }
            }
            if let refusal { reading.refusal = refusal }
            start = end
        }
        return reading
    }

    // MARK: Messages

    @Test func everyLengthEncodingGivesItsWholeMessageInOneReadOrCutAnywhere() {
        for count in [0, 1, 125, 126, 127, 65535, 65536, 70000] {
            let payload = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            let bytes = Self.frame(0x2, payload) + Self.text("after")
            let expected = ["binary \(count) \(Self.checksum(payload))", "text 5 \(Self.checksum(Array("after".utf8)))"]
            #expect(Self.read(bytes).events == expected, "length \(count) in one read")
            // Cut at every offset of the header and around the payload's ends.
            let header = count < 126 ? 2 : count <= 0xFFFF ? 4 : 10
            for cut in Array(1...header + 1) + [bytes.count - 12, bytes.count - 1] where cut > 0 && cut < bytes.count {
                #expect(Self.read(bytes, cuts: [cut]).events == expected, "length \(count) cut at \(cut)")
            }
        }
    }

    @Test func aStreamReadAByteAtATimeGivesWhatOneReadGives() {
        let bytes = Self.text("{\"type\":\"state\"}") + Self.frame(0x9, [1, 2]) + Self.text("part one, ", final: false)
            + Self.frame(0xA, []) + Self.frame(0x0, Array("part two".utf8)) + Self.frame(0x8, [0x03, 0xE8] + Array("bye".utf8))
        let whole = Self.read(bytes)
        #expect(whole.events == ["text 16 \(Self.checksum(Array("{\"type\":\"state\"}".utf8)))", "ping [1, 2]", "pong",
                                 "text 18 \(Self.checksum(Array("part one, part two".utf8)))", "close 1000 bye"])
        #expect(whole.refusal == nil)
        #expect(Self.read(bytes, cuts: Array(1..<bytes.count)).events == whole.events)
    }

    /// A seeded stream of messages, some fragmented with pings between the
    /// fragments, read in pieces of seeded random sizes: every message
    /// arrives whole and in order, whatever the cuts.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func randomStreamsCutAtRandomGiveEveryMessageInOrder(seed: UInt64) {
        var random = SetDeck.SplitMix64(seed: seed)
        var bytes: [UInt8] = []
        var expected: [String] = []
        for _ in 0..<60 {
            let count = [0, 3, 60, 125, 126, 200, 4000, 70000][Int(random.next() % 8)]
            let payload = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let isText = random.next() % 2 == 0
            let pieces = 1 + Int(random.next() % 3)
            var at = 0
            for index in 0..<pieces {
                let end = index == pieces - 1 ? count : at + Int(random.next() % UInt64(count - at + 1))
                bytes += Self.frame(index == 0 ? (isText ? 0x1 : 0x2) : 0x0, Array(payload[at..<end]), final: index == pieces - 1)
                at = end
                if index < pieces - 1, random.next() % 2 == 0 {
                    bytes += Self.frame(0x9, [UInt8(index)])
                    expected.append("ping [\(index)]")
                }
            }
            expected.append("\(isText ? "text" : "binary") \(count) \(Self.checksum(payload))")
        }
        var cuts: [Int] = []
        var cut = 0
        while true {
            cut += 1 + Int(random.next() % 3000)
            guard cut < bytes.count else { break }
            cuts.append(cut)
        }
        let reading = Self.read(bytes, cuts: cuts)
        #expect(reading.refusal == nil)
        #expect(reading.events == expected, "seed \(seed)")
    }

    // MARK: Refusals: the close code, the words, and nothing read after

    @Test func whatTheProtocolForbidsEndsTheReadingWith1002() {
        let after = Self.text("never read")
        let cases: [(String, [UInt8], String)] = [
            ("masked", Self.frame(0x1, [65], masked: true), "masked"),
            ("reserved bits", Self.frame(0x1, [65], rsv: 0x40), "reserved bits"),
            ("unknown opcode", Self.frame(0x3, []), "unknown opcode 3"),
            ("long control", Self.frame(0x9, [UInt8](repeating: 0, count: 126)), "more than 125"),
            ("fragmented control", Self.frame(0x9, [], final: false), "fragmented control"),
            ("lone continuation", Self.frame(0x0, [65]), "no message to continue"),
            ("message inside a message", Self.text("a", final: false) + Self.text("b"), "before its last one ended"),
            ("one-byte close", Self.frame(0x8, [3]), "close frame of one byte"),
            ("length's top bit", [0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 1], "top bit"),
            ("close code 1005", Self.frame(0x8, [0x03, 0xED]), "close code 1005"),
            ("close code 999", Self.frame(0x8, [0x03, 0xE7]), "close code 999"),
        ]
        for (name, bytes, words) in cases {
            for cuts in [[], Array(1..<bytes.count)] {
                let reading = Self.read(bytes + after, cuts: cuts)
                #expect(reading.refusal?.code == 1002, "\(name)")
                #expect(reading.refusal?.reason.contains(words) == true, "\(name): \(reading.refusal?.reason ?? "none")")
                #expect(!reading.events.contains { $0.hasPrefix("text 10") }, "\(name): read on after the refusal")
            }
        }
    }

    @Test func aMessageAboveTheLimitIsRefusedWith1009BeforeItsBytesArrive() {
        // The header alone says 2,000 bytes: refused with nothing more read.
        let header: [UInt8] = [0x81, 126, 0x07, 0xD0]
        let reading = Self.read(header, max: 1000)
        #expect(reading.refusal == HubFrameReader.Refusal(
            code: 1009, reason: "the hub sent a message of more than 1000 bytes, more than this client takes"))
        // Fragments that pass it together.
        let fragments = Self.frame(0x1, [UInt8](repeating: 65, count: 600),
                                   final: false) + Self.frame(0x0, [UInt8](repeating: 66, count: 600))
        #expect(Self.read(fragments, max: 1000).refusal?.code == 1009)
        // At the limit exactly: read.
        #expect(Self.read(Self.frame(0x1, [UInt8](repeating: 65, count: 1000)), max: 1000).events.count == 1)
        #expect(Self.read([0x82, 127, 0, 0, 0, 1, 0, 0, 0, 0], max: 64 << 20).refusal?.reason.contains("64 MiB") == true)
    }

    @Test func theCloseCodesAPeerMaySendAreRFC6455s() {
        let sendable = (0...5000).filter { HubFrameReader.isSendable(closeCode: $0) }
        #expect(sendable == Array(1000...1003) + Array(1007...1014) + Array(3000...4999))
    }

    @Test func nothingIsReadAfterTheHubsClose() {
        var reader = HubFrameReader(maxMessageBytes: 1000)
        var events: [String] = []
        let bytes = Self.frame(0x8, []) + Self.text("late")
        _ = bytes.withUnsafeBytes { reader.read($0) { events.append(Self.describe($0)) } }
        _ = Self.text("later").withUnsafeBytes { reader.read($0) { events.append(Self.describe($0)) } }
        #expect(events == ["close none "])
        #expect(reader.ended)
    }

    // MARK: The upgrade

    @Test func theAcceptIsRFC6455sExample() {
        #expect(ClientUpgrade.accept(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        let random = ClientUpgrade.random()
        #expect(random.key.count == 24 && random.key.hasSuffix("=="), "16 bytes in base64: \(random.key)")
        #expect(ClientUpgrade.random().key != random.key)
    }

    @Test func theRequestAsksForAnUpgradeWithTheTokenAndWithoutAnOrigin() {
        let upgrade = ClientUpgrade(key: "dGhlIHNhbXBsZSBub25jZQ==")
        let url = WebSocketURL(host: "127.0.0.1", port: 8080, path: "/boards/kitchen")
        let text = String(decoding: upgrade.request(for: url, authorization: "Bearer abc"), as: UTF8.self)
        #expect(text.hasPrefix("GET /boards/kitchen HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"))
        for header in ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                       "Sec-WebSocket-Version: 13", "Authorization: Bearer abc"] {
            #expect(text.contains("\r\n\(header)\r\n"), "\(header)")
        }
        #expect(text.hasSuffix("\r\n\r\n") && !text.lowercased().contains("origin:"))
        #expect(!String(decoding: upgrade.request(for: url, authorization: nil), as: UTF8.self).contains("Authorization"))
    }

    private static let upgradeKey = "dGhlIHNhbXBsZSBub25jZQ=="

    private static func answer(_ head: String) -> ClientUpgrade.Answer {
        Array(head.utf8).withUnsafeBytes { ClientUpgrade(key: upgradeKey).read($0) }
    }

    @Test func theHubsAnswerUpgradesRefusesOrIsInvalid() {
        let good = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Accept: " +
                   "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"
        #expect(Self.answer(good) == .upgraded(headerBytes: good.utf8.count))
        #expect(Self.answer(good + "\u{81}\u{1}A") == .upgraded(headerBytes: good.utf8.count),
                "frames after the header are not the header's")
        #expect(Self.answer(String(good.dropLast(2))) == .incomplete)
        #expect(Self.answer("HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer error_description=\"token expired\"\r\n\r\n")
            == .refused(status: 401, challenge: "Bearer error_description=\"token expired\""))
        #expect(Self.answer("HTTP/1.1 404 Not Found\r\n\r\n") == .refused(status: 404, challenge: ""))
        let invalid: [(String, String)] = [
            (good.replacingOccurrences(of: "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", with: "AAAAAAAAAAAAAAAAAAAAAAAAAAA="), "Sec-WebSocket-Accept"),
            (good.replacingOccurrences(of: "Upgrade: WebSocket\r\n", with: ""), "does not upgrade"),
            (good.replacingOccurrences(of: "keep-alive, Upgrade", with: "keep-alive"), "Connection: upgrade"),
            (good.replacingOccurrences(of: "\r\n\r\n", with: "\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n"), "extensions"),
            ("SSH-2.0-OpenSSH\r\n\r\n", "not HTTP"),
            (good.replacingOccurrences(of: "\r\n\r\n", with: "\r\nSec-WebSocket-Protocol: chat\r\n\r\n"), "subprotocol"),
        ]
        for (head, words) in invalid {
            guard case let .invalid(why) = Self.answer(head) else {
                Issue.record("accepted: \(head)")
                continue
            }
            #expect(why.contains(words), "\(why)")
        }
        let endless = "HTTP/1.1 101 OK\r\n" + String(repeating: "X-Filler: 0123456789\r\n", count: 1000)
        guard case .invalid = Self.answer(endless) else {
            Issue.record("an answer with no end of header is waited for forever")
            return
        }
    }

    // MARK: The client's own frames

    @Test func aClientFrameIsFinalMaskedAndUnmasksToItsPayload() {
        for count in [0, 5, 125, 126, 65535, 65536] {
            let payload = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 13) }
            let frame = MaskedFrame.encode(opcode: MaskedFrame.text, payload, mask: 0xA1B2_C3D4)
            #expect(frame[0] == 0x81 && frame[1] & 0x80 != 0, "final text, mask bit set")
            let header = count < 126 ? 2 : count <= 0xFFFF ? 4 : 10
            let length = count < 126 ? Int(frame[1] & 0x7F)
                : count <= 0xFFFF ? Int(frame[2]) << 8 | Int(frame[3]) : frame[2..<10].reduce(0) { $0 << 8 | Int($1) }
            #expect(length == count)
            let key = Array(frame[header..<header + 4])
            #expect(key == [0xA1, 0xB2, 0xC3, 0xD4])
            let unmasked = frame[(header + 4)...].enumerated().map { $0.element ^ key[$0.offset % 4] }
            #expect(unmasked == payload, "length \(count)")
        }
        #expect(MaskedFrame.closePayload(code: 1002, reason: "bad") == [0x03, 0xEA] + Array("bad".utf8))
        #expect(MaskedFrame.closePayload(code: 1000, reason: String(repeating: "x", count: 200)).count == 125)
    }
}
