import BoardCRDT

/// How one Set card looks in character cells (SV1, SV2): 1-3 symbols
/// stacked in the middle of the card, each a band about four times as wide
/// as tall (a 2:1 symbol on 1:2 cells) that scales with the card. The shape
/// shows in the symbol's edges, the shading in its fill, the colour in the
/// style, and under NO_COLOR also as the letter R, G or P.
enum CardArt {
    /// Shading as fill: solid is full, striped half-tone, open empty.
    static func fill(_ shading: Card.Shading) -> Character {
        switch shading {
        case .solid: "█"
        case .striped: "▒"
        case .open: " "
        }
    }

    static func style(_ colour: Card.Colour) -> Style {
        switch colour {
        case .red: .setRed
        case .green: .setGreen
        case .purple: .setPurple
        }
    }

    static func letter(_ colour: Card.Colour) -> Character {
        switch colour {
        case .red: "R"
        case .green: "G"
        case .purple: "P"
        }
    }

    /// Symbol size for a card's inside: (symbol rows, symbol columns, blank rows between).
    static func symbolSize(innerWidth: Int, innerHeight: Int) -> (height: Int, width: Int, gap: Int) {
        let gap = innerHeight >= 5 ? 1 : 0
        let height = max(1, (innerHeight - 2 * gap) / 3)
        let width = max(3, min(4 * height, innerWidth - 2))
        return (height, width, gap)
    }

    /// Draws `card`'s symbols inside `rect` (the card's outline excluded).
    static func drawSymbols(_ card: Card, in rect: Rect, colour: ColourMode, on canvas: inout Canvas) {
        let innerX = rect.x + 1, innerY = rect.y + 1
        let innerWidth = rect.width - 2, innerHeight = rect.height - 2
        guard innerWidth >= 3, innerHeight >= 1 else { return }
        let size = symbolSize(innerWidth: innerWidth, innerHeight: innerHeight)
        let count = card.number.count
        let total = count * size.height + (count - 1) * size.gap
        let top = innerY + max(0, (innerHeight - total) / 2)
        let left = innerX + (innerWidth - size.width) / 2
        let style = style(card.colour)
        for symbol in 0..<count {
            let y = top + symbol * (size.height + size.gap)
            for row in 0..<size.height {
                let line = symbolRow(card.shape, shading: card.shading, row: row, height: size.height, width: size.width)
                canvas.write(line.text, x: left + line.offset, y: y + row, style: style)
            }
        }
        if colour == .none {
            // SV2 without colour: the colour as a letter in the top-left corner.
            canvas.put(letter(card.colour), x: innerX, y: innerY, style: .plain)
        }
    }

    /// One row of a symbol `width` columns wide: its text and its indent.
    static func symbolRow(_ shape: Card.Shape, shading: Card.Shading, row: Int, height: Int, width: Int) -> (text: String, offset: Int) {
        let fill = fill(shading)
        func band(_ left: Character, _ right: Character, inset: Int) -> (String, Int) {
            let inner = max(0, width - 2 * inset - 2)
            return (String(left) + String(repeating: fill, count: inner) + String(right), inset)
        }
        switch shape {
        case .diamond:
            // Widest in the middle row, narrowing to the points.
            let twice = row * 2 - (height - 1)       // -(h-1) ... h-1
            let inset = abs(twice) * max(0, width / 2 - 1) / max(height, 1)
            if twice < 0 { return band("/", "\\", inset: inset) }
            if twice > 0 { return band("\\", "/", inset: inset) }
            return band("<", ">", inset: inset)
        case .oval:
            if height == 1 { return band("(", ")", inset: 0) }
            if row == 0 { return band("╭", "╮", inset: 0) }
            if row == height - 1 { return band("╰", "╯", inset: 0) }
            return band("(", ")", inset: 0)
        case .squiggle:
            // A wave: rows one column narrower, leaning alternately right
            // and left; a one-row symbol keeps the full width for its fill.
            if height == 1 { return band("~", "~", inset: 0) }
            let inner = max(1, width - 3)
            return ("~" + String(repeating: fill, count: inner) + "~", row % 2 == 0 ? 1 : 0)
        }
    }
}
