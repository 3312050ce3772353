import BoardCRDT

/// Draws the reminders list for a terminal (TV1-TV6): pure, from a
/// `TodoScreenModel` and a layout to lines of text.
///
///      home · live · 2 here · reminders
///      here: ana (you), bo
///
///     > ○ Buy oat milk▏
///         memo
///       ● Call bo                               bo editing
///       ○ Pick up parcel
///         at the post office, before 6
///      overwritten: bo changed this reminder's title at the same time; ...
///      typing edits  Enter new item  Tab memo  Esc done
enum TodoScreen {
    static let listHelp = [
        "arrows move  Enter edit  Space done  a add  d delete  Tab memo  drag to move  q quit",
        "arrows  Enter edit  Space done  a add  d delete  q quit",
        "Enter edit  Space done  a add  q quit",
    ]
    static let editHelp = [
        "typing edits  Enter new item  Tab/Down memo  Esc or arrows off the item: done",
        "typing edits  Enter new item  Tab memo  Esc done",
        "Enter new  Tab memo  Esc done",
    ]
    static let memoHelp = [
        "typing edits the memo  Enter new line  Tab/Up title  Esc or Down off the item: done",
        "typing edits the memo  Tab title  Esc done",
        "Tab title  Esc done",
    ]
    static let empty = "No reminders"
    static let emptyHint = "(Enter or a click adds one)"

    static func render(_ model: TodoScreenModel, layout: TodoLayout, colour: ColourMode) -> [String] {
        draw(model, layout: layout).lines(colour: colour)
    }

    static func draw(_ model: TodoScreenModel, layout: TodoLayout) -> Canvas {
        var canvas = Canvas(width: layout.width, height: layout.height)
        if layout.isTooSmall {
            canvas.write("terminal too small: need \(TodoLayout.minimumWidth)x\(TodoLayout.minimumHeight)", x: 0, y: 0, style: .plain)
            return canvas
        }
        canvas.fill(Rect(x: 0, y: 0, width: layout.width, height: 1), style: .statusBar)
        canvas.write(statusText(model), x: 0, y: 0, style: .statusBar)
        canvas.write(namesText(model), x: 0, y: 1, style: .plain)
        drawList(model, layout: layout, on: &canvas)
        if let message = model.message {
            let text = Array(message)
            for (index, line) in TodoLayout.wrap(text, width: layout.width - 2).prefix(2).enumerated() {
                canvas.write(String(text[line.start..<line.end]), x: 1, y: layout.messageRow + index, style: .refusal,
                             limit: layout.width - 2)
            }
        }
        let help = model.editor == nil ? listHelp : model.editor?.field == .memo ? memoHelp : editHelp
        let line = help.first { $0.count + 1 <= layout.width } ?? help[help.count - 1]
        canvas.write(" " + line, x: 0, y: layout.helpRow, style: .help)
        return canvas
    }

    /// ` home · live · 2 here · reminders`
    static func statusText(_ model: TodoScreenModel) -> String {
        var text = " \(model.boardName) · \(model.connection.label)"
        if let clients = model.clients { text += " · \(clients) here" }
        return text + " · reminders"
    }

    /// ` here: ana (you), bo`
    static func namesText(_ model: TodoScreenModel) -> String {
        var names = model.names
        if let me = model.me, !names.contains(me) { names.insert(me, at: 0) }
        guard !names.isEmpty else { return " nobody here yet" }
        return " here: " + names.map { $0 == model.me ? "\($0) (you)" : $0 }.joined(separator: ", ")
    }

    private static func drawList(_ model: TodoScreenModel, layout: TodoLayout, on canvas: inout Canvas) {
        let top = layout.listTop
        let bottom = top + layout.listHeight
        if model.items.isEmpty {
            // T8.
            let x = max(0, (layout.width - empty.count) / 2)
            canvas.write(empty, x: x, y: top + 1, style: model.selected == nil ? .focus : .plain)
            canvas.write(emptyHint, x: max(0, (layout.width - emptyHint.count) / 2), y: top + 2, style: .help)
            return
        }
        for block in layout.blocks(model) {
            let y0 = top + block.top - model.scroll
            guard y0 + block.height > top, y0 < bottom else { continue }
            let item = block.item
            let isSelected = model.selected == item.id
            let isDragged = model.drag?.moved == true && model.drag?.item == item.id
            let isEdited = model.editor?.item == item.id
            func visible(_ y: Int) -> Bool { y >= top && y < bottom }
            if visible(y0) {
                if isSelected || isDragged { canvas.put(isDragged ? "=" : ">", x: 0, y: y0, style: .focus) }
                // TV1: hollow or filled.
                canvas.put(item.done ? "●" : "○", x: TodoLayout.circleColumn, y: y0, style: item.done ? .help : .focus)
                if let label = block.label {
                    let room = layout.width - TodoLayout.textColumn - 1
                    let shown = String(label.prefix(max(0, room / 2)))
                    canvas.write(shown, x: layout.width - 1 - shown.count, y: y0, style: .otherPick)
                }
            }
            let titleStyle: Style = isDragged ? .dropTarget : item.done && !isEdited ? .help : isSelected ? .focus : .plain
            let titleMark = isEdited && model.editor?.field == .title
            for (index, line) in block.titleLines.enumerated() where visible(y0 + index) {
                drawLine(block.title, line, x: TodoLayout.textColumn, y: y0 + index, style: titleStyle, marks: titleMark, on: &canvas)
            }
            let memoMark = isEdited && model.editor?.field == .memo
            for (index, line) in block.memoLines.enumerated() where visible(block.memoTop - block.top + y0 + index) {
                drawLine(block.memo, line, x: TodoLayout.textColumn, y: block.memoTop - block.top + y0 + index,
                         style: memoMark ? .plain : .placeLabel, marks: memoMark, on: &canvas)
            }
        }
    }

    /// One wrapped line; line breaks are not drawn, the cursor mark stands out.
    private static func drawLine(_ text: [Character], _ line: TodoLayout.Line, x: Int, y: Int, style: Style, marks: Bool,
                                 on canvas: inout Canvas) {
        var column = x
        for index in line.start..<line.end {
            let character = text[index]
            if character.isNewline { continue }
            let isCursor = marks && character == TodoLayout.cursorMark
            canvas.put(character, x: column, y: y, style: isCursor ? .cursor : style)
            column += 1
        }
    }
}
