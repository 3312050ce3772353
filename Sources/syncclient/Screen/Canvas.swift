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

    /// Puts one character; anything outside the grid is dropped.
    mutating func put(_ character: Character, x: Int, y: Int, style: Style) {
        guard x >= 0, x < width, y >= 0, y < height else { return }
        characters[y * width + x] = Self.safe(character)
        styles[y * width + x] = style
    }

    /// Writes `text` from column `x`, clipped at `limit` columns (or the edge).
    mutating func write(_ text: String, x: Int, y: Int, style: Style, limit: Int? = nil) {
        let end = limit.map { min(x + $0, width) } ?? width
        var column = x
        for character in text where column < end {
            put(character, x: column, y: y, style: style)
            column += 1
        }
    }

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
                line.append(characters[y * width + x])
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
        default: return "?"
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
