import BoardCRDT
import Foundation
import SyncWire
import Testing
@testable import SyncHub
@testable import WebSocketLoop

/// The hub's pieces the shop added: refusal fields kept with idempotency
/// keys, image types read from the bytes, the image cache's bound, and the
/// lws descriptor table's size.
struct ShopHubTests {
    @Test(arguments: [
        KeyedAnswer.ack(version: 7, members: #""order":"o1-2","total":100"#),
        .rejected(code: "board_full", message: "at most 6 letters can be selected"),
        .rejected(code: "sold_out", message: "line 1 is sold out (and 1 more line)",
                  members: #""lines":[{"code":"sold_out","index":0},{"available":2,"code":"not_enough_stock","index":1}]"#),
        .rejected(code: "stale", message: "", members: #""current":{"price":5900}"#),
        .rejected(code: "bad_field", message: "title: 1 to 100 characters on one line 가나다", members: #""field":"title""#),
    ])
    func aKeyedAnswerReadsBackAsWritten(_ answer: KeyedAnswer) {
        #expect(KeyedAnswerText.decode(KeyedAnswerText.encode(answer)) == answer)
    }

    @Test func aRefusalWithoutFieldsKeepsTheFormEarlierHubsWrote() {
        #expect(KeyedAnswerText.encode(.rejected(code: "taken",
                                                 message: "1DFR was just taken by bo")) == "rejected taken 1DFR was just taken by bo")
        #expect(KeyedAnswerText.decode("refused x 99 short") == nil, "a length past the text is no answer")
        #expect(KeyedAnswerText.decode("refused x -1 y") == nil)
    }

    @Test(arguments: [
        ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0], "image/png"),
        ([0xFF, 0xD8, 0xFF, 0xE0], "image/jpeg"),
        (Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8), "image/webp"),
        (Array("<svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8), "image/svg+xml"),
        (Array("\u{FEFF}<?xml version=\"1.0\"?>\n<!-- drawn -->\n<svg/>".utf8), "image/svg+xml"),
        (Array("<html><svg/></html>".utf8), nil),
        ([0x47, 0x49, 0x46, 0x38], nil),
        ([], nil),
    ] as [([UInt8], String?)])
    func anImageTypeIsReadFromItsBytes(_ bytes: [UInt8], _ type: String?) {
        #expect(ShopImages.type(of: bytes) == type)
    }

    @Test func theImageCacheDropsTheLeastRecentlyServedPastItsBound() {
        var cache = ImageCache()
        let half = [UInt8](repeating: 1, count: ImageCache.maxBytes / 2)
        cache.keep(digest: "a", ("image/png", half))
        cache.keep(digest: "b", ("image/png", half))
        #expect(cache.image(digest: "a") != nil)     // a served last: b goes first
        cache.keep(digest: "c", ("image/png", half))
        #expect(cache.image(digest: "b") == nil)
        #expect(cache.image(digest: "a") != nil && cache.image(digest: "c") != nil)
    }

    /// lws scans its whole table per socket event when `fd_limit_per_thread`
    /// is below the process's open-file limit: a context for many sockets
    /// gets at least that limit, a small one keeps its size.
    @Test func aContextForManySocketsGetsATableAsLargeAsTheOpenFileLimit() {
        let limit = UInt32(clamping: sysconf(Int32(_SC_OPEN_MAX)))
        #expect(descriptorTableSize(forSockets: 64) == 64)
        #expect(descriptorTableSize(forSockets: 5_000) >= max(5_000, limit))
        #expect(descriptorTableSize(forSockets: 300_000) == max(300_000, limit))
    }
}
