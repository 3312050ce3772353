import Testing
@testable import BoardCRDT

/// docs/rules/todo.md T1-T6 on one replica: the sequential rules every
/// merge replays; plus the bounds (tombstones kept, made-up ids).
@Suite struct TodoRuleTests {
    // MARK: T1 items

    /// T8: a list holds at most `maxItems` reminders and `maxTextBytes` of text.
    @Test func t8AFullListRefusesAnAddAndAnEditThatWouldPassItsLimits() throws {
        var state = reminders((0..<TodoList.maxItems).map { ("i\($0)", "x") })
        #expect(applyTodo(.add(id: "more", after: nil, title: "", memo: ""), to: &state) == .refused(.listFull(items: true)))
        #expect(TodoList.outcome(of: .add(id: "more", after: nil, title: "", memo: ""), in: state) == .refused(.listFull(items: true)))
        #expect(applyTodo(.delete(id: "i0"), to: &state) == .applied)
        #expect(applyTodo(.add(id: "more", after: nil, title: "", memo: ""), to: &state) == .applied, "a deleted item frees its place")
        // Text: 1,000-character titles and memos fill the budget long before 2,000 items.
        let long = String(repeating: "é", count: 1000)     // 2,000 bytes each
        var texts = TodoList.State()
        var added = 0
        while applyTodo(.add(id: "t\(added)", after: nil, title: long, memo: long), to: &texts, seq: UInt64(added + 1)) == .applied {
            added += 1
        }
        #expect(added == TodoList.maxTextBytes / 4000)
        #expect(applyTodo(.add(id: "z", after: nil, title: long, memo: ""), to: &texts) == .refused(.listFull(items: false)))
        #expect(applyTodo(.edit(id: "t0", title: .init("short", base: nil), memo: nil), to: &texts) == .applied,
                "shrinking is always taken")
        #expect(applyTodo(.edit(id: "t0", title: .init(long, base: nil), memo: nil), to: &texts) == .applied, "back within the budget")
        #expect(TodoRefusal.listFull(items: false).code == "list_full")
    }

    @Test func t1AnEmptyListHasNoItemsAndNoViolations() {
        #expect(TodoList.name == "todo")
        #expect(TodoList.initialState.items.isEmpty)
        #expect(TodoList.violations(of: TodoList.initialState).isEmpty)
        #expect(TodoList.violations(of: reminders("a1 b2 c3")).isEmpty)
    }

    @Test(arguments: ["a", "A-z_09", String(repeating: "x", count: 64), "-", "_"])
    func t1IdsOf1To64OfTheAllowedCharactersAreValid(_ id: String) {
        #expect(TodoList.isValidID(id))
        #expect(TodoModel.validID(id))
    }

    @Test(arguments: ["", String(repeating: "x", count: 65), "a b", "a.b", "é", "a/b", "a\n", "🙂", "a\u{0}"])
    func t1OtherIdsAreRefusedBadField(_ id: String) {
        #expect(!TodoList.isValidID(id))
        var list = listReplica(1, reminders("a1"))
        for intent in [TodoList.Intent.add(id: id, after: nil, title: "", memo: ""), .done(id: id, done: true), .delete(id: id),
                       .move(id: id, after: nil), .edit(id: id, title: .init("x"), memo: nil)] {
            let refusal = todoRefusal(&list, intent)
            #expect(refusal == .badID(id), "\(intent)")
            #expect(refusal?.code == "bad_field")
            #expect(refusal?.message.hasSuffix("is not an id: use 1 to 64 of A-Z a-z 0-9 _ -") == true)
        }
        // An anchor is an id too.
        #expect(todoRefusal(&list, .add(id: "n1", after: id, title: "", memo: "")) == .badID(id))
        #expect(todoRefusal(&list, .move(id: "a1", after: id)) == .badID(id))
        #expect(idsText(list) == "a1" && list.log.isEmpty)
    }

    @Test func t1TextsUpTo1000CharactersCountedInCharacters() throws {
        var list = listReplica(1)
        let emoji = String(repeating: "👍🏽", count: 1000) // 8,000 bytes, 2,000 scalars, 1,000 characters
        try act(&list, .add(id: "a1", after: nil, title: emoji, memo: String(repeating: "m", count: 1000)), by: "ana")
        #expect(list.state.item("a1")?.title.count == 1000)
        let long = String(repeating: "x", count: 1001)
        #expect(todoRefusal(&list, .add(id: "b2", after: nil, title: long, memo: "")) == .tooLong(.title, 1001))
        #expect(todoRefusal(&list, .add(id: "b2", after: nil, title: "", memo: long)) == .tooLong(.memo, 1001))
        #expect(todoRefusal(&list, .edit(id: "a1", title: nil, memo: .init(long))) == .tooLong(.memo, 1001))
        #expect(todoRefusal(&list, .edit(id: "a1", title: .init("ok", base: long), memo: nil)) == .tooLong(.title, 1001), "a base too")
        #expect(TodoRefusal.tooLong(.memo, 1001).message == "the memo is 1001 characters; at most 1000")
        #expect(TodoRefusal.tooLong(.memo, 1001).code == "bad_field")
    }

    @Test(arguments: ["two\nlines", "cr\r", "crlf\r\nx", "ls\u{2028}", "nel\u{85}"])
    func t1ATitleIsOneLineAMemoMayHaveSeveral(_ text: String) throws {
        var list = listReplica(1)
        #expect(todoRefusal(&list, .add(id: "a1", after: nil, title: text, memo: "")) == .lineBreakInTitle)
        try act(&list, .add(id: "a1", after: nil, title: "Milk", memo: text), by: "ana")
        #expect(todoRefusal(&list, .edit(id: "a1", title: .init(text), memo: nil)) == .lineBreakInTitle)
        #expect(TodoRefusal.lineBreakInTitle.code == "bad_field")
        #expect(list.state.item("a1")?.memo == text)
    }

    // MARK: T2 add

    @Test func t2AddGoesRightAfterItsAnchorOrFirst() throws {
        var list = listReplica(1)
        try act(&list, .add(id: "b2", after: nil, title: "Bread", memo: ""), by: "ana")
        try act(&list, .add(id: "a1", after: nil, title: "Apples", memo: "green"), by: "ana")
        try act(&list, .add(id: "c3", after: "b2", title: "", memo: ""), by: "bo")
        try act(&list, .add(id: "x", after: "a1", title: "", memo: ""), by: "bo")
        #expect(idsText(list) == "a1 x b2 c3")
        #expect(list.state.item("a1") == TodoList.Item(id: "a1", title: "Apples", memo: "green", done: false))
        #expect(list.state.item("c3") == TodoList.Item(id: "c3"), "title and memo may be empty")
        expectTodoInvariants(list)
    }

    @Test func t2AnAnchorThatNeverExistedIsNoSuchItem() {
        var list = listReplica(1, reminders("a1"))
        let refusal = todoRefusal(&list, .add(id: "n1", after: "zz", title: "", memo: ""))
        #expect(refusal == .noSuchItem("zz", deletedBy: nil))
        #expect(refusal?.code == "no_such_item")
        #expect(refusal?.message == "there is no reminder zz")
    }

    @Test func t2DuplicateIDIsRefusedIncludingADeletedOne() throws {
        var list = listReplica(1, reminders("a1 b2"))
        let live = todoRefusal(&list, .add(id: "a1", after: nil, title: "", memo: ""))
        #expect(live == .duplicateID("a1"))
        #expect(live?.code == "duplicate_id")
        #expect(live?.message == "the id a1 is already used on this list; pick another (or leave it out)")
        try act(&list, .delete(id: "b2"), by: "bo")
        #expect(todoRefusal(&list, .add(id: "b2", after: "a1", title: "again", memo: "")) == .duplicateID("b2"),
                "a deleted item's id is still taken")
        #expect(idsText(list) == "a1")
    }

    @Test func t2MadeUpIDsAreEightOfTheAlphabetValidAndUnique() throws {
        var list = listReplica(1)
        var ids = Set<String>()
        for index in 0..<600 {
            let op = try act(&list, .add(id: nil, after: nil, title: "r\(index)", memo: ""), by: "ana")
            guard case let .add(id, _, _, _) = op.change else { Issue.record("\(op.change)"); return }
            #expect(id.count == TodoList.madeUpIDLength && id.count == 8)
            #expect(id.unicodeScalars.allSatisfy { $0.properties.isASCIIHexDigit || ("A"..."Z").contains($0) || ("a"..."z").contains($0) })
            #expect(TodoList.isValidID(id) && !id.contains("_") && !id.contains("-"))
            #expect(ids.insert(id).inserted, "\(id) made up twice")
            if index % 3 == 0 { try act(&list, .delete(id: id), by: "ana") } // tombstones are avoided too
        }
        // The made-up id is recorded in the change: every replica replays the same id.
        let op = try act(&list, .add(id: nil, after: nil, title: "x", memo: ""), by: "ana")
        var other = listReplica(2)
        other.receive(list.log)
        #expect(other.state == list.state)
        #expect(other.state.item(op.change.itemID) != nil)
        expectTodoInvariants(list)
    }

    // MARK: T3 edit

    @Test func t3EditWithoutBaseReplacesTheField() throws {
        var list = listReplica(1, reminders([("a1", "Milk")], by: "ana"))
        try act(&list, .edit(id: "a1", title: .init("Oat milk"), memo: nil), by: "bo")
        try act(&list, .edit(id: "a1", title: nil, memo: .init("2 litres\nthe cheap one")), by: "bo")
        #expect(list.state.item("a1") == TodoList.Item(id: "a1", title: "Oat milk", memo: "2 litres\nthe cheap one", done: false))
        try act(&list, .edit(id: "a1", title: .init("Soy milk"), memo: .init("")), by: "cy")
        #expect(list.state.item("a1") == TodoList.Item(id: "a1", title: "Soy milk", memo: "", done: false))
        #expect(list.state.entries[0].titleBy == "cy" && list.state.entries[0].memoBy == "cy")
    }

    @Test func t3EditOverTheTextItsEditorSawReplacesIt() throws {
        var list = listReplica(1, reminders([("a1", "Mil")], by: "ana"))
        try act(&list, .edit(id: "a1", title: .init("Milk", base: "Mil"), memo: nil), by: "ana")
        #expect(list.state.item("a1")?.title == "Milk")
    }

    @Test func t3AnEditThatChangesNothingRecordsNothing() throws {
        var list = listReplica(1, reminders("a1"))
        #expect(try list.perform(.edit(id: "a1", title: .init("a1"), memo: nil), by: "ana") == nil)
        #expect(try list.perform(.edit(id: "a1", title: .init("a1", base: "a1"), memo: .init("")), by: "ana") == nil)
        #expect(list.log.isEmpty)
    }

    @Test func t3AnEditOfNeitherFieldIsMissingField() {
        var list = listReplica(1, reminders("a1"))
        let refusal = todoRefusal(&list, .edit(id: "a1", title: nil, memo: nil))
        #expect(refusal == .emptyEdit)
        #expect(refusal?.code == "missing_field")
        #expect(refusal?.message == "edit needs \"title\" or \"memo\"")
    }

    // MARK: T4 done

    @Test func t4DoneIsAbsoluteNeverAToggle() throws {
        var list = listReplica(1, reminders("a1"))
        try act(&list, .done(id: "a1", done: true), by: "ana")
        #expect(list.state.item("a1")?.done == true)
        #expect(try list.perform(.done(id: "a1", done: true), by: "ana") == nil, "sent twice: still done, nothing recorded")
        #expect(list.state.item("a1")?.done == true)
        try act(&list, .done(id: "a1", done: false), by: "bo")
        #expect(list.state.item("a1")?.done == false)
        #expect(try list.perform(.done(id: "a1", done: false), by: "bo") == nil)
        // Replayed out of any context, a `done` change sets the value it carries.
        var state = reminders("a1")
        #expect(applyTodo(.done(id: "a1", done: true), to: &state) == .applied)
        #expect(applyTodo(.done(id: "a1", done: true), to: &state, seq: 2) == .unchanged)
        #expect(state.item("a1")?.done == true)
    }

    // MARK: T5 move

    @Test func t5MoveRepositionsRightAfterAnotherOrFirst() throws {
        var list = listReplica(1, reminders("a1 b2 c3 d4"))
        try act(&list, .move(id: "a1", after: "c3"), by: "ana")
        #expect(idsText(list) == "b2 c3 a1 d4")
        try act(&list, .move(id: "d4", after: nil), by: "ana")
        #expect(idsText(list) == "d4 b2 c3 a1")
        try act(&list, .move(id: "b2", after: "a1"), by: "ana")
        #expect(idsText(list) == "d4 c3 a1 b2")
        #expect(try list.perform(.move(id: "c3", after: "d4"), by: "ana") == nil, "already there: nothing recorded")
        #expect(try list.perform(.move(id: "d4", after: nil), by: "ana") == nil)
        expectTodoInvariants(list)
    }

    @Test func t5AnItemCannotGoAfterItself() {
        var list = listReplica(1, reminders("a1 b2"))
        let refusal = todoRefusal(&list, .move(id: "a1", after: "a1"))
        #expect(refusal == .afterItself("a1"))
        #expect(refusal?.code == "bad_move")
        #expect(refusal?.message == "a1 cannot be placed after itself")
    }

    @Test func t5MoveOfAMissingItemOrAfterAMissingAnchorIsNoSuchItem() {
        var list = listReplica(1, reminders("a1 b2"))
        #expect(todoRefusal(&list, .move(id: "zz", after: nil)) == .noSuchItem("zz", deletedBy: nil))
        #expect(todoRefusal(&list, .move(id: "a1", after: "zz")) == .noSuchItem("zz", deletedBy: nil))
        #expect(idsText(list) == "a1 b2")
    }

    // MARK: T6 delete

    @Test func t6DeleteTakesTheItemOffAndSaysWhoDidIt() throws {
        var list = listReplica(1, reminders("a1 b2 c3"))
        try act(&list, .delete(id: "b2"), by: "bo")
        #expect(idsText(list) == "a1 c3")
        #expect(list.state.item("b2") == nil)
        #expect(list.state.deleter(of: "b2") == "bo")
        for intent in [TodoList.Intent.delete(id: "b2"), .done(id: "b2", done: true), .move(id: "b2", after: nil),
                       .edit(id: "b2", title: .init("x"), memo: nil)] {
            let refusal = todoRefusal(&list, intent)
            #expect(refusal == .noSuchItem("b2", deletedBy: "bo"), "\(intent)")
            #expect(refusal?.message == "bo deleted this reminder")
            #expect(refusal?.code == "no_such_item")
        }
        #expect(todoRefusal(&list, .done(id: "q9", done: true)) == .noSuchItem("q9", deletedBy: nil))
        #expect(TodoRefusal.noSuchItem("q9", deletedBy: nil).message == "there is no reminder q9")
        #expect(TodoRefusal.noSuchItem("b2", deletedBy: "").message == "someone deleted this reminder")
        expectTodoInvariants(list)
    }

    // MARK: Tombstones (bounded)

    @Test func tombstonesAreBoundedAndTheOldestAreForgotten() throws {
        let kept = TodoList.tombstonesKept
        #expect(kept == 1000)
        let count = kept + 5
        var state = reminders((0..<count).map { "i\($0)" }.joined(separator: " "))
        #expect(state.entries.count == count)
        var model = TodoModel(state)
        for index in 0..<count {
            let change = TodoList.Change.delete(id: "i\(index)")
            let outcome = applyTodo(change, by: index.isMultiple(of: 2) ? "ana" : "bo", to: &state, seq: UInt64(index + 1))
            #expect(outcome == .applied)
            #expect(model.apply(change, by: index.isMultiple(of: 2) ? "ana" : "bo") == outcome)
        }
        #expect(model.matches(state))
        #expect(state.deletions == UInt64(count))
        #expect(state.entries.count == kept, "only the newest \(kept) deleted items are kept")
        #expect(state.entries.allSatisfy { $0.isDeleted })
        #expect(TodoList.violations(of: state).isEmpty)
        // The newest tombstones still anchor (TC5) and still say who deleted them (T6).
        #expect(state.deleter(of: "i\(count - 1)") == "ana")
        #expect(applyTodo(.add(id: "n1", after: "i\(count - 1)", title: "", memo: ""), to: &state, seq: 9000) == .applied)
        // Beyond the bound: the oldest are forgotten. An add or move after one
        // is refused no_such_item (no longer "who deleted it"), and its id is free again.
        #expect(state.deleter(of: "i0") == nil)
        #expect(applyTodo(.add(id: "n2", after: "i0", title: "", memo: ""), to: &state,
                          seq: 9001) == .refused(.noSuchItem("i0", deletedBy: nil)))
        #expect(applyTodo(.move(id: "n1", after: "i4"), to: &state, seq: 9002) == .refused(.noSuchItem("i4", deletedBy: nil)))
        #expect(applyTodo(.done(id: "i0", done: true), to: &state, seq: 9003) == .refused(.noSuchItem("i0", deletedBy: nil)))
        #expect(applyTodo(.add(id: "i0", after: nil, title: "reused", memo: ""), to: &state, seq: 9004) == .applied,
                "a forgotten id can be used again")
        #expect(applyTodo(.add(id: "i5", after: nil, title: "", memo: ""), to: &state, seq: 9005) == .refused(.duplicateID("i5")),
                "a remembered one cannot")
        #expect(TodoList.violations(of: state).isEmpty)
    }

    @Test func violationsNameBrokenLists() {
        let twice = TodoList.State(entries: [.init(id: "a1"), .init(id: "a1")])
        #expect(TodoList.violations(of: twice) == ["a1 is on the list twice"])
        #expect(TodoList.violations(of: TodoList.State(entries: [.init(id: "a b")])) == ["\"a b\" is not a valid id"])
        #expect(TodoList.violations(of: TodoList.State(entries: [.init(
            id: "a1", title: "x\ny")])) == ["a1: a title is one line: no line breaks (put more in the memo)"])
        #expect(TodoList.violations(of: TodoList.State(entries: [.init(id: "a1", deletedBy: "bo", deletedAt: 2)], deletions: 1))
            == ["a1 has delete number 2 of 1"])
        #expect(TodoList.violations(of: TodoList.State(entries: [.init(id: "a1", deletedAt: 1)],
                                                       deletions: 1)) == ["a1 is live with a delete number"])
        let same = TodoList.State(entries: [.init(id: "a1", deletedBy: "bo", deletedAt: 1), .init(id: "b2", deletedBy: "bo", deletedAt: 1)],
                                  deletions: 1)
        #expect(TodoList.violations(of: same) == ["b2 has delete number 1 of 1"])
        let many = TodoList.State(entries: (1...1001).map { .init(id: "d\($0)", deletedBy: "", deletedAt: UInt64($0)) }, deletions: 1001)
        #expect(TodoList.violations(of: many) == ["1001 deleted items kept, more than 1000"])
    }

    // MARK: The model agrees

    /// Every rule above on random changes: the kind and `TodoModel` give the
    /// same outcome and the same list, change after change.
    @Test func theKindAgreesWithTheModelOnRandomChanges() {
        var rng = SplitMix64(seed: 0x70D0)
        for _ in 0..<200 {
            var state = reminders("a1 b2 c3")
            var model = TodoModel(state)
            for step in 0..<60 {
                let change = TodoList.randomChange(&rng, in: state)
                let author = ["ana", "bo", ""][rng.below(3)]
                let outcome = applyTodo(change, by: author, to: &state, seq: UInt64(step + 1))
                let expected = model.apply(change, by: author)
                #expect(outcome == expected, "\(change) by \(author)")
                #expect(model.matches(state), "\(change) by \(author)")
                #expect(TodoList.violations(of: state).isEmpty)
                if outcome != expected || !model.matches(state) { return }
            }
        }
    }
}
