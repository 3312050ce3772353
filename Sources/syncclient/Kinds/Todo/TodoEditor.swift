import BoardCRDT

/// The text being edited in place (TV2): one field of one item, the cursor
/// in it, and the text the next `edit` is made against (its `base`, TC2).
///
/// The first edit's base is the text when editing started; after each send
/// the base becomes what was sent, so that a later change of one's own is
/// never merged against one's own earlier one (which would resurrect text
/// one deleted). While nothing typed is unsent, the editor follows the
/// shared text: someone else's merged change shows up under the cursor.
struct TodoEditor: Equatable, Sendable {
    let item: String
    var field: TodoList.Field
    private(set) var text: [Character]
    /// 0...text.count: the cursor sits before `text[cursor]`.
    private(set) var cursor: Int
    /// What the next edit is made against (TC2's `base`).
    private(set) var base: String
    /// Ticks (about 50 ms each) since the last keystroke, while something is unsent.
    var quietTicks = 0

    /// Ticks of quiet after which typed text is sent (about 300 ms).
    static let sendAfterTicks = 6

    init(item: String, field: TodoList.Field, text: String) {
        self.item = item
        self.field = field
        self.text = Array(text)
        cursor = self.text.count
        base = text
    }

    var string: String { String(text) }

    /// Typed text not sent yet.
    var isDirty: Bool { string != base }

    // MARK: Typing

    /// Inserts `character` at the cursor; a title takes no line break and
    /// neither field grows past T1's 1,000 characters. False when refused.
    @discardableResult
    mutating func insert(_ character: Character) -> Bool {
        if field == .title, character.isNewline { return false }
        guard text.count < TodoList.maxTextLength else { return false }
        text.insert(character, at: cursor)
        cursor += 1
        quietTicks = 0
        return true
    }

    mutating func backspace() {
        guard cursor > 0 else { return }
        text.remove(at: cursor - 1)
        cursor -= 1
        quietTicks = 0
    }

    mutating func deleteForward() {
        guard cursor < text.count else { return }
        text.remove(at: cursor)
        quietTicks = 0
    }

    mutating func moveLeft() { cursor = max(0, cursor - 1) }
    mutating func moveRight() { cursor = min(text.count, cursor + 1) }
    mutating func moveHome() { cursor = 0 }
    mutating func moveEnd() { cursor = text.count }

    // MARK: Sending and following

    /// The edit to send now (nil when nothing changed); the base moves on to it.
    mutating func takeEdit() -> TodoList.TextEdit? {
        guard isDirty else { return nil }
        let edit = TodoList.TextEdit(string, base: base)
        base = string
        quietTicks = 0
        return edit
    }

    /// The field as the replica shows it now. With nothing unsent, the
    /// editor takes it (keeping the cursor after the same text before it
    /// when the change was elsewhere); with typing unsent, it is left for
    /// the next send to merge.
    mutating func follow(_ shared: String) {
        guard !isDirty, shared != base else { return }
        let old = text
        let new = Array(shared)
        // The common prefix decides: a change before the cursor shifts it.
        var prefix = 0
        while prefix < min(old.count, new.count), old[prefix] == new[prefix] { prefix += 1 }
        if cursor > prefix {
            // The change is before the cursor: keep the distance from the end.
            let fromEnd = old.count - cursor
            cursor = max(prefix, new.count - fromEnd)
        }
        text = new
        cursor = min(cursor, text.count)
        base = shared
    }

    /// Switches to the other field of the same item (its text `shared`).
    mutating func switchTo(_ field: TodoList.Field, text shared: String) {
        self = TodoEditor(item: item, field: field, text: shared)
    }
}
