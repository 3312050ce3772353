/// What lies under a point of the Set screen.
enum SetHit: Equatable, Sendable {
    case place(Int)
    case deal
    case newGame
}

/// Where everything is on a `width` x `height` terminal (SV1): a header of
/// two status rows, the table's cards in a grid as big as fits, a message
/// row and a button row. Cards keep a 2:3 shape: a terminal cell is about
/// twice as tall as wide, so a card `h` rows tall is about `4h/3` columns
/// wide. Below the minimum size the rows of cards scroll.
struct SetLayout: Sendable {
    static let headerRows = 2
    static let footerRows = 2
    static let minimumCardHeight = 5
    static let minimumWidth = 24
    static let minimumHeight = 10
    static let dealTitle = "[ Deal 3 More Cards ]"
    static let emptyDeckTitle = "[ Deck empty ]"
    static let newGameTitle = "[ New Game ]"

    let width: Int
    let height: Int
    let isTooSmall: Bool
    let cardWidth: Int
    let cardHeight: Int
    let columns: Int
    /// Card rows in all, and how many fit at once.
    let rows: Int
    let visibleRows: Int
    /// The first card row shown.
    let scroll: Int
    /// One rectangle per table place, shifted by the scroll (rows above or
    /// below the table area are outside it).
    let cards: [Rect]
    /// The rows between header and footer.
    let area: Rect
    let messageRow: Int
    let buttonRow: Int
    let dealButton: Rect
    let newGameButton: Rect

    /// The width of a card `height` rows tall: 2:3 on a 1:2 cell.
    static func cardWidth(forHeight height: Int) -> Int { (4 * height + 1) / 3 }

    init(places: Int, scroll requested: Int, deckEmpty: Bool = false, width: Int, height: Int) {
        self.width = width
        self.height = height
        isTooSmall = width < Self.minimumWidth || height < Self.minimumHeight
        area = Rect(x: 0, y: Self.headerRows, width: width, height: max(0, height - Self.headerRows - Self.footerRows))
        messageRow = height - 2
        buttonRow = height - 1
        let dealTitle = deckEmpty ? Self.emptyDeckTitle : Self.dealTitle
        dealButton = Rect(x: 0, y: buttonRow, width: dealTitle.count, height: 1)
        newGameButton = Rect(x: dealTitle.count + 1, y: buttonRow, width: Self.newGameTitle.count, height: 1)

        let count = max(places, 1)
        // The biggest card height over every column count: rows of cards
        // with one blank row between, columns with one blank column between.
        var best = (height: 0, columns: 1)
        for columns in 1...count {
            let rows = (count + columns - 1) / columns
            let byHeight = (area.height + 1) / rows - 1
            let maxWidth = (area.width + 1) / columns - 1
            var cardHeight = byHeight
            while cardHeight > 0, Self.cardWidth(forHeight: cardHeight) > maxWidth { cardHeight -= 1 }
            if cardHeight > best.height { best = (cardHeight, columns) }
        }
        if best.height >= Self.minimumCardHeight {
            cardHeight = best.height
            columns = best.columns
        } else {
            cardHeight = Self.minimumCardHeight
            columns = max(1, (area.width + 1) / (Self.cardWidth(forHeight: cardHeight) + 1))
        }
        cardWidth = Self.cardWidth(forHeight: cardHeight)
        rows = (count + columns - 1) / columns
        visibleRows = max(1, min(rows, (area.height + 1) / (cardHeight + 1)))
        scroll = min(max(requested, 0), rows - visibleRows)
        let gridWidth = columns * (cardWidth + 1) - 1
        let gridHeight = visibleRows * (cardHeight + 1) - 1
        let left = max(0, (area.width - gridWidth) / 2)
        let top = area.y + max(0, (area.height - gridHeight) / 2)
        var cards: [Rect] = []
        for place in 0..<places {
            let row = place / columns - scroll, column = place % columns
            cards.append(Rect(x: left + column * (cardWidth + 1), y: top + row * (cardHeight + 1), width: cardWidth, height: cardHeight))
        }
        self.cards = cards
    }

    /// True when `place`'s card lies wholly inside the table area.
    func isVisible(place: Int) -> Bool {
        guard place >= 0, place < cards.count else { return false }
        let rect = cards[place]
        return rect.y >= area.y && rect.maxY <= area.maxY
    }

    /// The row of cards `place` is in.
    func row(of place: Int) -> Int { place / max(columns, 1) }

    func hit(x: Int, y: Int) -> SetHit? {
        if dealButton.contains(x: x, y: y) { return .deal }
        if newGameButton.contains(x: x, y: y) { return .newGame }
        for place in cards.indices where isVisible(place: place) && cards[place].contains(x: x, y: y) {
            return .place(place)
        }
        return nil
    }
}
