/// A width x height grid of one-column characters, each with a `Style`,
/// that becomes exactly `height` lines of exactly `width` visible columns.
/// Drawing outside the grid is clipped, so callers may draw shapes that are
/// half scrolled away.
struct Canvas: Sendable {
    let width: Int
    let height: Int
    private var characters: [Character]
    private var styles: [Style]

    init(width: Int, height: Int) {
        self.width = max(width, 0)
        self.height = max(height, 0)
        characters = Array(repeating: " ", count: self.width * self.height)
        styles = Array(repeating: .plain, count: self.width * self.height)
    }

    /// Puts one character; anything outside the grid is dropped. A wide
    /// character (Hangul, CJK: two columns in a terminal) takes this cell and
    /// the next; with no room for both it is drawn as a space.
    mutating func put(_ character: Character, x: Int, y: Int, style: Style) {
        guard x >= 0, x < width, y >= 0, y < height else { return }
        let safe = Self.safe(character)
        // Over half of a wide character: the other half becomes a space, so every line keeps `width` columns.
        if characters[y * width + x] == Self.continuation, x > 0 { characters[y * width + x - 1] = " " }
        if Self.isWide(characters[y * width + x]), x + 1 < width { characters[y * width + x + 1] = " " }
        if Self.isWide(safe) {
            // Its right half lands on the left half of another wide character: that one's right half goes too.
            if x + 2 < width, Self.isWide(characters[y * width + x + 1]) { characters[y * width + x + 2] = " " }
            guard x + 1 < width else {
                characters[y * width + x] = " "
                styles[y * width + x] = style
                return
            }
            characters[y * width + x + 1] = Self.continuation
            styles[y * width + x + 1] = style
        }
        characters[y * width + x] = safe
        styles[y * width + x] = style
    }

    /// Writes `text` from column `x`, clipped at `limit` columns (or the
    /// edge); a wide character counts two columns and is left out when only
    /// one is left.
    mutating func write(_ text: String, x: Int, y: Int, style: Style, limit: Int? = nil) {
        let end = limit.map { min(x + $0, width) } ?? width
        var column = x
        for character in text where column < end {
            let columns = Self.columns(character)
            if column + columns > end { break }
            put(character, x: column, y: y, style: style)
            column += columns
        }
    }

    /// How many terminal columns `text` takes once made safe.
    static func columns(of text: String) -> Int { text.reduce(0) { $0 + columns($1) } }

    static func columns(_ character: Character) -> Int { isWide(safe(character)) ? 2 : 1 }

    /// The cell to the right of a wide character: nothing of its own is written there.
    static let continuation: Character = "\u{FFFF}"

    /// Paints a rectangle's background: spaces in `style`.
    mutating func fill(_ rect: Rect, style: Style) {
        for y in rect.y..<rect.maxY {
            for x in rect.x..<rect.maxX { put(" ", x: x, y: y, style: style) }
        }
    }

    /// Draws `rect`'s outline with the given line set.
    mutating func outline(_ rect: Rect, lines: BoxLines, style: Style) {
        guard rect.width >= 2, rect.height >= 2 else { return }
        let right = rect.maxX - 1, bottom = rect.maxY - 1
        for x in rect.x + 1..<right {
            put(lines.horizontal, x: x, y: rect.y, style: style)
            put(lines.horizontal, x: x, y: bottom, style: style)
        }
        for y in rect.y + 1..<bottom {
            put(lines.vertical, x: rect.x, y: y, style: style)
            put(lines.vertical, x: right, y: y, style: style)
        }
        put(lines.topLeft, x: rect.x, y: rect.y, style: style)
        put(lines.topRight, x: right, y: rect.y, style: style)
        put(lines.bottomLeft, x: rect.x, y: bottom, style: style)
        put(lines.bottomRight, x: right, y: bottom, style: style)
    }

    /// The character at a position (tests read frames back this way).
    func character(x: Int, y: Int) -> Character? {
        guard x >= 0, x < width, y >= 0, y < height else { return nil }
        return characters[y * width + x]
    }

    /// The finished lines, with SGR sequences only where the style changes
    /// and a reset at the end of every coloured line.
    func lines(colour: ColourMode) -> [String] {
        (0..<height).map { y in
            var line = ""
            var current: Style = .plain
            for x in 0..<width {
                let style = styles[y * width + x]
                if colour != .none, style != current,
                   Palette.parameters(for: style, in: colour) != Palette.parameters(for: current, in: colour) {
                    line += Palette.sequence(for: style, in: colour)
                }
                current = style
                if characters[y * width + x] != Self.continuation { line.append(characters[y * width + x]) }
            }
            if colour != .none, Palette.parameters(for: current, in: colour) != nil { line += Palette.reset }
            return line
        }
    }

    /// Keeps every cell one column wide and free of control characters:
    /// text from the hub (board names, messages) must not move the cursor
    /// or break the grid. Printable ASCII, Latin-1 and Latin Extended pass,
    /// and the box-drawing, block-element and geometric-shape blocks we draw with.
    static func safe(_ character: Character) -> Character {
        let scalars = character.unicodeScalars
        guard scalars.count == 1, let value = scalars.first?.value else { return "?" }
        switch value {
        case 0x20..<0x7F, 0xA0..<0x250, 0x2500..<0x2600: return character
        case _ where isWideScalar(value): return character
        default: return "?"
        }
    }

    /// Hangul syllables and jamo, CJK punctuation and ideographs, fullwidth
    /// forms: two columns in every terminal (a shop's Korean titles).
    static func isWide(_ character: Character) -> Bool {
        guard character.unicodeScalars.count == 1, let value = character.unicodeScalars.first?.value else { return false }
        return isWideScalar(value)
    }

    private static func isWideScalar(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x3000...0x303E, 0x3130...0x318F, 0x4E00...0x9FFF, 0xAC00...0xD7A3, 0xFF01...0xFF60, 0xFFE0...0xFFE6: true
        default: false
        }
    }
}

/// The six characters an outline is made of.
struct BoxLines: Sendable {
    let horizontal, vertical, topLeft, topRight, bottomLeft, bottomRight: Character

    /// Unselected tiles and cells.
    static let light = BoxLines(horizontal: "─", vertical: "│", topLeft: "┌", topRight: "┐", bottomLeft: "└", bottomRight: "┘")
    /// Selected tiles: visible without colour too.
    static let double = BoxLines(horizontal: "═", vertical: "║", topLeft: "╔", topRight: "╗", bottomLeft: "╚", bottomRight: "╝")
    /// The focused cell of the top grid.
    static let heavy = BoxLines(horizontal: "━", vertical: "┃", topLeft: "┏", topRight: "┓", bottomLeft: "┗", bottomRight: "┛")
    /// A lifted letter's old cell during a drag.
    static let dashed = BoxLines(horizontal: "╌", vertical: "╎", topLeft: "┌", topRight: "┐", bottomLeft: "└", bottomRight: "┘")
}
