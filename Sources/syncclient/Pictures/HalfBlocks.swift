/// Pictures in a terminal: each character cell shows two pixels, one above
/// the other, as "▀" with the upper pixel's colour in front and the lower
/// one's behind ("▄" when only the lower one is opaque). Pixels more than
/// half transparent leave the terminal's own background.
extension Canvas {
    /// Draws `picture` as large as fits in `rect` with its proportions,
    /// centred. Draws nothing without colour (`ColourMode.none`): callers
    /// write text there instead.
    mutating func draw(_ picture: Thumbnail, in rect: Rect, colour: ColourMode) {
        guard colour != .none, rect.width > 0, rect.height > 0 else { return }
        let size = picture.fittingSize(maxWidth: rect.width, maxHeight: rect.height * 2)
        let scaled = picture.resized(width: size.width, height: size.height)
        let left = rect.x + (rect.width - size.width) / 2
        let top = rect.y + (rect.height - (size.height + 1) / 2) / 2
        for row in 0..<(size.height + 1) / 2 {
            for column in 0..<size.width {
                let upper = XtermColour.index(of: scaled.pixel(column, row * 2))
                let lower = row * 2 + 1 < size.height ? XtermColour.index(of: scaled.pixel(column, row * 2 + 1)) : nil
                switch (upper, lower) {
                case let (upper?, lower):
                    put("▀", x: left + column, y: top + row, style: .halfBlock(foreground: upper, background: lower))
                case let (nil, lower?):
                    put("▄", x: left + column, y: top + row, style: .halfBlock(foreground: lower, background: nil))
                case (nil, nil):
                    put(" ", x: left + column, y: top + row, style: .plain)
                }
            }
        }
    }
}

/// xterm's 256 colours: a 6x6x6 cube from 16 and 24 greys from 232.
enum XtermColour {
    private static let levels = [0, 95, 135, 175, 215, 255]

    /// The nearest palette entry to an `0xRRGGBBAA` pixel; nil when it is
    /// more than half transparent.
    static func index(of pixel: UInt32) -> UInt8? {
        guard pixel & 0xFF >= 128 else { return nil }
        let red = Int(pixel >> 24), green = Int((pixel >> 16) & 0xFF), blue = Int((pixel >> 8) & 0xFF)
        func level(_ value: Int) -> Int { levels.indices.min { abs(levels[$0] - value) < abs(levels[$1] - value) }! }
        let (r, g, b) = (level(red), level(green), level(blue))
        let cube = 16 + 36 * r + 6 * g + b
        let grey = max(0, min(23, (((red + green + blue) / 3) - 8 + 5) / 10))
        let greyValue = 8 + 10 * grey
        func distance(_ c: (Int, Int, Int)) -> Int {
            (c.0 - red) * (c.0 - red) + (c.1 - green) * (c.1 - green) + (c.2 - blue) * (c.2 - blue)
        }
        let cubeDistance = distance((levels[r], levels[g], levels[b]))
        return UInt8(distance((greyValue, greyValue, greyValue)) < cubeDistance ? 232 + grey : cube)
    }

    /// The red, green and blue of a palette entry from 16 up.
    static func rgb(_ index: UInt8) -> (red: Int, green: Int, blue: Int) {
        if index >= 232 {
            let value = 8 + 10 * Int(index - 232)
            return (value, value, value)
        }
        let cube = max(0, Int(index) - 16)
        return (levels[cube / 36], levels[cube / 6 % 6], levels[cube % 6])
    }

    /// The nearest of the 8 basic ANSI colours (0 black ... 7 white), for
    /// terminals without the 256.
    static func basic(_ index: UInt8) -> Int {
        let colour = rgb(index)
        let brightest = max(colour.red, colour.green, colour.blue)
        guard brightest >= 48 else { return 0 }
        let threshold = brightest / 2
        return (colour.red > threshold ? 1 : 0) | (colour.green > threshold ? 2 : 0) | (colour.blue > threshold ? 4 : 0)
    }
}
