import BoardCRDT

/// Everything the reminders screen shows (TV1-TV6), and nothing it does:
/// `TodoController` changes it, `TodoLayout` places it, `TodoScreen` draws it.
struct TodoScreenModel: Equatable, Sendable {
    let boardName: String
    /// The person's `--name` (nil: a guest).
    let me: String?
    var connection: ConnectionState = .connecting
    var clients: Int?
    var names: [String] = []
    var version: UInt64 = 0
    /// The visible items in order, as the local replica has them.
    var items: [TodoList.Item] = []
    /// Who else edits which item (TV3), from the state frame's `editing`.
    var othersEditing: [String: String] = [:]
    /// The item the arrow keys are on.
    var selected: String?
    /// The field being edited in place, if any (TV2).
    var editor: TodoEditor?
    /// The newest notice or refusal, with what happened (TV6).
    var message: String?
    /// A row being dragged by the mouse (TV4).
    var drag: TodoDrag?
    /// The first list row shown (the list scrolls to keep the selection in view).
    var scroll = 0

    init(boardName: String, me: String?) {
        self.boardName = boardName
        self.me = me
    }

    func item(_ id: String) -> TodoList.Item? { items.first { $0.id == id } }

    func index(of id: String) -> Int? { items.firstIndex { $0.id == id } }

    /// The items in the order drawn: while a row is dragged, it sits at its
    /// drop place and the others make room (TV4).
    var shownItems: [TodoList.Item] {
        guard let drag, let from = index(of: drag.item) else { return items }
        var shown = items
        let moving = shown.remove(at: from)
        shown.insert(moving, at: min(max(drag.target, 0), shown.count))
        return shown
    }

    /// TV3: "ana editing", "ana, bo editing" beside an item (nil: nobody else).
    func editorsLabel(of id: String) -> String? {
        let who = othersEditing.filter { $0.value == id }.map(\.key).sorted()
        guard !who.isEmpty else { return nil }
        return who.joined(separator: ", ") + " editing"
    }

    /// T10: a memo shows when it has text, and while its item is edited.
    func showsMemo(of item: TodoList.Item) -> Bool {
        !item.memo.isEmpty || editor?.item == item.id
    }
}

/// A row lifted by the mouse: which item, where it would land among the
/// items, and whether the pointer moved yet (a press without motion is a click).
struct TodoDrag: Equatable, Sendable {
    var item: String
    var target: Int
    var moved = false
    /// Where the button went down, 0-based.
    var startX: Int
    var startY: Int
}
