import BoardCRDT

/// Draws the letter board for a terminal (V1-V3): pure, from a `ScreenModel`
/// and a size to lines of text. The caller writes the lines; nothing here
/// touches the terminal.
enum BoardScreen {
    /// The key lists the help line shows, longest first: the first that fits
    /// is drawn. The controller implements exactly these keys.
    static let helpTexts = [
        "A-Z toggle (Q: shift)  1-6 move to place  < > nudge  Tab focus  - hide  + show  ! reset  ? help  q quit",
        "A-Z toggle 1-6 place </> nudge Tab focus -/+ hide/show ! reset ? q quit",
        "A-Z toggle 1-6 place -/+ hide/show ! reset q quit",
        "A-Z toggle  ? keys  q quit",
    ]
    static let helpHint = "? keys  q quit"

    /// Where everything is for this model and size (for pointer hits).
    static func layout(_ model: ScreenModel, width: Int, height: Int) -> ScreenLayout {
        ScreenLayout(model: model, width: width, height: height)
    }

    /// Exactly `height` lines, each exactly `width` columns wide once escape
    /// sequences are set aside; no escape sequence at all in `.none`.
    static func render(_ model: ScreenModel, width: Int, height: Int, colour: ColourMode) -> [String] {
        draw(model, layout: layout(model, width: width, height: height), colour: colour).lines(colour: colour)
    }

    /// The frame as a grid, before it becomes text.
    static func draw(_ model: ScreenModel, layout: ScreenLayout, colour: ColourMode) -> Canvas {
        var canvas = Canvas(width: layout.width, height: layout.height)
        if layout.isTooSmall {
            let message = "terminal too small: need \(ScreenLayout.minimumWidth)x\(ScreenLayout.minimumHeight)"
            canvas.write(message, x: 0, y: 0, style: .plain)
            return canvas
        }
        drawTopGrid(model, layout: layout, on: &canvas)
        drawStatusBar(model, layout: layout, on: &canvas)
        drawLetterGrid(model, layout: layout, on: &canvas)
        drawActionBar(model, layout: layout, colour: colour, on: &canvas)
        drawHelpLine(model, layout: layout, on: &canvas)
        return canvas
    }

    private static func drawTopGrid(_ model: ScreenModel, layout: ScreenLayout, on canvas: inout Canvas) {
        let focused = model.drag == nil ? model.focusedLetter : nil
        for (index, rect) in layout.topCells.enumerated() where rect.maxY > 0 {
            let place = index + 1
            let letter = index < model.order.count ? model.order[index] : nil
            var lines = BoxLines.light, style = Style.outline, letterStyle = Style.topLetter
            if let drag = model.drag, drag.from == place {
                (lines, style, letterStyle) = (.dashed, .lifted, .lifted)
            } else if let drag = model.drag, drag.hover == place {
                (lines, style) = (.double, .dropTarget)
            } else if let letter, letter == focused {
                (lines, style) = (.heavy, .focus)
            }
            canvas.outline(rect, lines: lines, style: style)
            if rect.width >= 5 {
                canvas.write(String(place), x: rect.x + 1, y: rect.y + 1, style: .placeLabel)
            }
            if let letter {
                canvas.put(letter.character, x: rect.x + rect.width / 2, y: rect.y + rect.height / 2, style: letterStyle)
            }
        }
    }

    private static func drawStatusBar(_ model: ScreenModel, layout: ScreenLayout, on canvas: inout Canvas) {
        let bar = layout.statusBar
        guard bar.y >= 0 else { return }
        canvas.fill(bar, style: .statusBar)
        var text = " \(model.boardName) · \(model.connection.label)"
        if let clients = model.clients { text += " · \(clients) here" }
        canvas.write(text, x: 0, y: bar.y, style: .statusBar)
        if let refusal = model.refusal {
            let x = text.count
            canvas.write(" · ", x: x, y: bar.y, style: .statusBar)
            canvas.write(refusal, x: x + 3, y: bar.y, style: .refusal)
        }
    }

    private static func drawActionBar(_ model: ScreenModel, layout: ScreenLayout, colour: ColourMode, on canvas: inout Canvas) {
        canvas.fill(layout.actionBar, style: .actionBar)
        for (button, rect) in layout.buttons {
            let style: Style = model.pressedButton == button ? .pressedButton : .actionBar
            canvas.fill(rect, style: style)
            // Without colour the bar is invisible: brackets mark the buttons.
            let label = colour == .none ? "[ \(button.title) ]" : button.title
            let fitted = label.count <= rect.width ? label : button.title
            let x = rect.x + max(0, (rect.width - fitted.count) / 2)
            canvas.write(fitted, x: x, y: rect.y, style: style, limit: rect.maxX - x)
        }
    }

    private static func drawLetterGrid(_ model: ScreenModel, layout: ScreenLayout, on canvas: inout Canvas) {
        for letter in Letter.all where layout.isVisible(tile: letter) {
            let rect = layout.tiles[Int(letter.index)]
            let letterX = rect.x + rect.width / 2, letterY = rect.y + rect.height / 2
            if let place = model.place(of: letter) {
                canvas.fill(rect, style: .selectedTile)
                canvas.outline(rect, lines: .double, style: .selectedTile)
                canvas.put(letter.character, x: letterX, y: letterY, style: .selectedTile)
                // The number sits in the top-right corner, inside the outline.
                let number = String(place)
                canvas.write(number, x: rect.maxX - 1 - number.count, y: rect.y + 1, style: .tileNumber)
            } else {
                canvas.outline(rect, lines: .light, style: .outline)
                canvas.put(letter.character, x: letterX, y: letterY, style: .tileLetter)
            }
        }
    }

    private static func drawHelpLine(_ model: ScreenModel, layout: ScreenLayout, on canvas: inout Canvas) {
        let line = layout.helpLine
        canvas.fill(line, style: .plain)
        var marker = ""
        if layout.scroll > 0 { marker += "^" }
        if layout.scroll < layout.maxScroll { marker += "v" }
        if !marker.isEmpty { marker = " scroll " + marker }
        let room = max(0, line.width - marker.count)
        let text = model.showsHelp ? helpTexts.first { $0.count <= room } ?? helpTexts[helpTexts.count - 1] : helpHint
        canvas.write(text, x: 0, y: line.y, style: .help, limit: room)
        canvas.write(marker, x: room, y: line.y, style: .help)
    }
}
