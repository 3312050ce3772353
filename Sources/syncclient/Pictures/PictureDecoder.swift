import CPixbuf
import Synchronization

/// Turns a shop image's bytes into a `Thumbnail`, through gdk-pixbuf (the
/// one place that calls it; the C side is `Sources/CPixbuf/shim.h`). PNG and
/// JPEG are gdk-pixbuf's own, SVG goes through librsvg and WebP through
/// webp-pixbuf-loader. Raster pictures announcing more than
/// `AnnouncedSize.maxPixels` are refused before decoding, and so are what
/// could hide a larger one: an SVG embedding or linking a picture, an
/// animated WebP (the loader decodes every frame at the canvas's size).
enum PictureDecoder {
    /// The types a shop stores (docs/rules/shop.md, P4).
    static let types: Set<String> = ["image/png", "image/jpeg", "image/webp", "image/svg+xml"]

    /// Pictures are decoded to fit this many pixels each way, then drawn at
    /// any smaller size (a terminal cell is one pixel wide, two high).
    static let maxSide = 96

    /// Decodes calls one at a time: gdk-pixbuf's loader modules are set up
    /// on first use, and a thumbnail is small work.
    private static let oneAtATime = Mutex(())

    static func decode(_ bytes: [UInt8], type: String, maxSide: Int = maxSide) -> PictureState {
        guard types.contains(type) else { return .failed("not a picture type a shop stores: \(type)") }
        guard !bytes.isEmpty else { return .failed("no bytes") }
        if type == "image/svg+xml", let reason = SVGCheck.refusal(bytes) { return .failed(reason) }
        if type == "image/webp", AnnouncedSize.isAnimatedWebP(bytes) { return .failed("animated pictures are not shown") }
        if type != "image/svg+xml" {
            guard let size = AnnouncedSize.of(bytes) else { return .failed("not a \(type) picture") }
            // Each side first: two 32-bit sides multiplied could overflow.
            guard size.width > 0, size.height > 0, size.width <= AnnouncedSize.maxPixels, size.height <= AnnouncedSize.maxPixels,
                  size.width * size.height <= AnnouncedSize.maxPixels else {
                return .failed("too large to show (\(size.width) x \(size.height))")
            }
        }
        return oneAtATime.withLock { _ in
            var message = [CChar](repeating: 0, count: 256)
            let pixbuf = bytes.withUnsafeBufferPointer { buffer in
                message.withUnsafeMutableBufferPointer { text in
                    shpix_decode(buffer.baseAddress, buffer.count, type, Int32(maxSide), text.baseAddress, text.count)
                }
            }
            guard let pixbuf else {
                let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                return .failed(reason.isEmpty ? "cannot decode the picture" : reason)
            }
            defer { g_object_unref(UnsafeMutableRawPointer(pixbuf)) }
            return thumbnail(of: pixbuf)
        }
    }

    /// Copies an 8-bit RGB or RGBA pixbuf into a thumbnail.
    private static func thumbnail(of pixbuf: OpaquePointer) -> PictureState {
        let width = Int(gdk_pixbuf_get_width(pixbuf)), height = Int(gdk_pixbuf_get_height(pixbuf))
        let channels = Int(gdk_pixbuf_get_n_channels(pixbuf)), stride = Int(gdk_pixbuf_get_rowstride(pixbuf))
        guard width > 0, height > 0, gdk_pixbuf_get_bits_per_sample(pixbuf) == 8, channels == 3 || channels == 4,
              let base = gdk_pixbuf_read_pixels(pixbuf) else {
            return .failed("an unusual pixel layout")
        }
        var pixels = [UInt32](repeating: 0, count: width * height)
        for y in 0..<height {
            let row = base + y * stride
            for x in 0..<width {
                let p = row + x * channels
                let alpha = channels == 4 ? UInt32(p[3]) : 0xFF
                pixels[y * width + x] = UInt32(p[0]) << 24 | UInt32(p[1]) << 16 | UInt32(p[2]) << 8 | alpha
            }
        }
        return .ready(Thumbnail(width: width, height: height, pixels: pixels))
    }
}

/// What an SVG may not hold to be drawn here: librsvg decodes an embedded
/// raster (`<image href="data:...">`) at its full size, whatever the file's
/// size, and could load what an address names. A reference inside the
/// document (`href="#a"`, `url(#g)`) is fine; our drawings and a shop's
/// pictures need nothing else. What the scan could not read is refused
/// too: anything but UTF-8 text that starts with `<` (a compressed SVG,
/// UTF-16, another declared encoding), character references and CSS
/// escapes (`&#100;ata:`, `u\72l(`); comments are taken out before the scan
/// (`ur<!---->l(`).
enum SVGCheck {
    static func refusal(_ bytes: [UInt8]) -> String? {
        guard let text = String(validating: bytes, as: UTF8.self), !bytes.contains(0) else {
            return "an SVG that is not UTF-8 text is not shown"
        }
        var body = Substring(text.lowercased())
        if body.hasPrefix("\u{FEFF}") { body = body.dropFirst() }
        body = body.drop { $0.isWhitespace }
        guard body.first == "<" else { return "an SVG that is not UTF-8 text is not shown" }
        if body.hasPrefix("<?xml"), let end = body.range(of: "?>") {
            let declaration = body[..<end.lowerBound]
            if declaration.contains("encoding"), !(declaration.contains("\"utf-8\"") || declaration.contains("'utf-8'")) {
                return "an SVG in another encoding than UTF-8 is not shown"
            }
        }
        // Comments out: a comment can split a word the scan looks for.
        var scanned = ""
        var rest = body
        while let open = rest.range(of: "<!--") {
            scanned += rest[..<open.lowerBound]
            guard let close = rest.range(of: "-->", range: open.upperBound..<rest.endIndex) else { rest = ""; break }
            rest = rest[close.upperBound...]
        }
        scanned += rest
        for (needle, what) in [("&#", "a character reference"), ("\\", "an escape"), ("<image", "an embedded picture"),
                               ("feimage", "an embedded picture"), ("data:", "embedded data"), ("<!entity", "an entity"),
                               ("@import", "an address")] where scanned.contains(needle) {
            return "an SVG with \(what) is not shown"
        }
        // Every href="..." and url(...) must point inside the document.
        let characters = Array(scanned.utf8)
        for (marker, opens) in [("href", true), ("url(", false)] {
            var from = scanned.startIndex
            while let found = scanned.range(of: marker, range: from..<scanned.endIndex) {
                from = found.upperBound
                var at = scanned.utf8.distance(from: scanned.startIndex, to: found.upperBound)
                func skip(_ set: Set<UInt8>) { while at < characters.count, set.contains(characters[at]) { at += 1 } }
                skip([0x20, 0x09, 0x0A, 0x0D])
                if opens {
                    guard at < characters.count, characters[at] == UInt8(ascii: "=") else { continue }
                    at += 1
                    skip([0x20, 0x09, 0x0A, 0x0D])
                }
                skip([UInt8(ascii: "\""), UInt8(ascii: "'"), 0x20, 0x09, 0x0A, 0x0D])
                if at < characters.count, characters[at] != UInt8(ascii: "#") { return "an SVG with an address is not shown" }
            }
        }
        return nil
    }
}
