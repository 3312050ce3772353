import BoardCRDT

/// Draws the juice bar for a terminal (JV1-JV5): pure, from a
/// `StockScreenModel` and a layout to lines of text.
enum StockScreen {
    static let orderHelp = [
        "1-7 make a juice  arrows/Tab move  Enter/Space press  e edit stock  r reset  q quit",
        "1-7 make  arrows Enter  e edit  r reset  q quit",
        "1-7 make  e edit  q quit",
    ]
    static let editorHelp = [
        "arrows/Tab move  - / + change  Enter/Space press  Esc close  r reset  q quit",
        "arrows  - +  Enter  Esc close  q quit",
        "- + change  Esc close",
    ]

    static func render(_ model: StockScreenModel, layout: StockLayout, colour: ColourMode) -> [String] {
        draw(model, layout: layout).lines(colour: colour)
    }

    static func draw(_ model: StockScreenModel, layout: StockLayout) -> Canvas {
        var canvas = Canvas(width: layout.width, height: layout.height)
        if layout.isTooSmall {
            let need = "\(StockLayout.minimumWidth)x\(StockLayout.minimumHeight(wide: false))"
            canvas.write("terminal too small: need \(need)", x: 0, y: 0, style: .plain)
            return canvas
        }
        drawHeader(model, layout: layout, on: &canvas)
        switch model.page {
        case .order: drawOrder(model, layout: layout, on: &canvas)
        case .editor: drawEditor(model, layout: layout, on: &canvas)
        }
        if let dialog = model.dialog { drawDialog(dialog, model: model, layout: layout, on: &canvas) }
        // The refusal, unless the message box says it already.
        if let refusal = model.refusal, !(model.dialog?.lines.contains(refusal) ?? false) {
            canvas.write(" " + refusal, x: 0, y: layout.messageRow, style: .refusal)
        }
        drawHelp(model, layout: layout, on: &canvas)
        return canvas
    }

    // MARK: Header: connection and names

    /// ` bar · live · 2 here · version 5`
    static func statusText(_ model: StockScreenModel) -> String {
        var text = " \(model.boardName) · \(model.connection.label)"
        if let clients = model.clients { text += " · \(clients) here" }
        return text + " · juice bar"
    }

    /// ` here: ana (you), bo`
    static func namesText(_ model: StockScreenModel) -> String {
        var names = model.names
        if let me = model.me, !names.contains(me) { names.insert(me, at: 0) }
        guard !names.isEmpty else { return " nobody here yet" }
        return " here: " + names.map { $0 == model.me ? "\($0) (you)" : $0 }.joined(separator: ", ")
    }

    private static func drawHeader(_ model: StockScreenModel, layout: StockLayout, on canvas: inout Canvas) {
        canvas.fill(Rect(x: 0, y: 0, width: layout.width, height: 1), style: .statusBar)
        canvas.write(statusText(model), x: 0, y: 0, style: .statusBar)
        canvas.write(namesText(model), x: 0, y: 1, style: .plain)
    }

    // MARK: The order screen (JV1)

    /// `strawberry          16`
    static func fruitText(_ fruit: Fruit, count: Int, width: Int) -> String {
        let number = String(count)
        let gap = max(1, width - fruit.rawValue.count - number.count)
        return fruit.rawValue + String(repeating: " ", count: gap) + number
    }

    /// `[ 1 Mango juice            can make 3 ]`, or shorter where narrow.
    static func juiceText(_ juice: Juice, number: Int, canMake: Int, width: Int) -> String {
        let left = "[ \(number) \(juice.title)"
        var right = "can make \(canMake) ]"
        if left.count + 1 + right.count > width { right = "\(canMake) ]" }
        let gap = max(1, width - left.count - right.count)
        return left + String(repeating: " ", count: gap) + right
    }

    private static func drawOrder(_ model: StockScreenModel, layout: StockLayout, on canvas: inout Canvas) {
        let fruitX = layout.fruits.first?.x ?? 2
        let juiceX = layout.juices.first?.x ?? 2
        canvas.write("Fruit in stock", x: fruitX, y: layout.fruitTitleRow, style: .placeLabel)
        canvas.write("Juices (press 1-7)", x: juiceX, y: layout.juiceTitleRow, style: .placeLabel)
        for (index, fruit) in Fruit.allCases.enumerated() {
            let count = model.stock.count(of: fruit)
            let rect = layout.fruits[index]
            canvas.write(fruitText(fruit, count: count, width: rect.width), x: rect.x, y: rect.y,
                         style: count == 0 ? .mismatch : .plain, limit: rect.width)
        }
        let focus = model.dialog == nil ? model.focusedOrderItem : nil
        for (index, juice) in Juice.allCases.enumerated() {
            let rect = layout.juices[index]
            let canMake = model.stock.canMake(juice)
            let focused = focus == .juice(juice)
            let style: Style = focused ? .pressedButton : canMake == 0 ? .disabledButton : .actionBar
            canvas.write(juiceText(juice, number: index + 1, canMake: canMake, width: rect.width), x: rect.x, y: rect.y,
                         style: style, limit: rect.width)
            if focused { canvas.put(">", x: rect.x - 1, y: rect.y, style: .cursor) }
        }
        for (item, rect, title) in [(OrderItem.editStock, layout.editButton, StockLayout.editTitle),
                                    (.resetStock, layout.resetButton, StockLayout.resetTitle)] {
            let focused = focus == item
            canvas.write(title, x: rect.x, y: rect.y, style: focused ? .pressedButton : .actionBar)
            if focused { canvas.put(">", x: rect.x - 1, y: rect.y, style: .cursor) }
        }
        drawRecent(model, in: layout.recent, on: &canvas)
    }

    /// J7: the latest makes, newest first, as many as fit.
    private static func drawRecent(_ model: StockScreenModel, in rect: Rect, on canvas: inout Canvas) {
        guard rect.height >= 1 else { return }
        let total = model.stock.made.values.reduce(0) { $0.addingReportingOverflow($1).overflow ? Int.max : $0 + $1 }
        let recent = model.stock.recent
        let title = recent.isEmpty ? "No juice made yet" : "Recent makes (\(total) made in all)"
        canvas.write(title, x: rect.x, y: rect.y, style: .placeLabel, limit: rect.width)
        for (row, made) in recent.reversed().prefix(max(0, rect.height - 1)).enumerated() {
            let who = made.who.isEmpty ? "someone" : made.who
            canvas.write("\(who): \(made.juice.title)", x: rect.x + 2, y: rect.y + 1 + row, style: .plain, limit: rect.width - 2)
        }
    }

    // MARK: The stock editor (JV4)

    private static func drawEditor(_ model: StockScreenModel, layout: StockLayout, on canvas: inout Canvas) {
        let focus = model.dialog == nil ? model.editorFocus : nil
        canvas.write(StockLayout.editorTitle, x: 2, y: layout.editorTitleRow, style: .topLetter)
        let close = layout.closeButton
        canvas.write(StockLayout.closeTitle, x: close.x, y: close.y, style: focus == .close ? .pressedButton : .actionBar)
        if focus == .close { canvas.put(">", x: close.x - 1, y: close.y, style: .cursor) }
        for (index, fruit) in Fruit.allCases.enumerated() {
            let row = layout.editorRows[index]
            let count = model.stock.count(of: fruit)
            if focus?.fruit == fruit { canvas.put(">", x: row.x - 2, y: row.y, style: .cursor) }
            canvas.write(fruit.rawValue, x: row.x, y: row.y, style: .plain, limit: row.width)
            let number = String(count)
            let cell = layout.countCells[index]
            canvas.write(number, x: cell.x + max(0, cell.width - 1 - number.count), y: cell.y, style: count == 0 ? .mismatch : .plain)
            for (item, rect, title, step) in [(EditorItem.minus(fruit), layout.minusButtons[index], StockLayout.minusTitle, -1),
                                              (.plus(fruit), layout.plusButtons[index], StockLayout.plusTitle, 1)] {
                let style: Style = focus == item ? .pressedButton : model.canStep(fruit, by: step) ? .actionBar : .disabledButton
                canvas.write(title, x: rect.x, y: rect.y, style: style)
            }
        }
    }

    // MARK: Message boxes (JV2, JV3) and the help row

    private static func drawDialog(_ dialog: StockDialog, model: StockScreenModel, layout: StockLayout, on canvas: inout Canvas) {
        let (box, buttons) = layout.dialogBox(dialog, on: model.page)
        let style: Style
        switch dialog {
        case .ready: style = .match
        case .making: style = .plain
        case .notEnough, .confirmReset: style = .refusal
        }
        canvas.fill(box, style: .plain)
        canvas.outline(box, lines: .double, style: style)
        for (row, line) in dialog.lines.enumerated() {
            let x = box.x + max(2, (box.width - line.count) / 2)
            canvas.write(line, x: x, y: box.y + 1 + row, style: row == 0 ? style : .plain, limit: box.maxX - 2 - x)
        }
        for (index, title) in dialog.buttons.enumerated() {
            let rect = buttons[index]
            let focused = index == model.dialogChoice
            canvas.write(title, x: rect.x, y: rect.y, style: focused ? .pressedButton : .actionBar)
            if focused { canvas.put(">", x: rect.x - 1, y: rect.y, style: .cursor) }
        }
    }

    static func helpTexts(_ model: StockScreenModel) -> [String] {
        switch model.dialog {
        case .ready?, .making?: return ["Enter or o: OK  q quit", "Enter OK"]
        case .notEnough?: return ["y: yes, edit the stock  n or Esc: no  q quit", "y yes  n no"]
        case .confirmReset?: return ["y: yes, reset  n or Esc: no", "y yes  n no"]
        case nil: return model.page == .order ? orderHelp : editorHelp
        }
    }

    private static func drawHelp(_ model: StockScreenModel, layout: StockLayout, on canvas: inout Canvas) {
        let room = max(0, layout.width - 1)
        let texts = helpTexts(model)
        let help = texts.first { $0.count <= room } ?? texts.last ?? ""
        canvas.write(help, x: 1, y: layout.helpRow, style: .help, limit: room)
    }
}
