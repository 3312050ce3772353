import BoardCRDT

/// Where everything of the reminders screen goes on a `width` x `height`
/// terminal: the status bar and who is here on top, the list (one block
/// per item: the circle, the title wrapped, the memo under it), the message
/// row and the key help at the bottom. Pure: the controller hit-tests
/// clicks with the same blocks the screen draws.
struct TodoLayout: Equatable, Sendable {
    let width: Int
    let height: Int

    static let minimumWidth = 24
    static let minimumHeight = 7
    /// The circle's column (the selection marker `>` is at column 0).
    static let circleColumn = 2
    /// Where titles and memos start.
    static let textColumn = 4
    /// The text cursor while editing (TV2): drawn in the text, one column wide.
    static let cursorMark: Character = "▏"

    var isTooSmall: Bool { width < Self.minimumWidth || height < Self.minimumHeight }
    /// The first row of the list.
    var listTop: Int { 3 }
    /// How many rows the list has.
    var listHeight: Int { max(0, height - 3 - listTop) }
    /// The first of the two rows for notices and refusals (TV6): they say
    /// what happened, and that takes more than one row of 80 columns.
    var messageRow: Int { height - 3 }
    var helpRow: Int { height - 1 }

    /// One line of a wrapped text: the characters `start..<end` of what is drawn.
    struct Line: Equatable, Sendable {
        var start: Int
        var end: Int
    }

    /// One item on screen; `top` counts list rows from the first item, before scrolling.
    struct Block: Equatable, Sendable {
        var item: TodoList.Item
        var top: Int
        /// The title as drawn (with the cursor mark while it is edited) and its lines.
        var title: [Character]
        var titleLines: [Line]
        /// The memo as drawn; no lines when T10 hides it.
        var memo: [Character]
        var memoLines: [Line]
        /// TV3: who else edits it.
        var label: String?
        /// Whether the memo line is only the empty memo's placeholder.
        var memoIsPlaceholder: Bool

        var height: Int { titleLines.count + memoLines.count }
        var memoTop: Int { top + titleLines.count }
    }

    static let memoPlaceholder = "memo"

    /// The columns a title may use beside `label`.
    func titleWidth(label: String?) -> Int {
        let room = width - Self.textColumn - 1
        guard let label else { return max(1, room) }
        return max(1, room - min(label.count, max(0, room / 2)) - 1)
    }

    var memoWidth: Int { max(1, width - Self.textColumn - 1) }

    /// Every item's block, in the order drawn.
    func blocks(_ model: TodoScreenModel) -> [Block] {
        var top = 0
        var out: [Block] = []
        for item in model.shownItems {
            let editor = model.editor?.item == item.id ? model.editor : nil
            let label = model.editorsLabel(of: item.id)
            var title = Array(item.title)
            if let editor, editor.field == .title {
                title = editor.text
                title.insert(Self.cursorMark, at: editor.cursor)
            }
            var memo: [Character] = []
            var memoLines: [Line] = []
            var placeholder = false
            if model.showsMemo(of: item) {
                memo = Array(item.memo)
                if let editor, editor.field == .memo {
                    memo = editor.text
                    memo.insert(Self.cursorMark, at: editor.cursor)
                } else if memo.isEmpty {
                    memo = Array(Self.memoPlaceholder)
                    placeholder = true
                }
                memoLines = Self.wrap(memo, width: memoWidth)
            }
            let block = Block(item: item, top: top, title: title, titleLines: Self.wrap(title, width: titleWidth(label: label)),
                              memo: memo, memoLines: memoLines, label: label, memoIsPlaceholder: placeholder)
            top += block.height
            out.append(block)
        }
        return out
    }

    /// Breaks `text` into lines of at most `width` columns: at line breaks,
    /// else after the last space that fits, else anywhere. A line keeps the
    /// space or line break it ends with (not drawn), so the lines cover the
    /// text without gaps: the cursor mark is always on one of them.
    static func wrap(_ text: [Character], width: Int) -> [Line] {
        let width = max(1, width)
        var lines: [Line] = []
        var start = 0
        while true {
            let breakAt = text[start...].firstIndex(where: \.isNewline) ?? text.count
            if breakAt - start <= width {
                let end = breakAt < text.count ? breakAt + 1 : breakAt
                lines.append(Line(start: start, end: end))
                if breakAt >= text.count { break }
                start = end
                continue
            }
            var cut = start + width
            if let space = text[start...cut].lastIndex(of: " "), space > start { cut = space + 1 }
            lines.append(Line(start: start, end: cut))
            start = cut
        }
        return lines
    }

    /// What a click at (x, y) is on.
    enum Hit: Equatable {
        case circle(String)
        case title(String)
        case memo(String)
        /// The rows below the last item (T9), or "No reminders" (T8).
        case belowList
    }

    func hit(x: Int, y: Int, model: TodoScreenModel) -> Hit? {
        guard y >= listTop, y < listTop + listHeight else { return nil }
        let row = y - listTop + model.scroll
        for block in blocks(model) where row >= block.top && row < block.top + block.height {
            if row >= block.memoTop { return .memo(block.item.id) }
            if row == block.top, x >= Self.circleColumn - 1, x <= Self.circleColumn + 1 { return .circle(block.item.id) }
            return .title(block.item.id)
        }
        return .belowList
    }

    /// The scroll that keeps `id`'s block in view, starting from `scroll`.
    func scroll(toShow id: String?, from scroll: Int, model: TodoScreenModel) -> Int {
        let blocks = blocks(model)
        let total = blocks.last.map { $0.top + $0.height } ?? 0
        var scroll = min(scroll, max(0, total - listHeight))
        guard let id, let block = blocks.first(where: { $0.item.id == id }) else { return max(0, scroll) }
        if block.top < scroll { scroll = block.top }
        if block.top + block.height > scroll + listHeight { scroll = min(block.top, block.top + block.height - listHeight) }
        if block.height > listHeight, let editor = model.editor, editor.item == id {
            // A long text being edited: follow the cursor's line.
            let lines = editor.field == .title ? block.titleLines : block.memoLines
            let offset = editor.field == .title ? block.top : block.memoTop
            let cursor = editor.cursor
            if let line = lines.firstIndex(where: { cursor >= $0.start && cursor < max($0.end, $0.start + 1) }) ?? lines.indices.last {
                let row = offset + line
                if row < scroll { scroll = row }
                if row >= scroll + listHeight { scroll = row - listHeight + 1 }
            }
        }
        return max(0, scroll)
    }
}
