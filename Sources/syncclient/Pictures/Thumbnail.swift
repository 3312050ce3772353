/// A small picture for the terminal: RGBA pixels, row by row, each packed as
/// `0xRRGGBBAA`. Made by `PictureDecoder` from a shop's image; drawn in
/// half-block characters by `Canvas.draw(_:in:colour:)`.
struct Thumbnail: Equatable, Sendable {
    let width: Int
    let height: Int
    let pixels: [UInt32]

    init(width: Int, height: Int, pixels: [UInt32]) {
        precondition(width > 0 && height > 0 && pixels.count == width * height, "a thumbnail's pixels fill it")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    func pixel(_ x: Int, _ y: Int) -> UInt32 { pixels[y * width + x] }

    /// The largest size with this picture's proportions inside `maxWidth` x
    /// `maxHeight` (at least 1 x 1).
    func fittingSize(maxWidth: Int, maxHeight: Int) -> (width: Int, height: Int) {
        guard maxWidth > 0, maxHeight > 0 else { return (0, 0) }
        let scale = min(Double(maxWidth) / Double(width), Double(maxHeight) / Double(height))
        return (max(1, min(maxWidth, Int((Double(width) * scale).rounded()))),
                max(1, min(maxHeight, Int((Double(height) * scale).rounded()))))
    }

    /// This picture at `newWidth` x `newHeight`: each new pixel the mean of the
    /// old pixels it covers, colours weighted by their opacity (so a
    /// transparent edge does not darken), or the nearest old pixel when
    /// growing.
    func resized(width newWidth: Int, height newHeight: Int) -> Thumbnail {
        guard newWidth != width || newHeight != height else { return self }
        var out = [UInt32](repeating: 0, count: newWidth * newHeight)
        for ty in 0..<newHeight {
            let y0 = ty * height / newHeight, y1 = max(y0 + 1, (ty + 1) * height / newHeight)
            for tx in 0..<newWidth {
                let x0 = tx * width / newWidth, x1 = max(x0 + 1, (tx + 1) * width / newWidth)
                var red = 0, green = 0, blue = 0, alpha = 0
                for y in y0..<y1 {
                    for x in x0..<x1 {
                        let p = pixel(x, y), a = Int(p & 0xFF)
                        red += Int(p >> 24) * a
                        green += Int((p >> 16) & 0xFF) * a
                        blue += Int((p >> 8) & 0xFF) * a
                        alpha += a
                    }
                }
                let count = (x1 - x0) * (y1 - y0)
                guard alpha > 0 else { continue }
                let r = UInt32(red / alpha), g = UInt32(green / alpha), b = UInt32(blue / alpha), a = UInt32(alpha / count)
                out[ty * newWidth + tx] = r << 24 | g << 16 | b << 8 | a
            }
        }
        return Thumbnail(width: newWidth, height: newHeight, pixels: out)
    }
}

/// What became of a picture the screen asked for.
enum PictureState: Equatable, Sendable {
    case ready(Thumbnail)
    /// Why it cannot be shown (not found, not a picture, too large...).
    case failed(String)
}

/// The size a raster picture announces in its first bytes, read before any
/// decoding so that a small file claiming a huge picture (a "bomb") is never
/// decoded. SVG announces nothing here: it is rendered at the size asked.
enum AnnouncedSize {
    /// At most this many pixels are decoded (a 12-megapixel phone photo fits).
    static let maxPixels = 16_777_216

    /// Width and height from a PNG's IHDR, a JPEG's frame header or a WebP's
    /// VP8/VP8L/VP8X chunk; nil when the bytes announce no size.
    static func of(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return png(bytes) }
        if bytes.starts(with: [0xFF, 0xD8]) { return jpeg(bytes) }
        if bytes.count >= 16, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) { return webp(bytes) }
        return nil
    }

    /// A WebP whose VP8X header sets the animation flag.
    static func isAnimatedWebP(_ b: [UInt8]) -> Bool {
        b.count >= 21 && b.starts(with: Array("RIFF".utf8)) && Array(b[8..<16]) == Array("WEBPVP8X".utf8) && b[20] & 0x02 != 0
    }

    private static func bigEndian(_ b: [UInt8], _ at: Int, _ count: Int) -> Int {
        (at..<at + count).reduce(0) { $0 << 8 | Int(b[$1]) }
    }

    private static func littleEndian(_ b: [UInt8], _ at: Int, _ count: Int) -> Int {
        (at..<at + count).reversed().reduce(0) { $0 << 8 | Int(b[$1]) }
    }

    private static func png(_ b: [UInt8]) -> (width: Int, height: Int)? {
        guard b.count >= 24, Array(b[12..<16]) == Array("IHDR".utf8) else { return nil }
        return (bigEndian(b, 16, 4), bigEndian(b, 20, 4))
    }

    /// Walks the JPEG's segments to the first frame header (SOF0-SOF15 but
    /// DHT, JPG and DAC).
    private static func jpeg(_ b: [UInt8]) -> (width: Int, height: Int)? {
        var at = 2
        while at + 4 <= b.count {
            guard b[at] == 0xFF else { return nil }
            let marker = b[at + 1]
            if marker == 0xFF { at += 1; continue }
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { at += 2; continue }
            let length = bigEndian(b, at + 2, 2)
            if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC {
                guard at + 9 <= b.count else { return nil }
                return (bigEndian(b, at + 7, 2), bigEndian(b, at + 5, 2))
            }
            guard length >= 2 else { return nil }
            at += 2 + length
        }
        return nil
    }

    private static func webp(_ b: [UInt8]) -> (width: Int, height: Int)? {
        let chunk = String(decoding: b[12..<16], as: UTF8.self)
        switch chunk {
        case "VP8 " where b.count >= 30:
            return (littleEndian(b, 26, 2) & 0x3FFF, littleEndian(b, 28, 2) & 0x3FFF)
        case "VP8L" where b.count >= 25:
            let bits = littleEndian(b, 21, 4)
            return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
        case "VP8X" where b.count >= 30:
            return (littleEndian(b, 24, 3) + 1, littleEndian(b, 27, 3) + 1)
        default:
            return nil
        }
    }
}
