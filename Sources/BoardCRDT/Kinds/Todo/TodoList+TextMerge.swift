/// TC2: concurrent edits of one field. Each edit is reduced to the span of
/// its base it changed (what is left after the common prefix and suffix);
/// two changes to separate spans both survive, otherwise the edit later in
/// the total order wins and the earlier author is told (`notices`).
extension TodoList {
    /// What an edit of a field does to its current text.
    enum FieldMerge: Equatable {
        /// The field becomes `text` with nothing of anyone's lost.
        case merged(String)
        /// The field becomes `text`, overwriting a concurrent change by the
        /// field's last author.
        case overwrote(String)
    }

    /// Others whose merged changes a field's text keeps, told with its last
    /// author when an edit overwrites it: at most this many are remembered.
    static let sharedAuthorsKept = 8

    /// Applies `edit` to `current` (last set by `by`, with the merged
    /// changes of `with` in it), made by `author`.
    static func merge(_ edit: TextEdit, into current: inout String, by: inout String, with: inout [String], author: String) {
        let result = resolve(edit, current: current)
        switch result {
        case let .merged(text), let .overwrote(text):
            guard text != current else { return }
            if case .merged = result, let base = edit.base, base != current {
                // Two people's changes both in the text: both are told if a
                // later edit overwrites it (TC2, nothing lost silently).
                var shared = with.filter { $0 != author }
                if !by.isEmpty, by != author, !shared.contains(by) { shared.append(by) }
                with = Array(shared.suffix(sharedAuthorsKept))
            } else {
                with = []
            }
            current = text
            by = author
        }
    }

    /// The text a field gets from `edit`.
    static func resolved(_ edit: TextEdit, current: String) -> String {
        switch resolve(edit, current: current) {
        case let .merged(text), let .overwrote(text): text
        }
    }

    /// The text a field gets from `edit` (T3, TC2).
    static func resolve(_ edit: TextEdit, current: String) -> FieldMerge {
        // Without a base, or over the text its editor saw, an edit replaces.
        guard let base = edit.base, base != current else { return .merged(edit.text) }
        // Someone changed the field since this editor's base; this edit
        // changes nothing, or makes the same change: keep theirs.
        if edit.text == base || edit.text == current { return .merged(current) }
        let baseCharacters = Array(base)
        let theirs = Array(current)
        let mine = Array(edit.text)
        let their = changedSpan(from: baseCharacters, to: theirs)
        let my = changedSpan(from: baseCharacters, to: mine)
        // Separate places: strictly apart, so two inserts at one point, or
        // touching replacements, count as the same place.
        let apart = their.end < my.start || my.end < their.start
        guard apart else { return .overwrote(edit.text) }
        let (first, second) = their.start < my.start ? (their, my) : (my, their)
        var merged: [Character] = []
        merged.reserveCapacity(theirs.count + mine.count)
        merged += baseCharacters[0..<first.start]
        merged += first.replacement
        merged += baseCharacters[first.end..<second.start]
        merged += second.replacement
        merged += baseCharacters[second.end...]
        let text = String(merged)
        // Both changes cannot fit in one field: the later still wins.
        guard text.count <= maxTextLength else { return .overwrote(edit.text) }
        return .merged(text)
    }

    /// The span of `base` that `edited` replaced, and what replaced it.
    struct Span {
        var start: Int
        var end: Int
        var replacement: ArraySlice<Character>
    }

    static func changedSpan(from base: [Character], to edited: [Character]) -> Span {
        var prefix = 0
        let shorter = min(base.count, edited.count)
        while prefix < shorter, base[prefix] == edited[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < shorter - prefix, base[base.count - 1 - suffix] == edited[edited.count - 1 - suffix] { suffix += 1 }
        return Span(start: prefix, end: base.count - suffix, replacement: edited[prefix..<(edited.count - suffix)])
    }

    /// K9 notices: applying `operation` to `state` overwrites someone
    /// else's acknowledged text (TC2 without a merge): that author is told
    /// which item, which field and the text that won.
    public static func notices(of operation: Operation<Change>, in state: State) -> [KindNotice] {
        guard case let .edit(id, title, memo) = operation.change, problem(with: operation.change) == nil,
              case let .success(index) = state.liveIndex(of: id) else { return [] }
        let entry = state.entries[index]
        var notices: [KindNotice] = []
        for (field, edit, current, authors) in [(Field.title, title, entry.title, [entry.titleBy] + entry.titleWith),
                                                (.memo, memo, entry.memo, [entry.memoBy] + entry.memoWith)] {
            guard let edit, case let .overwrote(text) = resolve(edit, current: current) else { continue }
            let who = operation.author.isEmpty ? "someone" : operation.author
            var told: [String] = []
            for author in authors where !author.isEmpty && author != operation.author && !told.contains(author) {
                told.append(author)
                notices.append(KindNotice(
                    to: author, code: "overwritten",
                    message: "\(who) changed this reminder's \(field.rawValue) at the same time; it now reads \"\(text.prefix(80))\"",
                    item: id, field: field.rawValue, text: text))
            }
        }
        return notices
    }
}
