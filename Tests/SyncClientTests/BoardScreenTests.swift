import BoardCRDT
import Testing
@testable import syncclient

/// Rendering of the letter board (V1-V3) at terminal sizes people use.
@Suite struct BoardScreenTests {
    static let sizes = [(40, 20), (80, 24), (120, 40), (80, 60)]

    @Test(arguments: sizes + [(20, 6), (10, 3), (0, 0)])
    func everyLineHasTheExactSize(width: Int, height: Int) {
        for colour in [ColourMode.none, .basic, .ansi256] {
            for view in [ViewState.shown, .hidden, ViewState(offset: 0.4, target: .hidden)] {
                let lines = BoardScreen.render(model(order: "FAD", view: view), width: width, height: height, colour: colour)
                #expect(lines.count == height)
                for line in lines { #expect(visible(line).count == width) }
            }
        }
    }

    /// V1: the top grid shows the order in places 1-6, empty cells empty.
    @Test(arguments: sizes)
    func topGridShowsTheOrder(width: Int, height: Int) {
        let screen = model(order: "FAD")
        let layout = BoardScreen.layout(screen, width: width, height: height)
        let lines = BoardScreen.render(screen, width: width, height: height, colour: .none)
        for (index, rect) in layout.topCells.enumerated() {
            #expect(column(lines[rect.y], rect.x) == "┌" || column(lines[rect.y], rect.x) == "┏")
            let middle = lines[rect.y + rect.height / 2]
            let interior = columns(middle, rect.x + 2, rect.width - 3).filter { $0 != " " }
            if index < 3 {
                #expect(column(middle, rect.x + rect.width / 2) == Array("FAD")[index])
            } else {
                #expect(interior.isEmpty, "place \(index + 1) should be empty")
            }
        }
        // Three columns with one-column gaps and no outer margins (V2).
        #expect(layout.topCells[0].x == 0)
        #expect(layout.topCells[1].x == layout.topCells[0].maxX + 1)
        #expect(layout.topCells[2].maxX == width)
        #expect(layout.topCells[3].y == layout.topCells[0].maxY + 1)
    }

    /// V1: a selected tile carries its number in its top-right corner.
    @Test(arguments: sizes)
    func selectedTilesShowTheirNumberTopRight(width: Int, height: Int) {
        var screen = model(order: "FAD")
        screen.scroll = 0
        let layout = BoardScreen.layout(screen, width: width, height: height)
        let lines = BoardScreen.render(screen, width: width, height: height, colour: .none)
        let expected: [Character: Character] = ["F": "1", "A": "2", "D": "3"]
        for letter in letters("ABCDEF") {
            let rect = layout.tiles[Int(letter.index)]
            #expect(rect.maxY <= layout.letterViewport.maxY)
            let corner = column(lines[rect.y + 1], rect.maxX - 2)
            #expect(corner == (expected[letter.character] ?? " "), "tile \(letter)")
            #expect(column(lines[rect.y + rect.height / 2], rect.x + rect.width / 2) == letter.character)
            let selected = expected[letter.character] != nil
            #expect(column(lines[rect.y], rect.x) == (selected ? "╔" : "┌"))
        }
    }

    @Test func statusBarSaysNameConnectionPeopleAndRefusal() {
        var screen = model(order: "ABCDEF", name: "kitchen")
        screen.refusal = ScreenModel.refusalText(code: BoardRefusal.boardFull.code, message: BoardRefusal.boardFull.message)
        screen.connection = .reconnecting(attempt: 2)
        let layout = BoardScreen.layout(screen, width: 120, height: 40)
        let bar = visible(BoardScreen.render(screen, width: 120, height: 40, colour: .ansi256)[layout.statusBar.y])
        #expect(bar.contains("kitchen"))
        #expect(bar.contains("reconnecting"))
        #expect(bar.contains("3 here"))
        #expect(bar.contains("board full: at most 6 letters can be selected"))
    }

    /// V2: three buttons, each a third of the width, no gaps.
    @Test(arguments: sizes)
    func buttonsShareTheActionBarEqually(width: Int, height: Int) {
        let screen = model()
        let layout = BoardScreen.layout(screen, width: width, height: height)
        let widths = layout.buttons.map(\.rect.width)
        #expect(widths.reduce(0, +) == width)
        #expect((widths.max() ?? 0) - (widths.min() ?? 0) <= 1)
        #expect(layout.buttons.map(\.button) == [.hide, .show, .reset])
        let lines = BoardScreen.render(screen, width: width, height: height, colour: .none)
        let bar = lines[layout.actionBar.y]
        for (button, rect) in layout.buttons {
            #expect(columns(bar, rect.x, rect.width).contains("[ \(button.title) ]"))
        }
    }

    /// V3: hidden, the action bar is at the top; no top grid, no status bar.
    @Test(arguments: sizes)
    func hiddenViewStartsWithTheActionBar(width: Int, height: Int) {
        let screen = model(order: "FAD", view: .hidden)
        let lines = BoardScreen.render(screen, width: width, height: height, colour: .none).map(visible)
        #expect(lines[0].contains("[ Hide ]") && lines[0].contains("[ Reset ]"))
        #expect(!lines.contains { $0.contains("demo") })
        // The first tile row (A B C) follows straight after.
        #expect(lines[1].hasPrefix("╔"))
        #expect(lines[2].contains("2"))
    }

    /// V3: while sliding, the status bar shows only with some top grid.
    @Test func statusBarNeverShowsWithoutTopGrid() {
        for step in 0...20 {
            let view = ViewState(offset: Double(step) / 20, target: .hidden)
            let layout = BoardScreen.layout(model(view: view), width: 80, height: 24)
            if layout.statusBar.y >= 0 { #expect(layout.topGrid.maxY > 0, "offset \(view.offset)") }
            #expect(layout.actionBar.y == layout.statusBar.maxY)
        }
    }

    /// V1: the letter grid scrolls when the terminal is short.
    @Test func shortTerminalScrollsTheLetterGrid() {
        var screen = model(order: "Z")
        let top = BoardScreen.layout(screen, width: 60, height: 16)
        #expect(top.maxScroll > 0)
        #expect(top.isVisible(tile: letter("A")))
        #expect(!top.isVisible(tile: letter("Z")))
        #expect(BoardScreen.render(screen, width: 60, height: 16, colour: .none)[15].hasSuffix("scroll v"))

        screen.scroll = 99
        let bottom = BoardScreen.layout(screen, width: 60, height: 16)
        #expect(bottom.scroll == bottom.maxScroll)
        #expect(!bottom.isVisible(tile: letter("A")))
        let z = bottom.tiles[Int(letter("Z").index)]
        #expect(z.y >= bottom.letterViewport.y && z.maxY <= bottom.letterViewport.maxY)
        let lines = BoardScreen.render(screen, width: 60, height: 16, colour: .none)
        #expect(column(lines[z.y + 1], z.maxX - 2) == "1")
        #expect(lines[15].hasSuffix("scroll ^"))
    }

    /// Cells stay at least 3 rows (an outline round a letter) and about
    /// square on a big terminal: half as many rows as columns.
    @Test func cellHeightsSuitATerminal() {
        let small = BoardScreen.layout(model(), width: 40, height: 12)
        #expect(small.cellHeight == 3 && small.tileHeight == 3)
        let big = BoardScreen.layout(model(), width: 60, height: 120)
        #expect(big.tileHeight == (big.columns[0].width + 1) / 2)
    }

    @Test func noColourMeansNoEscapeAtAll() {
        var screen = model(order: "FAD")
        screen.boardName = "evil\u{1B}[2Jname"
        screen.refusal = "bell\u{07}"
        let plain = BoardScreen.render(screen, width: 80, height: 24, colour: .none).joined()
        #expect(!plain.contains("\u{1B}"))
        #expect(!plain.contains("\u{07}"))
        let coloured = BoardScreen.render(model(order: "FAD"), width: 80, height: 24, colour: .ansi256).joined()
        #expect(coloured.contains("48;5;250"))
        #expect(coloured.contains("48;5;218"))
    }

    @Test func colourModeFollowsTheEnvironment() {
        #expect(ColourMode.detect(environment: ["NO_COLOR": "1", "TERM": "xterm-256color"]) == .none)
        #expect(ColourMode.detect(environment: ["NO_COLOR": "", "TERM": "xterm-256color"]) == .ansi256)
        #expect(ColourMode.detect(environment: ["TERM": "dumb"]) == .none)
        #expect(ColourMode.detect(environment: [:]) == .none)
        #expect(ColourMode.detect(environment: ["TERM": "xterm"]) == .basic)
        #expect(ColourMode.detect(environment: ["TERM": "tmux-256color"]) == .ansi256)
    }

    /// B7: the drop target is marked, the lifted cell dashed.
    @Test func dragShowsLiftedCellAndDropTarget() {
        var screen = model(order: "FDA")
        screen.drag = TopGridDrag(letter: letter("A"), from: 3, hover: 2)
        let layout = BoardScreen.layout(screen, width: 80, height: 24)
        let lines = BoardScreen.render(screen, width: 80, height: 24, colour: .none)
        #expect(column(lines[layout.topCells[1].y], layout.topCells[1].x) == "╔")
        #expect(column(lines[layout.topCells[2].y], layout.topCells[2].x + 1) == "╌")
    }

    @Test func tooSmallSaysSo() {
        let lines = BoardScreen.render(model(), width: 30, height: 4, colour: .ansi256)
        #expect(lines[0].hasPrefix("terminal too small"))
        #expect(BoardScreen.layout(model(), width: 30, height: 4).hit(x: 1, y: 1) == nil)
    }
}
