import BoardCRDT
import Foundation
import Testing
@testable import syncclient

/// A shop's pictures in the terminal: decoding each type the shop stores
/// (through gdk-pixbuf), refusing bombs and garbage with a reason, the
/// half-block drawing and its colours, and which pictures a session fetches.
@Suite struct PictureTests {
    /// 4 x 2 RGBA: red, green, blue, white over black, grey, transparent, transparent.
    static let png = Array(Data(base64Encoded:
        "iVBORw0KGgoAAAANSUhEUgAAAAQAAAACCAYAAAB/qH1jAAAAHklEQVR4nC3GsQEAMAzDIPx5PleXMrFoYSmgu/vlAcFICXwqAVBIAAAAAElFTkSuQmCC")!)
    /// 16 x 8, all red (quality 95).
    static let jpeg = Array(Data(base64Encoded:
        "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAIBAQEBAQIBAQECAgICAgQDAgICAgUEBAMEBgUGBgYFBgYGBwkIBgcJBwYGCAsICQoKCgoKBggLDAsKDAkKCgr/2wBDAQIC" +
        "AgICAgUDAwUKBwYHCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgr/wAARCAAIABADASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEA" +
        "AAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6" +
        "Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx" +
        "8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAV" +
        "YnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPE" +
        "xcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwD4vooor+Uz/fw//9k=")!)
    /// 6 x 3, all blue, lossless.
    static let webpLossless = Array(Data(base64Encoded: "UklGRhwAAABXRUJQVlA4TA8AAAAvBYAAAAcQ0f/+ByKi/wEA")!)
    /// 300 x 150, green (0, 128, 0), lossy.
    static let webpLossy = Array(Data(base64Encoded:
        "UklGRqIAAABXRUJQVlA4IJYAAADwDQCdASosAZYAPm02mUmkIyKhICgAgA2JaW7hdrEe3AfgAAAT2Ae+2TkPfbJyHvtk5D32ych77ZOQ99snIe+2TkPfbJyHvtk5D32y" +
        "ch77ZOQ99snIe+2TkPfbJyHvtk5D32ych77ZOQ99snIe+2TkPfbJyHvtWAAA/v9w/P//+QXLC65Gv//zYFc1z81AAAAAAAAAAAA=")!)
    /// 400 x 200, blue: made here (`TestPNG`), 320 KB of stored (uncompressed) pixels.
    static let largePNG = TestPNG.make(width: 400, height: 200, pixel: [0, 0, 255])

    private func thumbnail(_ state: PictureState) -> Thumbnail? {
        if case let .ready(thumbnail) = state { thumbnail } else { nil }
    }

    private func channels(_ pixel: UInt32) -> [Int] {
        [Int(pixel >> 24), Int((pixel >> 16) & 0xFF), Int((pixel >> 8) & 0xFF), Int(pixel & 0xFF)]
    }

    @Test func aPNGIsDecodedPixelForPixelWithItsTransparency() throws {
        let picture = try #require(thumbnail(PictureDecoder.decode(Self.png, type: "image/png")))
        #expect(picture.width == 4 && picture.height == 2)
        #expect(picture.pixels == [0xFF0000FF, 0x00FF00FF, 0x0000FFFF, 0xFFFFFFFF,
                                   0x000000FF, 0x808080FF, 0x00000000, 0x00000000])
    }

    @Test func aJPEGAndBothWebPsAreDecodedToTheirColours() throws {
        let red = try #require(thumbnail(PictureDecoder.decode(Self.jpeg, type: "image/jpeg")))
        #expect(red.width == 16 && red.height == 8)
        #expect(red.pixels.allSatisfy { let c = channels($0); return c[0] > 240 && c[1] < 16 && c[2] < 16 && c[3] == 255 })
        let blue = try #require(thumbnail(PictureDecoder.decode(Self.webpLossless, type: "image/webp")))
        #expect(blue.width == 6 && blue.height == 3)
        #expect(Set(blue.pixels).count == 1 && blue.pixels[0] >> 8 == 0x0000FF)
        let green = try #require(thumbnail(PictureDecoder.decode(Self.webpLossy, type: "image/webp")))
        #expect(green.width == PictureDecoder.maxSide && green.height == PictureDecoder.maxSide / 2, "300 x 150 fits 96 x 48")
        #expect(green.pixels.allSatisfy { let c = channels($0); return c[0] < 16 && abs(c[1] - 128) < 16 && c[2] < 16 })
    }

    @Test func anSVGIsRenderedAtTheSizeThatFits() throws {
        let svg = Array((#"<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200">"#
                         + #"<rect width="200" height="200" fill="red"/></svg>"#).utf8)
        let picture = try #require(thumbnail(PictureDecoder.decode(svg, type: "image/svg+xml")))
        #expect(picture.width == 96 && picture.height == 48)
        #expect(picture.pixel(10, 10) == 0xFF0000FF, "the left half is the red square")
        #expect(picture.pixel(90, 10) & 0xFF == 0, "the right half is transparent")
    }

    @Test func aLargePictureIsScaledToFitMaxSideKeepingItsProportions() throws {
        let picture = try #require(thumbnail(PictureDecoder.decode(Self.largePNG, type: "image/png")))
        #expect(picture.width == 96 && picture.height == 48)
        #expect(picture.pixels.allSatisfy { $0 == 0x0000FFFF })
    }

    @Test func aBombIsRefusedFromItsHeaderBeforeDecoding() {
        // A PNG whose header claims 50,000 x 50,000 pixels (10 GB of RGBA) in 62 bytes.
        var bomb = Array(Self.png.prefix(33))
        bomb.replaceSubrange(16..<24, with: [0, 0, 0xC3, 0x50, 0, 0, 0xC3, 0x50])
        #expect(AnnouncedSize.of(bomb)! == (50_000, 50_000))
        #expect(PictureDecoder.decode(bomb, type: "image/png") == .failed("too large to show (50000 x 50000)"))
        // The largest sides a PNG can announce: refused, not an overflow.
        bomb.replaceSubrange(16..<24, with: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(PictureDecoder.decode(bomb, type: "image/png") == .failed("too large to show (4294967295 x 4294967295)"))
        // A JPEG whose frame header claims 60,000 x 60,000.
        var jpegBomb = Self.jpeg
        let frame = try! #require((0..<jpegBomb.count - 1).first { jpegBomb[$0] == 0xFF && jpegBomb[$0 + 1] == 0xC0 })
        jpegBomb.replaceSubrange(frame + 5..<frame + 9, with: [0xEA, 0x60, 0xEA, 0x60])
        #expect(PictureDecoder.decode(jpegBomb, type: "image/jpeg") == .failed("too large to show (60000 x 60000)"))
    }

    @Test func whatCouldHideALargerPictureIsRefused() {
        // An SVG that embeds a raster (librsvg would decode it at full size) or names an address.
        let embedded = Array((#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">"#
                              + #"<image href="data:image/png;base64,AAAA" width="10" height="10"/></svg>"#).utf8)
        #expect(PictureDecoder.decode(embedded, type: "image/svg+xml") == .failed("an SVG with an embedded picture is not shown"))
        let linked = Array(#"<svg width="10" height="10"><use href="https://example.org/x.svg#a"/></svg>"#.utf8)
        #expect(PictureDecoder.decode(linked, type: "image/svg+xml") == .failed("an SVG with an address is not shown"))
        // An animated WebP: VP8X with the animation flag; the loader would decode every frame at the canvas's size.
        var animated = Array("RIFF".utf8) + [30, 0, 0, 0] + Array("WEBPVP8X".utf8) + [10, 0, 0, 0]
        animated += [0x02, 0, 0, 0] + [0xFF, 0x07, 0, 0xFF, 0x07, 0] + Array("ANIM".utf8) + [0, 0, 0, 0]
        // What the scan could not read, or what hides a word from it.
        let hidden: [(String, String)] = [
            (#"<svg><style>rect { fill: ur<!---->l(d<!---->ata:image/svg+xml;base64,AA) }</style></svg>"#,
             "an SVG with embedded data is not shown"),
            (#"<svg><rect fill="&#117;rl(&#100;ata:x)"/></svg>"#, "an SVG with a character reference is not shown"),
            (#"<svg><style>rect { fill: u\72l(x.svg) }</style></svg>"#, "an SVG with an escape is not shown"),
            (#"<?xml version="1.0" encoding="UTF-7"?><svg>+ADw-image/+AD4-</svg>"#, "an SVG in another encoding than UTF-8 is not shown"),
            ("<svg><use xlink:href =\n \"other.svg#a\"/></svg>", "an SVG with an address is not shown"),
        ]
        for (svg, reason) in hidden { #expect(SVGCheck.refusal(Array(svg.utf8)) == reason, "\(svg)") }
        #expect(SVGCheck.refusal([0xFF, 0xFE] + Array("<svg/>".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
                == "an SVG that is not UTF-8 text is not shown", "UTF-16")
        #expect(SVGCheck.refusal([0x1F, 0x8B, 8, 0]) == "an SVG that is not UTF-8 text is not shown", "gzip")
        let plate = ##"<?xml version="1.0" encoding="UTF-8"?><!-- a plate --><svg><use href="#a"/><rect fill="url(#g)"/></svg>"##
        #expect(SVGCheck.refusal(Array(plate.utf8)) == nil)
        #expect(AnnouncedSize.isAnimatedWebP(animated))
        #expect(!AnnouncedSize.isAnimatedWebP(Self.webpLossless))
        #expect(PictureDecoder.decode(animated, type: "image/webp") == .failed("animated pictures are not shown"))
    }

    @Test func theAnnouncedSizeIsReadFromEachRasterType() {
        #expect(AnnouncedSize.of(Self.png)! == (4, 2))
        #expect(AnnouncedSize.of(Self.jpeg)! == (16, 8))
        #expect(AnnouncedSize.of(Self.webpLossless)! == (6, 3))
        #expect(AnnouncedSize.of(Self.webpLossy)! == (300, 150))
        #expect(AnnouncedSize.of(Array("GIF89a".utf8)) == nil)
        #expect(AnnouncedSize.of([0xFF, 0xD8, 0xFF]) == nil, "a JPEG cut before its frame header")
    }

    @Test func garbageAndUnknownTypesAreRefusedWithAReason() {
        #expect(PictureDecoder.decode(Array("hello".utf8), type: "image/png") == .failed("not a image/png picture"))
        #expect(PictureDecoder.decode(Self.png, type: "text/html") == .failed("not a picture type a shop stores: text/html"))
        #expect(PictureDecoder.decode([], type: "image/svg+xml") == .failed("no bytes"))
        // A PNG whose pixels fail their checksum, and an SVG that is not XML: gdk-pixbuf's reason.
        var corrupt = Self.largePNG
        corrupt[60] ^= 0xFF
        guard case let .failed(reason) = PictureDecoder.decode(corrupt, type: "image/png") else {
            Issue.record("a corrupt PNG decoded")
            return
        }
        #expect(reason.contains("CRC"), "\(reason)")
        guard case .failed = PictureDecoder.decode(Array("<svg <<<".utf8), type: "image/svg+xml") else {
            Issue.record("a broken SVG decoded")
            return
        }
    }

    @Test func xtermColoursAreTheNearestCubeOrGrey() {
        #expect(XtermColour.index(of: 0xFF0000FF) == 196)
        #expect(XtermColour.index(of: 0xFFFFFFFF) == 231)
        #expect(XtermColour.index(of: 0x000000FF) == 16)
        #expect(XtermColour.index(of: 0x808080FF) == 244, "mid grey is on the grey ramp")
        #expect(XtermColour.index(of: 0xFF000070) == nil, "more than half transparent")
        #expect(XtermColour.basic(196) == 1 && XtermColour.basic(46) == 2 && XtermColour.basic(21) == 4)
        #expect(XtermColour.basic(231) == 7 && XtermColour.basic(16) == 0)
    }

    @Test func twoPixelsShareACellUpperInFrontLowerBehind() {
        // 2 x 4: red over green, blue over transparent; transparent over white, transparent over transparent.
        let picture = Thumbnail(width: 2, height: 4, pixels: [0xFF0000FF, 0x0000FFFF,
                                                              0x00FF00FF, 0x00000000,
                                                              0x00000000, 0x00000000,
                                                              0xFFFFFFFF, 0x00000000])
        var canvas = Canvas(width: 2, height: 2)
        canvas.draw(picture, in: Rect(x: 0, y: 0, width: 2, height: 2), colour: .ansi256)
        let lines = canvas.lines(colour: .ansi256)
        #expect(lines[0].contains("\u{1B}[0;38;5;196;48;5;46m▀"), "red in front of green")
        #expect(lines[0].contains("\u{1B}[0;38;5;21m▀"), "blue over the terminal's background")
        #expect(lines[1].contains("\u{1B}[0;38;5;231m▄"), "white under transparency")
        var plain = Canvas(width: 2, height: 2)
        plain.draw(picture, in: Rect(x: 0, y: 0, width: 2, height: 2), colour: .none)
        #expect(plain.lines(colour: .none) == ["  ", "  "], "no colour, no picture")
    }

    @Test func aPictureIsScaledIntoItsAreaCentredWithItsProportions() {
        let square = Thumbnail(width: 8, height: 8, pixels: Array(repeating: 0xFF0000FF, count: 64))
        var canvas = Canvas(width: 10, height: 2)
        canvas.draw(square, in: Rect(x: 0, y: 0, width: 10, height: 2), colour: .ansi256)
        // 2 rows hold 4 pixels: a 4 x 4 square, centred in 10 columns.
        let text = canvas.lines(colour: .none)
        #expect(text == ["   ▀▀▀▀   ", "   ▀▀▀▀   "])
        // Halving averages: a 2 x 2 checker of black and white becomes one grey pixel.
        let checker = Thumbnail(width: 2, height: 2, pixels: [0x000000FF, 0xFFFFFFFF, 0xFFFFFFFF, 0x000000FF])
        #expect(checker.resized(width: 1, height: 1).pixels == [0x7F7F7FFF])
    }

    @Test func eachWantedPictureIsFetchedOnceAndRetriedOnlyWhenUnreachable() {
        var requests = PictureRequests()
        let second: UInt64 = 1_000_000_000
        #expect(requests.toFetch(wanted: ["a.svg", "b.png"], now: 100 * second).fetch == ["a.svg", "b.png"])
        #expect(requests.toFetch(wanted: ["a.svg", "b.png"], now: 101 * second).fetch.isEmpty, "pending")
        requests.finished("a.svg", retry: false, now: 102 * second)
        requests.finished("b.png", retry: true, now: 102 * second)
        #expect(requests.toFetch(wanted: ["a.svg", "b.png"], now: 111 * second).fetch.isEmpty, "too soon to retry")
        #expect(requests.toFetch(wanted: ["a.svg", "b.png"], now: 112 * second).fetch == ["b.png"], "retried after 10 s")
        var full = PictureRequests()
        _ = full.toFetch(wanted: (0..<PictureRequests.limit).map { "p\($0).png" }, now: 0)
        let past = full.toFetch(wanted: ["one-more.png"], now: 0)
        #expect(past.fetch.isEmpty && past.refused == ["one-more.png"], "bounded, and told once")
        #expect(full.toFetch(wanted: ["one-more.png"], now: 0) == ([], []))
    }
}

/// A PNG made without a compressor: RGB pixels in zlib's stored blocks, with
/// the CRC-32 and Adler-32 the format asks for.
enum TestPNG {
    static func make(width: Int, height: Int, pixel: [UInt8]) -> [UInt8] {
        var raw: [UInt8] = []
        for _ in 0..<height { raw.append(0); for _ in 0..<width { raw += pixel } }
        var zlib: [UInt8] = [0x78, 0x01]
        var at = 0
        repeat {
            let count = min(65_535, raw.count - at)
            let last: UInt8 = at + count == raw.count ? 1 : 0
            zlib += [last, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            zlib += raw[at..<at + count]
            at += count
        } while at < raw.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in raw { a = (a + UInt32(byte)) % 65_521; b = (b + a) % 65_521 }
        zlib += bigEndian(b << 16 | a)
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + chunk("IHDR", bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [8, 2, 0, 0, 0])
            + chunk("IDAT", zlib) + chunk("IEND", [])
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8((value >> $0) & 0xFF) } }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in body {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return bigEndian(UInt32(data.count)) + body + bigEndian(~crc)
    }
}
