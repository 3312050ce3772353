import BoardCRDT

/// What lies under a point of the stock screens.
enum StockHit: Equatable, Sendable {
    case order(OrderItem)
    case editor(EditorItem)
    /// A message box's button, by index into `StockDialog.buttons`.
    case dialog(Int)
}

/// Where everything is on a `width` x `height` terminal (JV1, JV4, JV5).
///
/// Order screen, wide (66 columns or more): fruits on the left, the juice
/// buttons on the right, [ Add stock ] [ Reset stock ] below, then the
/// recent makes. Narrow: the same, stacked. The editor: its title and
/// [ Close ], then one row per fruit, `[ - ] count [ + ]`. A message box sits
/// below the buttons when there is room, so that the counts stay in view.
/// The last two rows are the message row and the help row.
struct StockLayout: Sendable {
    static let minimumWidth = 36
    static let wideWidth = 66
    static let editTitle = "[ Add stock ]"
    static let resetTitle = "[ Reset stock ]"
    static let editorTitle = "Add stock"
    static let closeTitle = "[ Close ]"
    static let minusTitle = "[ - ]"
    static let plusTitle = "[ + ]"
    static let fruitWidth = 24

    let width: Int
    let height: Int
    let isWide: Bool
    let isTooSmall: Bool

    // Order screen.
    let fruitTitleRow: Int
    let juiceTitleRow: Int
    /// One row per fruit: its name and count.
    let fruits: [Rect]
    /// One button per juice, in `Juice.allCases` order.
    let juices: [Rect]
    let editButton: Rect
    let resetButton: Rect
    /// The recent makes, title row included.
    let recent: Rect

    // Editor.
    let editorTitleRow: Int
    let closeButton: Rect
    /// The x of each fruit's name, and its row.
    let editorRows: [Rect]
    let minusButtons: [Rect]
    let countCells: [Rect]
    let plusButtons: [Rect]

    let messageRow: Int
    let helpRow: Int

    /// The smallest height that shows everything.
    static func minimumHeight(wide: Bool) -> Int { wide ? 17 : 20 }

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        isWide = width >= Self.wideWidth
        isTooSmall = width < Self.minimumWidth || height < Self.minimumHeight(wide: isWide)
        messageRow = height - 2
        helpRow = height - 1

        let buttonRow: Int
        if isWide {
            fruitTitleRow = 3
            juiceTitleRow = 3
            fruits = (0..<Fruit.allCases.count).map { Rect(x: 2, y: 4 + $0, width: Self.fruitWidth, height: 1) }
            let x = 2 + Self.fruitWidth + 4
            let juiceWidth = max(10, min(width - x - 2, 46))
            juices = (0..<Juice.allCases.count).map { Rect(x: x, y: 4 + $0, width: juiceWidth, height: 1) }
            buttonRow = 12
        } else {
            fruitTitleRow = 2
            fruits = (0..<Fruit.allCases.count).map { Rect(x: 2, y: 3 + $0, width: Self.fruitWidth, height: 1) }
            juiceTitleRow = 8
            let juiceWidth = max(10, min(width - 4, 46))
            juices = (0..<Juice.allCases.count).map { Rect(x: 2, y: 9 + $0, width: juiceWidth, height: 1) }
            buttonRow = 16
        }
        editButton = Rect(x: 2, y: buttonRow, width: Self.editTitle.count, height: 1)
        resetButton = Rect(x: editButton.maxX + 2, y: buttonRow, width: Self.resetTitle.count, height: 1)
        let recentTop = buttonRow + 2
        recent = Rect(x: 2, y: recentTop, width: max(0, width - 4), height: max(0, messageRow - recentTop))

        editorTitleRow = 3
        closeButton = Rect(x: 2 + Self.editorTitle.count + 4, y: editorTitleRow, width: Self.closeTitle.count, height: 1)
        editorRows = (0..<Fruit.allCases.count).map { Rect(x: 4, y: 5 + $0 * 2, width: 12, height: 1) }
        minusButtons = editorRows.map { Rect(x: $0.maxX + 1, y: $0.y, width: Self.minusTitle.count, height: 1) }
        countCells = minusButtons.map { Rect(x: $0.maxX + 1, y: $0.y, width: 5, height: 1) }
        plusButtons = countCells.map { Rect(x: $0.maxX + 1, y: $0.y, width: Self.plusTitle.count, height: 1) }
    }

    /// Where the rows below the page's own content start: a message box goes there if it fits.
    func contentBottom(_ page: StockPage) -> Int {
        switch page {
        case .order: editButton.maxY
        case .editor: plusButtons.last?.maxY ?? editorTitleRow + 1
        }
    }

    /// The message box for `dialog` on `page`, and its buttons' rectangles.
    func dialogBox(_ dialog: StockDialog, on page: StockPage) -> (box: Rect, buttons: [Rect]) {
        let lines = dialog.lines
        let buttonsWidth = dialog.buttons.map(\.count).reduce(0, +) + 3 * (dialog.buttons.count - 1)
        let inner = max(buttonsWidth, lines.map(\.count).max() ?? 0)
        let boxWidth = min(max(0, width - 2), inner + 4)
        let boxHeight = lines.count + 4
        let x = max(0, (width - boxWidth) / 2)
        let below = contentBottom(page) + 1
        let y = below + boxHeight <= messageRow ? below : max(1, (height - boxHeight) / 2)
        let box = Rect(x: x, y: y, width: boxWidth, height: boxHeight)
        var buttonX = x + max(2, (boxWidth - buttonsWidth) / 2)
        var buttons: [Rect] = []
        for title in dialog.buttons {
            buttons.append(Rect(x: buttonX, y: box.maxY - 2, width: title.count, height: 1))
            buttonX += title.count + 3
        }
        return (box, buttons)
    }

    func hit(x: Int, y: Int, page: StockPage, dialog: StockDialog?) -> StockHit? {
        if let dialog {
            let buttons = dialogBox(dialog, on: page).buttons
            return buttons.firstIndex { $0.contains(x: x, y: y) }.map { .dialog($0) }
        }
        switch page {
        case .order:
            if let index = juices.firstIndex(where: { $0.contains(x: x, y: y) }) { return .order(.juice(Juice.allCases[index])) }
            if editButton.contains(x: x, y: y) { return .order(.editStock) }
            if resetButton.contains(x: x, y: y) { return .order(.resetStock) }
        case .editor:
            if closeButton.contains(x: x, y: y) { return .editor(.close) }
            for (index, fruit) in Fruit.allCases.enumerated() {
                if minusButtons[index].contains(x: x, y: y) { return .editor(.minus(fruit)) }
                if plusButtons[index].contains(x: x, y: y) { return .editor(.plus(fruit)) }
            }
        }
        return nil
    }
}
