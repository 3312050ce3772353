import BoardCRDT
import SyncWire

typealias TodoAction = ScreenAction<TodoList.Intent>

/// The reminders list as a state machine (T8-T10, TV1-TV6): the link's
/// snapshots, keys, mouse reports, resizes and ticks in; intents to send,
/// redraws and quit out. No I/O: tests drive it without a terminal.
///
/// Edits are sent after a short quiet spell while typing (about 300 ms of
/// ticks) and when editing of the field ends, each with its `base` (see
/// `TodoEditor`). Which item is being edited is `editingItem`: the session
/// sends it as presence (`editing`) whenever it changes and after a reconnect.
struct TodoController: Sendable {
    var model: TodoScreenModel
    private(set) var width: Int
    private(set) var height: Int
    /// An intent was just sent: the next snapshot's refusal is its answer
    /// even when it reads like the one before.
    private var justSent = false
    /// The board as last seen (for who deleted an item, T6).
    private var board = TodoList.initialState

    init(boardName: String, name: String?, width: Int, height: Int) {
        model = TodoScreenModel(boardName: boardName, me: name)
        self.width = width
        self.height = height
    }

    /// Ticks run while typed text waits to be sent.
    var isAnimating: Bool { model.editor?.isDirty == true }

    /// The item this person edits now: presence for the others (TV3).
    var editingItem: String? { model.editor?.item }

    var layout: TodoLayout { TodoLayout(width: width, height: height) }

    func render(colour: ColourMode) -> [String] {
        TodoScreen.render(model, layout: layout, colour: colour)
    }

    mutating func react(to event: ScreenEvent<TodoList>) -> [TodoAction] {
        let before = model
        var actions: [TodoAction] = []
        switch event {
        case let .snapshot(snapshot, previous):
            actions += update(snapshot, previous: previous)
        case let .input(.key(key)):
            actions += handle(key: key)
        case let .input(.mouse(mouse)):
            actions += handle(mouse: mouse)
        case let .resize(newWidth, newHeight):
            width = newWidth
            height = newHeight
            actions.append(.redraw)
        case .picture:
            break  // this kind shows no pictures
        case .tick:
            if var editor = model.editor, editor.isDirty {
                editor.quietTicks += 1
                model.editor = editor
                if editor.quietTicks >= TodoEditor.sendAfterTicks { actions += sendEdit() }
            }
        }
        model.scroll = layout.scroll(toShow: model.editor?.item ?? model.selected, from: model.scroll, model: model)
        if actions.contains(where: { if case .send = $0 { true } else { false } }) { justSent = true }
        if model != before, !actions.contains(.redraw) { actions.append(.redraw) }
        if let quit = actions.firstIndex(of: .quit) {
            actions.remove(at: quit)
            actions.append(.quit)
        }
        return actions
    }

    // MARK: The link's news

    private mutating func update(_ snapshot: LinkSnapshot<TodoList>, previous: LinkSnapshot<TodoList>?) -> [TodoAction] {
        model.connection = snapshot.state
        model.clients = snapshot.clients
        model.names = snapshot.names
        model.version = snapshot.version
        let oldItems = model.items
        board = snapshot.board
        model.items = snapshot.board.items
        model.othersEditing = snapshot.editing.filter { $0.key != model.me }
        if let refusal = snapshot.refusal, refusal != previous?.refusal || justSent {
            model.message = refusal
        }
        justSent = false
        var actions: [TodoAction] = []
        if let editor = model.editor {
            if let item = model.item(editor.item) {
                model.editor?.follow(editor.field == .title ? item.title : item.memo)
            } else {
                // Deleted while being edited (TC3): what was typed goes to the
                // hub anyway, whose refusal tells who deleted it. (An add is
                // applied locally before any snapshot, so a new item is never
                // missing here unless it was refused.)
                if editor.isDirty, board.deleter(of: editor.item) != nil {
                    actions += sendEdit()
                } else if let who = board.deleter(of: editor.item) {
                    model.message = Self.deletedMessage(by: who)
                }
                model.editor = nil
            }
        }
        if let drag = model.drag, model.item(drag.item) == nil { model.drag = nil }
        if let selected = model.selected, model.item(selected) == nil {
            // Keep the selection near where it was.
            let old = oldItems.firstIndex { $0.id == selected } ?? 0
            let survivors = oldItems[..<min(old, oldItems.count)].reversed().first { model.item($0.id) != nil }
            model.selected = survivors?.id ?? model.items.first?.id
            if model.editor?.item == selected { model.selected = selected }
        }
        if model.selected == nil { model.selected = model.items.first?.id }
        return actions
    }

    static func deletedMessage(by who: String?) -> String {
        ScreenModel.refusalText(code: "no_such_item",
                                message: (who ?? "").isEmpty ? "someone deleted this reminder" : "\(who ?? "") deleted this reminder")
    }

    // MARK: Keys (TV2, TV5)

    mutating func handle(key: Key) -> [TodoAction] {
        if model.editor != nil { return handleEditing(key: key) }
        model.drag = nil
        let index = model.selected.flatMap { model.index(of: $0) }
        switch key {
        case .character("q"), .character("Q"), .control("c"), .control("d"):
            return [.quit]
        case .up, .character("k"):
            if let index, index > 0 { model.selected = model.items[index - 1].id }
        case .down, .character("j"):
            if let index, index + 1 < model.items.count { model.selected = model.items[index + 1].id }
        case .home:
            model.selected = model.items.first?.id
        case .end:
            model.selected = model.items.last?.id
        case .enter:
            // T8: on "No reminders" Enter adds the first item.
            guard let id = model.selected, model.item(id) != nil else { return add(after: nil) }
            startEditing(id, field: .title)
        case .tab:
            if let id = model.selected, model.item(id) != nil { startEditing(id, field: .memo) }
        case .character(" "):
            // T4, T10: the absolute value, never a toggle on the wire.
            guard let id = model.selected, let item = model.item(id) else { return [] }
            model.message = nil
            return [.send(.done(id: id, done: !item.done))]
        case .character("d"), .character("D"), .delete:
            guard let id = model.selected, model.item(id) != nil else { return [] }
            model.message = nil
            return [.send(.delete(id: id))]
        case .character("a"), .character("A"):
            return add(after: model.items.last?.id)
        default:
            break
        }
        return []
    }

    private mutating func handleEditing(key: Key) -> [TodoAction] {
        guard var editor = model.editor else { return [] }
        switch key {
        case .control("c"), .control("d"):
            return finishEditing() + [.quit]
        case .escape:
            return finishEditing()
        case let .character(character):
            editor.insert(character)
        case .backspace:
            editor.backspace()
        case .delete:
            editor.deleteForward()
        case .left:
            editor.moveLeft()
        case .right:
            editor.moveRight()
        case .home, .control("a"):
            editor.moveHome()
        case .end, .control("e"):
            editor.moveEnd()
        case .enter where editor.field == .memo:
            editor.insert("\n")
        case .enter:
            // T9: a new item right after this one, cursor in its title; on
            // an empty title Return just ends (and so removes) it.
            model.editor = editor
            let id = editor.item
            if editor.text.isEmpty { return finishEditing() }
            let finished = finishEditing()
            // The add goes first: the snapshot after each send must already
            // hold the item now being edited.
            return add(after: id) + finished
        case .tab, .backTab:
            return switchField(to: editor.field == .title ? .memo : .title)
        case .down where editor.field == .title:
            return switchField(to: .memo)
        case .up where editor.field == .memo:
            return switchField(to: .title)
        case .up, .down:
            // Arrowing off the item ends the edit (TV2) and moves on.
            let id = editor.item
            model.editor = editor
            let actions = finishEditing()
            if let index = model.index(of: id) {
                let next = key == .up ? index - 1 : index + 1
                if model.items.indices.contains(next) { model.selected = model.items[next].id }
            }
            return actions
        default:
            break
        }
        model.editor = editor
        return []
    }

    // MARK: Mouse (TV4, T9, T10)

    mutating func handle(mouse: MouseEvent) -> [TodoAction] {
        switch mouse.action {
        case .press:
            guard mouse.button == .left else { return [] }
            let hit = layout.hit(x: mouse.x, y: mouse.y, model: model)
            switch hit {
            case let .title(id)?, let .memo(id)?:
                if model.editor == nil, let index = model.index(of: id) {
                    // Maybe the start of a drag: decided by motion.
                    model.drag = TodoDrag(item: id, target: index, startX: mouse.x, startY: mouse.y)
                    return []
                }
                return click(hit)
            default:
                return click(hit)
            }
        case .motion:
            guard var drag = model.drag else { return [] }
            if !drag.moved, mouse.y == drag.startY { return [] }
            drag.moved = true
            model.selected = drag.item
            // The row under the pointer: the dragged one takes its place (others make room).
            let row = mouse.y - layout.listTop + model.scroll
            let blocks = layout.blocks(model)
            if let under = blocks.firstIndex(where: { row >= $0.top && row < $0.top + $0.height }) {
                drag.target = under
            } else if row < 0 {
                drag.target = 0
            } else if let last = blocks.last, row >= last.top + last.height {
                drag.target = blocks.count - 1
            }
            model.drag = drag
            return []
        case .release:
            guard let drag = model.drag else { return [] }
            model.drag = nil
            guard drag.moved else {
                let hit = layout.hit(x: drag.startX, y: drag.startY, model: model)
                return click(hit)
            }
            return drop(drag)
        }
    }

    /// T5, TV4: the dragged item goes after the one now shown above it.
    private mutating func drop(_ drag: TodoDrag) -> [TodoAction] {
        guard let from = model.index(of: drag.item) else { return [] }
        var shown = model.items
        let moving = shown.remove(at: from)
        let target = min(max(drag.target, 0), shown.count)
        shown.insert(moving, at: target)
        guard target != from else { return [] }
        let after = target > 0 ? shown[target - 1].id : nil
        model.message = nil
        model.selected = drag.item
        return [.send(.move(id: drag.item, after: after))]
    }

    private mutating func click(_ hit: TodoLayout.Hit?) -> [TodoAction] {
        switch hit {
        case let .circle(id)?:
            guard let item = model.item(id) else { return [] }
            model.selected = id
            model.message = nil
            return [.send(.done(id: id, done: !item.done))]
        case let .title(id)?, let .memo(id)?:
            let field: TodoList.Field = if case .memo? = hit { .memo } else { .title }
            if let editor = model.editor, editor.item == id {
                return editor.field == field ? [] : switchField(to: field)
            }
            let actions = finishEditing()
            guard model.item(id) != nil else { return actions }
            startEditing(id, field: field)
            return actions
        case .belowList?:
            // Clicking elsewhere ends an edit (TV2); with none, T8 / T9 add one.
            if model.editor != nil { return finishEditing() }
            return add(after: model.items.last?.id)
        case nil:
            return model.editor != nil ? finishEditing() : []
        }
    }

    // MARK: Editing

    private mutating func startEditing(_ id: String, field: TodoList.Field) {
        guard let item = model.item(id) else { return }
        model.selected = id
        model.message = nil
        model.editor = TodoEditor(item: id, field: field, text: field == .title ? item.title : item.memo)
    }

    /// The typed text of the field, as an edit with its base (nil: nothing new).
    private mutating func sendEdit() -> [TodoAction] {
        guard var editor = model.editor, let edit = editor.takeEdit() else { return [] }
        model.editor = editor
        let intent: TodoList.Intent = editor.field == .title ? .edit(id: editor.item, title: edit, memo: nil)
                                                             : .edit(id: editor.item, title: nil, memo: edit)
        return [.send(intent)]
    }

    private mutating func switchField(to field: TodoList.Field) -> [TodoAction] {
        let actions = sendEdit()
        guard let editor = model.editor else { return actions }
        let shared = model.item(editor.item).map { field == .title ? $0.title : $0.memo } ?? ""
        model.editor?.switchTo(field, text: shared)
        return actions
    }

    /// Ends the edit: what was typed is sent; T9: an item whose title is
    /// empty now is deleted.
    mutating func finishEditing() -> [TodoAction] {
        guard let editor = model.editor else { return [] }
        var actions = sendEdit()
        let title = editor.field == .title ? editor.string : model.item(editor.item)?.title ?? ""
        model.editor = nil
        model.selected = editor.item
        if title.isEmpty, model.item(editor.item) != nil {
            actions.append(.send(.delete(id: editor.item)))
        }
        return actions
    }

    /// T2, T8, T9: a new item after `after` (nil: first), cursor in its
    /// title. The id is made here so the item can be edited at once.
    private mutating func add(after: String?) -> [TodoAction] {
        let id = Self.newID(avoiding: board)
        model.message = nil
        model.selected = id
        model.editor = TodoEditor(item: id, field: .title, text: "")
        return [.send(.add(id: id, after: after, title: "", memo: ""))]
    }

    /// 8 of A-Z a-z 0-9 that the list does not know (T2).
    static func newID(avoiding state: TodoList.State) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        while true {
            let id = String((0..<TodoList.madeUpIDLength).map { _ in alphabet[Int.random(in: 0..<alphabet.count)] })
            if state.item(id) == nil, state.deleter(of: id) == nil { return id }
        }
    }
}
