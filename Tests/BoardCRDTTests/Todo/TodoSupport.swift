import Testing
@testable import BoardCRDT

typealias Reminders = Replica<TodoList>
typealias ReminderOp = Operation<TodoList.Change>

/// A list holding these items in order (titles as given, memo empty, not
/// done), each last written by `by`.
func reminders(_ items: [(id: String, title: String)], by author: String = "") -> TodoList.State {
    TodoList.State(entries: items.map { TodoList.Entry(id: $0.id, title: $0.title, titleBy: author, memoBy: author) })
}

/// `"a1 b2 c3"`: a list whose items are titled by their ids.
func reminders(_ ids: String, by author: String = "") -> TodoList.State {
    reminders(ids.split(separator: " ").map { (String($0), String($0)) }, by: author)
}

/// The visible ids in order, `"a1 n1 c3"`, to keep expectations short.
func idsText(_ state: TodoList.State) -> String { state.items.map(\.id).joined(separator: " ") }
func idsText(_ replica: Reminders) -> String { idsText(replica.state) }

/// A client replica of the list (no compaction, the hub seals its order),
/// whose board starts from `state`.
func listReplica(_ id: UInt64, _ state: TodoList.State? = nil,
                 limits: ReplicaLimits = ReplicaLimits(compacts: false, hubSealsOrder: true)) -> Reminders {
    let checkpoint = Checkpoint<TodoList>(state: state ?? TodoList.initialState, frontier: .origin, versions: VersionVector())
    return Reminders(id: ReplicaID(id), checkpoint: checkpoint, limits: limits)
}

/// The hub's replica as SyncHub runs it: an acknowledged operation is final.
func hubList(_ id: UInt64, _ state: TodoList.State? = nil, keptOperations: Int = 1024) -> Reminders {
    listReplica(id, state, limits: ReplicaLimits(keptOperations: keptOperations, sealsOrder: true))
}

/// Performs an intent that must record an operation and apply it; returns it.
@discardableResult
func act(_ replica: inout Reminders, _ intent: TodoList.Intent, by name: String) throws -> ReminderOp {
    let op = try #require(try replica.perform(intent, by: name), "\(intent) recorded nothing")
    #expect(replica.outcome(of: op.id) == .applied, "\(intent) by \(name) was prepared but not applied")
    return op
}

/// The refusal `intent` meets, or nil if it was accepted (or changed nothing).
func todoRefusal(_ replica: inout Reminders, _ intent: TodoList.Intent, by name: String = "ana") -> TodoRefusal? {
    do {
        try replica.perform(intent, by: name)
        return nil
    } catch {
        return error
    }
}

/// Applies `change` by `author` to `state` outside any replica.
@discardableResult
func applyTodo(_ change: TodoList.Change, by author: String = "ana", to state: inout TodoList.State,
               seq: UInt64 = 1) -> Outcome<TodoRefusal> {
    TodoList.apply(Operation(id: OperationID(replica: ReplicaID(1), seq: seq), lamport: seq, author: author, change: change), to: &state)
}

/// An operation of `change` by `author`, for `notices(of:in:)`.
func reminderOp(_ change: TodoList.Change, by author: String, replica: UInt64 = 1, seq: UInt64 = 1) -> ReminderOp {
    Operation(id: OperationID(replica: ReplicaID(replica), seq: seq), lamport: seq, author: author, change: change)
}

/// Fails the test with every broken invariant of `replica` (engine, kind,
/// and the model's own: every id once, the visible items what the log's
/// applied adds and deletes leave).
func expectTodoInvariants(_ replica: Reminders, sourceLocation: SourceLocation = #_sourceLocation) {
    let problems = replica.checkInvariants() + TodoModel.problems(of: replica)
    #expect(problems.isEmpty, "\(problems)", sourceLocation: sourceLocation)
}

/// Every interleaving of `sequences` that keeps each sequence's own order
/// (the orders a hub may integrate several people's operations in).
func interleavings<T>(_ sequences: [[T]]) -> [[T]] {
    let open = sequences.indices.filter { !sequences[$0].isEmpty }
    guard !open.isEmpty else { return [[]] }
    var out: [[T]] = []
    for index in open {
        var rest = sequences
        let head = rest[index].removeFirst()
        for tail in interleavings(rest) { out.append([head] + tail) }
    }
    return out
}

/// docs/rules/todo.md written again, apart from `TodoList.apply`, on a plain
/// array of entries: what each change should do (T1-T6, TC1-TC6). The unit
/// tests and the fuzzer compare the kind against it, outcome and list.
struct TodoModel: Equatable {
    struct Entry: Equatable {
        var id: String
        var title = "", memo = ""
        var done = false
        var titleBy = "", memoBy = ""
        /// Others whose merged changes are in the text (told on an overwrite too).
        var titleWith: [String] = [], memoWith: [String] = []
        /// Who deleted it (nil while on the list) and the delete's number.
        var deletedBy: String?
        var deletedAt: UInt64 = 0
    }

    var entries: [Entry] = []
    var deletions: UInt64 = 0

    init(_ state: TodoList.State) {
        entries = state.entries.map {
            Entry(id: $0.id, title: $0.title, memo: $0.memo, done: $0.done, titleBy: $0.titleBy, memoBy: $0.memoBy,
                  titleWith: $0.titleWith, memoWith: $0.memoWith, deletedBy: $0.deletedBy, deletedAt: $0.deletedAt)
        }
        deletions = state.deletions
    }

    /// Whether the kind's state says the same, string by string, byte for byte.
    func matches(_ state: TodoList.State) -> Bool {
        guard state.deletions == deletions, state.entries.count == entries.count else { return false }
        for (mine, theirs) in zip(entries, state.entries) {
            guard Array(mine.id.utf8) == Array(theirs.id.utf8), Array(mine.title.utf8) == Array(theirs.title.utf8),
                  Array(mine.memo.utf8) == Array(theirs.memo.utf8), mine.done == theirs.done,
                  mine.titleBy == theirs.titleBy, mine.memoBy == theirs.memoBy,
                  mine.titleWith == theirs.titleWith, mine.memoWith == theirs.memoWith,
                  mine.deletedBy == theirs.deletedBy, mine.deletedAt == theirs.deletedAt else { return false }
        }
        return true
    }

    var visibleIDs: [String] { entries.filter { $0.deletedBy == nil }.map(\.id) }

    /// T1: 1-64 of A-Z a-z 0-9 _ -, checked scalar by scalar.
    static func validID(_ id: String) -> Bool {
        let allowed = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-".unicodeScalars
        return (1...64).contains(id.unicodeScalars.count) && id.unicodeScalars.allSatisfy { allowed.contains($0) }
    }

    static func textRefusal(_ text: String, _ field: TodoList.Field) -> TodoRefusal? {
        if text.count > 1000 { return .tooLong(field, text.count) }
        if field == .title, text.contains(where: { $0.isNewline }) { return .lineBreakInTitle }
        return nil
    }

    static func refusal(_ change: TodoList.Change) -> TodoRefusal? {
        switch change {
        case let .add(id, after, title, memo):
            if !validID(id) { return .badID(id) }
            if let after, !validID(after) { return .badID(after) }
            return textRefusal(title, .title) ?? textRefusal(memo, .memo)
        case let .edit(id, title, memo):
            if !validID(id) { return .badID(id) }
            if title == nil && memo == nil { return .emptyEdit }
            for (edit, field) in [(title, TodoList.Field.title), (memo, .memo)] {
                guard let edit else { continue }
                if let problem = textRefusal(edit.text, field) ?? edit.base.flatMap({ textRefusal($0, field) }) { return problem }
            }
            return nil
        case let .move(id, after):
            if !validID(id) { return .badID(id) }
            if let after, !validID(after) { return .badID(after) }
            return nil
        case let .done(id, _), let .delete(id):
            return validID(id) ? nil : .badID(id)
        }
    }

    /// TC2 on characters: the field's text after `edit`, and whether it
    /// overwrote someone's concurrent change.
    static func merge(_ edit: TodoList.TextEdit, over current: String) -> (text: String, overwrote: Bool) {
        guard let base = edit.base, base != current else { return (edit.text, false) }
        if edit.text == base || edit.text == current { return (current, false) }
        func span(_ base: [Character], _ edited: [Character]) -> (start: Int, end: Int, with: [Character]) {
            let head = zip(base, edited).prefix { $0 == $1 }.count
            let tail = zip(base.reversed(), edited.reversed()).prefix { $0 == $1 }.count
            let cut = min(tail, min(base.count, edited.count) - head)
            return (head, base.count - cut, Array(edited[head..<(edited.count - cut)]))
        }
        let original = Array(base)
        let theirs = span(original, Array(current)), mine = span(original, Array(edit.text))
        guard theirs.end < mine.start || mine.end < theirs.start else { return (edit.text, true) }
        let first = theirs.start < mine.start ? theirs : mine, second = theirs.start < mine.start ? mine : theirs
        let merged = String(original[..<first.start] + first.with + original[first.end..<second.start] + second.with
            + original[second.end...])
        return merged.count > 1000 ? (edit.text, true) : (merged, false)
    }

    /// What `change` by `author` does (and does to the model).
    mutating func apply(_ change: TodoList.Change, by author: String) -> Outcome<TodoRefusal> {
        if let problem = Self.refusal(change) { return .refused(problem) }
        func live(_ id: String) -> Result<Int, TodoRefusal> {
            guard let index = entries.firstIndex(where: { $0.id == id }) else { return .failure(.noSuchItem(id, deletedBy: nil)) }
            if let by = entries[index].deletedBy { return .failure(.noSuchItem(id, deletedBy: by)) }
            return .success(index)
        }
        func known(_ id: String?) -> Bool { id.map { id in entries.contains { $0.id == id } } ?? true }
        func slot(after anchor: String?) -> Int { anchor.flatMap { id in entries.firstIndex { $0.id == id } }.map { $0 + 1 } ?? 0 }
        switch change {
        case let .add(id, after, title, memo):
            if entries.contains(where: { $0.id == id }) { return .refused(.duplicateID(id)) }
            if !known(after) { return .refused(.noSuchItem(after ?? "", deletedBy: nil)) }
            entries.insert(Entry(id: id, title: title, memo: memo, titleBy: author, memoBy: author), at: slot(after: after))
            return .applied
        case let .edit(id, title, memo):
            switch live(id) {
            case let .failure(refusal): return .refused(refusal)
            case let .success(index):
                var entry = entries[index]
                // Who is in a field's text: a true merge of two changes keeps
                // the last author among the others; anything else resets them.
                func write(_ edit: TodoList.TextEdit, _ text: inout String, _ by: inout String, _ with: inout [String]) {
                    let (result, overwrote) = Self.merge(edit, over: text)
                    guard result != text else { return }
                    if !overwrote, let base = edit.base, base != text {
                        var others = with.filter { $0 != author }
                        if !by.isEmpty, by != author, !others.contains(by) { others.append(by) }
                        with = Array(others.suffix(8))
                    } else {
                        with = []
                    }
                    (text, by) = (result, author)
                }
                if let title { write(title, &entry.title, &entry.titleBy, &entry.titleWith) }
                if let memo { write(memo, &entry.memo, &entry.memoBy, &entry.memoWith) }
                if entry == entries[index] { return .unchanged }
                entries[index] = entry
                return .applied
            }
        case let .done(id, done):
            switch live(id) {
            case let .failure(refusal): return .refused(refusal)
            case let .success(index):
                if entries[index].done == done { return .unchanged }
                entries[index].done = done
                return .applied
            }
        case let .move(id, after):
            if after == id { return .refused(.afterItself(id)) }
            switch live(id) {
            case let .failure(refusal): return .refused(refusal)
            case let .success(index):
                if !known(after) { return .refused(.noSuchItem(after ?? "", deletedBy: nil)) }
                // A change when the item's place among all entries moves,
                // even unseen: crossing a tombstone changes where later
                // adds after the deleted item land (TC5).
                let entry = entries.remove(at: index)
                let target = slot(after: after)
                entries.insert(entry, at: target)
                return target == index ? .unchanged : .applied
            }
        case let .delete(id):
            switch live(id) {
            case let .failure(refusal): return .refused(refusal)
            case let .success(index):
                deletions += 1
                entries[index].deletedBy = author
                entries[index].deletedAt = deletions
                // A tombstone keeps who deleted it and its place, no text (T6).
                entries[index].title = ""
                entries[index].memo = ""
                entries[index].done = false
                entries[index].titleBy = ""
                entries[index].memoBy = ""
                entries[index].titleWith = []
                entries[index].memoWith = []
                // Only the newest `tombstonesKept` tombstones stay.
                let tombstones = entries.filter { $0.deletedBy != nil }.map(\.deletedAt).sorted()
                if tombstones.count > TodoList.tombstonesKept {
                    let oldest = Set(tombstones.prefix(tombstones.count - TodoList.tombstonesKept))
                    entries.removeAll { $0.deletedBy != nil && oldest.contains($0.deletedAt) }
                }
                return .applied
            }
        }
    }

    /// Who gets told that `change` by `author` overwrote their text (TC2).
    func notices(of change: TodoList.Change, by author: String) -> [(to: String, field: TodoList.Field, text: String)] {
        guard case let .edit(id, title, memo) = change, Self.refusal(change) == nil,
              let entry = entries.first(where: { $0.id == id && $0.deletedBy == nil }) else { return [] }
        var out: [(String, TodoList.Field, String)] = []
        func tell(_ people: [String], _ field: TodoList.Field, _ text: String) {
            var told: [String] = []
            for person in people where !person.isEmpty && person != author && !told.contains(person) {
                told.append(person)
                out.append((person, field, text))
            }
        }
        if let title, case let (text, true) = Self.merge(title, over: entry.title) { tell([entry.titleBy] + entry.titleWith, .title, text) }
        if let memo, case let (text, true) = Self.merge(memo, over: entry.memo) { tell([entry.memoBy] + entry.memoWith, .memo, text) }
        return out
    }

    /// Independent checks of one replica: every id once; the visible items
    /// are the checkpoint's, plus the log's applied adds, less its applied
    /// deletes (nothing lost that was not deleted, nothing back that was).
    static func problems(of replica: Reminders) -> [String] {
        var problems: [String] = []
        var seen = Set<String>()
        for entry in replica.state.entries where !seen.insert(entry.id).inserted { problems.append("\(entry.id) is on the list twice") }
        var live = Set(replica.checkpoint.state.items.map(\.id))
        for (op, outcome) in zip(replica.log, replica.outcomes) where outcome == .applied {
            switch op.change {
            case let .add(id, _, _, _): live.insert(id)
            case let .delete(id): live.remove(id)
            default: break
            }
        }
        let shown = replica.state.items.map(\.id)
        if Set(shown) != live || shown.count != live.count {
            problems.append("shows \(shown.sorted()), the applied adds and deletes leave \(live.sorted())")
        }
        for item in replica.state.items {
            if !validID(item.id) { problems.append("\(item.id) is not a valid id") }
            if item.title.count > 1000 || item.memo.count > 1000 || item.title.contains(where: \.isNewline) {
                problems.append("\(item.id)'s texts break T1")
            }
        }
        return problems
    }
}
