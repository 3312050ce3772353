/// The shared reminders list (docs/rules/todo.md): several people add, edit,
/// tick, move and delete items of one list at once. The fourth `BoardKind`.
///
/// Positions are anchors: an item is placed right after another item (or
/// first), and a deleted item stays in the order as a hidden tombstone, so an
/// item placed after it concurrently lands where it was (TC5) and each
/// person's run of adds stays together (TC1). Replayed in the total order,
/// the later move wins (TC4), a delete beats what follows it (TC3), `done`
/// is absolute (TC6), and edits that carry their base merge by the span
/// each changed (TC2, `TodoList+TextMerge.swift`).
public enum TodoList: BoardKind {
    public static let name = "todo"
    /// T1: the longest title or memo, in characters.
    public static let maxTextLength = 1000
    /// T1: the longest item id.
    public static let maxIDLength = 64
    /// Deleted items kept as anchors (TC5) and for "ana deleted this
    /// reminder" (T6); the oldest beyond this are dropped, which bounds the
    /// state. An add or move after a dropped one is refused `no_such_item`.
    public static let tombstonesKept = 1000
    /// T8: at most this many items on a list, and this many bytes (UTF-8)
    /// of titles and memos over all of them: a state stays under about
    /// 1.2 MB however it is filled (docs/rules/todo.md "Limits").
    public static let maxItems = 2000
    public static let maxTextBytes = 1 << 20
    /// The length of ids the list makes up when the client names none (T2).
    public static let madeUpIDLength = 8

    /// What a person does (T2-T6).
    public enum Intent: Equatable, Sendable {
        /// T2: `id` nil lets the list make one up (reported in the ack).
        case add(id: String?, after: String?, title: String, memo: String)
        /// T3: at least one of `title` and `memo`.
        case edit(id: String, title: TextEdit?, memo: TextEdit?)
        case done(id: String, done: Bool)
        case move(id: String, after: String?)
        case delete(id: String)
    }

    /// What travels: the intent with its id settled (an add always names its item).
    public enum Change: Equatable, Sendable {
        case add(id: String, after: String?, title: String, memo: String)
        case edit(id: String, title: TextEdit?, memo: TextEdit?)
        case done(id: String, done: Bool)
        case move(id: String, after: String?)
        case delete(id: String)

        /// The item the change is about.
        public var itemID: String {
            switch self {
            case let .add(id, _, _, _), let .edit(id, _, _), let .done(id, _), let .move(id, _), let .delete(id): id
            }
        }
    }

    /// A field's new text and, for merging (TC2), the text its editor started from.
    public struct TextEdit: Equatable, Sendable {
        public var text: String
        public var base: String?
        public init(_ text: String, base: String? = nil) {
            self.text = text
            self.base = base
        }
    }

    /// The two text fields of an item.
    public enum Field: String, Codable, Equatable, Sendable, CaseIterable {
        case title, memo
    }

    public static var initialState: State { State() }

    public static func prepare(_ intent: Intent, by author: String = "", in state: State) throws(TodoRefusal) -> Change? {
        let change: Change
        switch intent {
        case let .add(id?, after, title, memo):
            change = .add(id: id, after: after, title: title, memo: memo)
        case let .add(nil, after, title, memo):
            // T2, K15: the only randomness, drawn here and recorded.
            change = .add(id: madeUpID(avoiding: state), after: after, title: title, memo: memo)
        case let .edit(id, title, memo): change = .edit(id: id, title: title, memo: memo)
        case let .done(id, done): change = .done(id: id, done: done)
        case let .move(id, after): change = .move(id: id, after: after)
        case let .delete(id): change = .delete(id: id)
        }
        // The rules are the same checks `apply` makes where the change
        // lands, made without copying the list (`outcome(of:in:)`).
        switch outcome(of: change, in: state) {
        case .applied: return change
        case .unchanged: return nil
        case let .refused(refusal): throw refusal
        }
    }

    /// What `apply` would answer, read-only: the list is not copied (a
    /// prepare on a list of 10,000 items costs a lookup, not a copy).
    static func outcome(of change: Change, in state: State) -> Outcome<TodoRefusal> {
        if let problem = problem(with: change) { return .refused(problem) }
        switch change {
        case let .add(id, after, title, memo):
            if state.index(of: id) != nil { return .refused(.duplicateID(id)) }
            if case let .failure(refusal) = state.position(after: after) { return .refused(refusal) }
            if let full = fullness(adding: title.utf8.count + memo.utf8.count, items: 1, to: state) { return .refused(full) }
            return .applied
        case let .edit(id, title, memo):
            switch state.liveIndex(of: id) {
            case let .success(index):
                let entry = state.entries[index]
                let newTitle = title.map { resolved($0, current: entry.title) } ?? entry.title
                let newMemo = memo.map { resolved($0, current: entry.memo) } ?? entry.memo
                guard newTitle != entry.title || newMemo != entry.memo else { return .unchanged }
                let growth = newTitle.utf8.count + newMemo.utf8.count - entry.title.utf8.count - entry.memo.utf8.count
                if growth > 0, let full = fullness(adding: growth, items: 0, to: state) { return .refused(full) }
                return .applied
            case let .failure(refusal): return .refused(refusal)
            }
        case let .done(id, done):
            switch state.liveIndex(of: id) {
            case let .success(index): return state.entries[index].done == done ? .unchanged : .applied
            case let .failure(refusal): return .refused(refusal)
            }
        case let .move(id, after):
            if after == id { return .refused(.afterItself(id)) }
            let index: Int
            switch state.liveIndex(of: id) {
            case let .success(found): index = found
            case let .failure(refusal): return .refused(refusal)
            }
            switch state.position(after: after) {
            // Where it lands once taken out: unchanged when that is where it is.
            case let .success(position): return (position > index ? position - 1 : position) == index ? .unchanged : .applied
            case let .failure(refusal): return .refused(refusal)
            }
        case let .delete(id):
            if case let .failure(refusal) = state.liveIndex(of: id) { return .refused(refusal) }
            return .applied
        }
    }

    public static func apply(_ operation: Operation<Change>, to state: inout State) -> Outcome<TodoRefusal> {
        apply(operation.change, by: operation.author, to: &state)
    }

    /// T8: why adding `items` items and `bytes` bytes of text would pass the
    /// list's limits, or nil. Judged where the change lands in the order
    /// (like every rule), so every replica refuses the same one.
    static func fullness(adding bytes: Int, items: Int, to state: State) -> TodoRefusal? {
        if items > 0, state.entries.count - state.tombstones + items > maxItems { return .listFull(items: true) }
        var text = bytes
        for entry in state.entries where !entry.isDeleted { text += entry.title.utf8.count + entry.memo.utf8.count }
        return text > maxTextBytes ? .listFull(items: false) : nil
    }

    static func apply(_ change: Change, by author: String, to state: inout State) -> Outcome<TodoRefusal> {
        // A change from a peer is input like any other: malformed ones are
        // refused here too, never trusted.
        if let problem = problem(with: change) { return .refused(problem) }
        switch change {
        case let .add(id, after, title, memo):
            // T2: ids are never reused while the board remembers them.
            if state.index(of: id) != nil { return .refused(.duplicateID(id)) }
            let position: Int
            switch state.position(after: after) {
            case let .success(index): position = index
            case let .failure(refusal): return .refused(refusal)
            }
            if let full = fullness(adding: title.utf8.count + memo.utf8.count, items: 1, to: state) { return .refused(full) }
            state.entries.insert(Entry(id: id, title: title, memo: memo, titleBy: author, memoBy: author), at: position)
            return .applied
        case let .edit(id, title, memo):
            let index: Int
            switch state.liveIndex(of: id) {
            case let .success(found): index = found
            case let .failure(refusal): return .refused(refusal)
            }
            var entry = state.entries[index]
            if let title { merge(title, into: &entry.title, by: &entry.titleBy, with: &entry.titleWith, author: author) }
            if let memo { merge(memo, into: &entry.memo, by: &entry.memoBy, with: &entry.memoWith, author: author) }
            let before = state.entries[index]
            guard entry.title != before.title || entry.memo != before.memo else { return .unchanged }
            let growth = entry.title.utf8.count + entry.memo.utf8.count - before.title.utf8.count - before.memo.utf8.count
            if growth > 0, let full = fullness(adding: growth, items: 0, to: state) { return .refused(full) }
            state.entries[index] = entry
            return .applied
        case let .done(id, done):
            // T4, TC6: absolute, so two people ticking it leave it ticked.
            switch state.liveIndex(of: id) {
            case let .success(index):
                if state.entries[index].done == done { return .unchanged }
                state.entries[index].done = done
                return .applied
            case let .failure(refusal): return .refused(refusal)
            }
        case let .move(id, after):
            // T5, TC4: replayed in order, the later move wins.
            if after == id { return .refused(.afterItself(id)) }
            let index: Int
            switch state.liveIndex(of: id) {
            case let .success(found): index = found
            case let .failure(refusal): return .refused(refusal)
            }
            if case let .failure(refusal) = state.position(after: after) { return .refused(refusal) }
            let entry = state.entries.remove(at: index)
            guard case let .success(position) = state.position(after: after) else {
                state.entries.insert(entry, at: index)
                return .unchanged
            }
            state.entries.insert(entry, at: position)
            // A move that keeps the order people see can still cross a
            // deleted item's hidden place: that changes where later adds
            // after the deleted item land (TC5), so it counts as a change.
            return position == index ? .unchanged : .applied
        case let .delete(id):
            // T6, TC3: the item stays as a hidden anchor (TC5).
            switch state.liveIndex(of: id) {
            case let .success(index):
                state.deletions += 1
                state.entries[index].deletedBy = author
                state.entries[index].deletedAt = state.deletions
                // Kept only as an anchor (TC5) and to say who deleted it
                // (TC3): its text goes, out of every checkpoint and sync.
                state.entries[index].forgetText()
                state.tombstones += 1
                state.forgetOldTombstones()
                return .applied
            case let .failure(refusal): return .refused(refusal)
            }
        }
    }

    /// T1: what makes a change unreadable, whoever sent it.
    public static func problem(with change: Change) -> TodoRefusal? {
        if !isValidID(change.itemID) { return .badID(change.itemID) }
        switch change {
        case let .add(_, after, title, memo):
            if let after, !isValidID(after) { return .badID(after) }
            return textProblem(title, field: .title) ?? textProblem(memo, field: .memo)
        case let .edit(_, title, memo):
            if title == nil, memo == nil { return .emptyEdit }
            if let title, let problem = textProblem(title.text, field: .title) ?? title.base.flatMap({ textProblem($0, field: .title) }) {
                return problem
            }
            if let memo, let problem = textProblem(memo.text, field: .memo) ?? memo.base.flatMap({ textProblem($0, field: .memo) }) {
                return problem
            }
            return nil
        case let .move(_, after):
            if let after, !isValidID(after) { return .badID(after) }
            return nil
        case .done, .delete:
            return nil
        }
    }

    /// T1: 1-64 of `A-Z a-z 0-9 _ -`.
    public static func isValidID(_ id: String) -> Bool {
        let bytes = id.utf8
        guard !bytes.isEmpty, bytes.count <= maxIDLength else { return false }
        return bytes.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
                || byte == 0x2D
        }
    }

    /// T1: at most 1,000 characters; no line breaks in a title.
    public static func textProblem(_ text: String, field: Field) -> TodoRefusal? {
        if text.utf8.count > maxTextLength, text.count > maxTextLength { return .tooLong(field, text.count) }
        if field == .title, text.contains(where: \.isNewline) { return .lineBreakInTitle }
        return nil
    }

    /// T2: an id nobody on the board uses (8 of A-Z a-z 0-9).
    static func madeUpID(avoiding state: State) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        while true {
            let id = String((0..<madeUpIDLength).map { _ in alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))] })
            if state.index(of: id) == nil { return id }
        }
    }
}

/// Every refusal a person can meet on a reminders list (T1-T6, TC3).
public enum TodoRefusal: KindRefusal, CustomStringConvertible {
    /// `duplicate_id` (T2).
    case duplicateID(String)
    /// `no_such_item` (T6, TC3): `deletedBy` names who deleted it, when known.
    case noSuchItem(String, deletedBy: String?)
    /// `bad_move` (T5): an item cannot go after itself.
    case afterItself(String)
    /// `bad_field` (T1): the id is not 1-64 of A-Z a-z 0-9 _ -.
    case badID(String)
    /// `bad_field` (T1): over 1,000 characters.
    case tooLong(TodoList.Field, Int)
    /// `bad_field` (T1): a title is one line.
    case lineBreakInTitle
    /// `missing_field` (T3): an edit of nothing.
    case emptyEdit
    /// `list_full` (T8): too many items, or too much text.
    case listFull(items: Bool)

    public var code: String {
        switch self {
        case .duplicateID: "duplicate_id"
        case .noSuchItem: "no_such_item"
        case .afterItself: "bad_move"
        case .badID, .tooLong, .lineBreakInTitle: "bad_field"
        case .emptyEdit: "missing_field"
        case .listFull: "list_full"
        }
    }

    public var message: String {
        switch self {
        case let .duplicateID(id): "the id \(id) is already used on this list; pick another (or leave it out)"
        case let .noSuchItem(_, by?) where !by.isEmpty: "\(by) deleted this reminder"
        case let .noSuchItem(_, by?) where by.isEmpty: "someone deleted this reminder"
        case let .noSuchItem(id, _): "there is no reminder \(id)"
        case let .afterItself(id): "\(id) cannot be placed after itself"
        case let .badID(id): "\"\(id.prefix(70))\" is not an id: use 1 to 64 of A-Z a-z 0-9 _ -"
        case let .tooLong(field, count): "the \(field.rawValue) is \(count) characters; at most \(TodoList.maxTextLength)"
        case .lineBreakInTitle: "a title is one line: no line breaks (put more in the memo)"
        case .emptyEdit: "edit needs \"title\" or \"memo\""
        case .listFull(items: true): "the list holds \(TodoList.maxItems) reminders, its most; delete some first"
        case .listFull(items: false):
            "the list's titles and memos would pass \(TodoList.maxTextBytes / 1024) KiB, its most; shorten or delete some first"
        }
    }

    public var description: String { message }
}
