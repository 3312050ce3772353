import BoardCRDT

/// The three buttons of the action bar (V1), left to right.
enum ActionButton: CaseIterable, Equatable, Sendable {
    case hide, show, reset

    var title: String {
        switch self {
        case .hide: "Hide"
        case .show: "Show"
        case .reset: "Reset"
        }
    }
}

/// What lies under a screen position.
enum HitTarget: Equatable, Sendable {
    /// A top-grid cell, by its 1-based place, empty or not.
    case topCell(place: Int)
    case tile(Letter)
    case button(ActionButton)
    /// The action bar outside any button (only where rounding leaves room).
    case actionBar
    case statusBar
}

/// Where everything is on a `width` x `height` terminal for one model: the
/// scaled geometry of V2, shifted up by the hide offset (V3). Shared by the
/// renderer and the pointer so that a click lands on what was drawn.
struct ScreenLayout: Sendable {
    /// Narrower or shorter than this and the screen only says so.
    static let minimumWidth = 20
    static let minimumHeight = 6
    /// Tile rows of the A-Z grid: 26 tiles in 3 columns.
    static let tileRows = 9

    let width: Int
    let height: Int
    let isTooSmall: Bool
    /// Left edge and width of each of the three columns (cells and tiles).
    let columns: [(x: Int, width: Int)]
    let cellHeight: Int
    let tileHeight: Int
    /// Rows the screen is scrolled up by the hide offset (0 = all shown).
    let shift: Int
    /// Rows from all shown to all hidden: top grid plus status bar.
    let hiddenDistance: Int
    let topGrid: Rect
    /// Top-grid cells for places 1...6 (index 0 is place 1).
    let topCells: [Rect]
    let statusBar: Rect
    let actionBar: Rect
    let buttons: [(button: ActionButton, rect: Rect)]
    /// The visible part of the letter grid: it scrolls inside this.
    let letterViewport: Rect
    /// Tiles A-Z (index 0 is A), already scrolled; check `isVisible`.
    let tiles: [Rect]
    /// Letter-grid scroll in tile rows, clamped to `0...maxScroll`.
    let scroll: Int
    let maxScroll: Int
    let helpLine: Rect

    init(model: ScreenModel, width: Int, height: Int) {
        self.width = max(width, 0)
        self.height = max(height, 0)
        isTooSmall = width < Self.minimumWidth || height < Self.minimumHeight

        // V2: three equal columns with a one-column gap; the odd columns
        // rounding leaves over go to the leftmost cells.
        let inner = max(self.width - 2, 0)
        let base = inner / 3
        var columns: [(x: Int, width: Int)] = []
        var x = 0
        for index in 0..<3 {
            let columnWidth = base + (index < inner % 3 ? 1 : 0)
            columns.append((x, columnWidth))
            x += columnWidth + 1
        }
        self.columns = columns

        // Square-ish for a terminal (characters are about twice as tall as
        // wide), at least 3 rows for an outline around a letter, and small
        // enough that a terminal shows several rows of tiles.
        let square = max(3, (base + 1) / 2)
        tileHeight = max(3, min(square, self.height / 6))
        let roomForTopGrid = self.height - 2 - 1 - 3
        cellHeight = max(3, min(tileHeight, (roomForTopGrid - 1) / 2))

        let cellHeight = self.cellHeight, tileHeight = self.tileHeight
        let topGridHeight = 2 * cellHeight + 1
        hiddenDistance = topGridHeight + 1
        var shift = Int(model.view.offset * Double(hiddenDistance) + 0.5)
        // V3: the status bar never shows without the top grid.
        if shift >= topGridHeight { shift = hiddenDistance }
        self.shift = shift

        topGrid = Rect(x: 0, y: -shift, width: self.width, height: topGridHeight)
        topCells = (0..<LetterBoard.capacity).map { index in
            let column = columns[index % 3]
            return Rect(x: column.x, y: -shift + (index / 3) * (cellHeight + 1), width: column.width, height: cellHeight)
        }
        statusBar = Rect(x: 0, y: topGridHeight - shift, width: self.width, height: 1)
        actionBar = Rect(x: 0, y: topGridHeight + 1 - shift, width: self.width, height: 1)

        // V2: buttons each a third of the width, no gaps.
        var buttons: [(button: ActionButton, rect: Rect)] = []
        var buttonX = 0
        for (index, button) in ActionButton.allCases.enumerated() {
            let buttonWidth = self.width / 3 + (index < self.width % 3 ? 1 : 0)
            buttons.append((button, Rect(x: buttonX, y: actionBar.y, width: buttonWidth, height: 1)))
            buttonX += buttonWidth
        }
        self.buttons = buttons

        helpLine = Rect(x: 0, y: self.height - 1, width: self.width, height: 1)
        let lettersTop = topGridHeight + 2 - shift
        letterViewport = Rect(x: 0, y: lettersTop, width: self.width, height: max(0, helpLine.y - lettersTop))

        let pitch = tileHeight + 1
        var maxScroll = Self.tileRows - 1
        for candidate in 0..<Self.tileRows where (Self.tileRows - candidate) * pitch - 1 <= letterViewport.height {
            maxScroll = candidate
            break
        }
        self.maxScroll = maxScroll
        let scroll = min(max(model.scroll, 0), maxScroll)
        self.scroll = scroll
        tiles = Letter.all.indices.map { index in
            let column = columns[index % 3]
            let row = index / 3 - scroll
            return Rect(x: column.x, y: lettersTop + row * pitch, width: column.width, height: tileHeight)
        }
    }

    /// Whether any row of a tile shows in the letter viewport.
    func isVisible(tile letter: Letter) -> Bool {
        tiles[Int(letter.index)].overlapsRows(of: letterViewport)
    }

    /// What the pointer at column `x`, row `y` (0-based) is over; nil for
    /// gaps, the help line and empty space.
    func hit(x: Int, y: Int) -> HitTarget? {
        guard !isTooSmall, x >= 0, x < width, y >= 0, y < helpLine.y else { return nil }
        if actionBar.contains(x: x, y: y) {
            return buttons.first { $0.rect.contains(x: x, y: y) }.map { .button($0.button) } ?? .actionBar
        }
        if statusBar.contains(x: x, y: y) { return .statusBar }
        if let index = topCells.firstIndex(where: { $0.contains(x: x, y: y) }) {
            return .topCell(place: index + 1)
        }
        guard letterViewport.contains(x: x, y: y) else { return nil }
        return tiles.firstIndex { $0.contains(x: x, y: y) }.flatMap { Letter(index: $0) }.map { .tile($0) }
    }

    /// The rectangle of a button.
    func rect(of button: ActionButton) -> Rect {
        buttons.first { $0.button == button }?.rect ?? actionBar
    }
}
