import Testing
@testable import BoardCRDT

/// docs/rules/todo.md TC1-TC6: several people at once. Client replicas act
/// on what they show (local-first); the sealing hub's total order decides
/// (docs/SEMANTICS.md §7c), every order it could integrate them in is
/// tried, and every client converges on the hub once it has the relays.
/// Peers that exchange operations directly converge whatever the delivery
/// order.
@Suite struct TodoConcurrentTests {
    /// What the hub made of operations integrated in one order.
    struct Run {
        var hub: Reminders
        var clients: [Reminders]
        /// The notices the hub would send as each operation became durable (TC2).
        var notices: [KindNotice]
        /// Per client: its own operations whose outcome the relays changed.
        var changed: [[(OperationID, Outcome<TodoRefusal>)]]
    }

    /// The hub integrates `ops` in this order, one frame each, and relays
    /// what it integrated to every client (an author moves its own
    /// re-stamped copy). Every client then shows the hub's state.
    func integrate(_ ops: [ReminderOp], start: TodoList.State, clients: [Reminders],
                   sourceLocation: SourceLocation = #_sourceLocation) -> Run {
        var hub = hubList(100, start)
        var notices: [KindNotice] = []
        var relayed: [ReminderOp] = []
        for op in ops {
            notices += TodoList.notices(of: op, in: hub.state)
            let report = hub.receive([op])
            #expect(report.refused.isEmpty, "\(report.refused)", sourceLocation: sourceLocation)
            relayed += report.integratedOperations
        }
        var clients = clients
        var changed: [[(OperationID, Outcome<TodoRefusal>)]] = []
        for index in clients.indices {
            let report = clients[index].receive(relayed)
            changed.append(report.changedOutcomes)
            #expect(clients[index].state == hub.state, "client \(clients[index].id) shows \(idsText(clients[index]))",
                    sourceLocation: sourceLocation)
            expectTodoInvariants(clients[index], sourceLocation: sourceLocation)
        }
        expectTodoInvariants(hub, sourceLocation: sourceLocation)
        return Run(hub: hub, clients: clients, notices: notices, changed: changed)
    }

    /// Peers with no hub: each receives the others' operations in its own
    /// order; all end equal (C1).
    func peersConverge(_ replicas: [Reminders], sourceLocation: SourceLocation = #_sourceLocation) -> TodoList.State {
        var replicas = replicas
        let all = replicas.flatMap { replica in replica.log.filter { $0.id.replica == replica.id } }
        for index in replicas.indices {
            var incoming = all.filter { $0.id.replica != replicas[index].id }
            if index % 2 == 1 { incoming.reverse() }
            for op in incoming { replicas[index].receive(op) }
            expectTodoInvariants(replicas[index], sourceLocation: sourceLocation)
        }
        for replica in replicas.dropFirst() {
            #expect(replica.state == replicas[0].state, "\(idsText(replica)) vs \(idsText(replicas[0]))", sourceLocation: sourceLocation)
        }
        return replicas[0].state
    }

    // MARK: TC1 adds after one item

    /// After a1, Ana adds x1, x2 while Bo adds y1: a1 x1 x2 y1 or a1 y1 x1 x2,
    /// never a1 x1 y1 x2, in every order the hub could take them.
    @Test func tc1TheRulesExample() throws {
        let start = reminders("a1")
        var ana = listReplica(1, start), bo = listReplica(2, start)
        let x = [try act(&ana, .add(id: "x1", after: "a1", title: "", memo: ""), by: "ana"),
                 try act(&ana, .add(id: "x2", after: "x1", title: "", memo: ""), by: "ana")]
        let y = [try act(&bo, .add(id: "y1", after: "a1", title: "", memo: ""), by: "bo")]
        var seen = Set<String>()
        for order in interleavings([x, y]) {
            let run = integrate(order, start: start, clients: [ana, bo])
            let shown = idsText(run.hub)
            #expect(shown == "a1 x1 x2 y1" || shown == "a1 y1 x1 x2", "\(order.map(\.change.itemID)) gave \(shown)")
            seen.insert(shown)
        }
        #expect(seen.count == 2, "both outcomes happen: \(seen)")
        let peers = peersConverge([ana, bo])
        #expect(["a1 x1 x2 y1", "a1 y1 x1 x2"].contains(idsText(peers)))
    }

    /// Three people each add a run after the same item (one of them at the
    /// top of an empty list's neighbour): every run stays together, in its
    /// order, in all of the hub's possible orders.
    @Test(arguments: ["a1", nil] as [String?])
    func tc1RunsNeverInterleave(anchor: String?) throws {
        let start = reminders("a1 b2")
        var people = [listReplica(1, start), listReplica(2, start), listReplica(3, start)]
        let names = ["ana", "bo", "cy"]
        let runs = [["x1", "x2", "x3"], ["y1", "y2"], ["z1", "z2"]]
        var ops: [[ReminderOp]] = []
        for (index, run) in runs.enumerated() {
            var own: [ReminderOp] = []
            var after = anchor
            for id in run {
                own.append(try act(&people[index], .add(id: id, after: after, title: id, memo: ""), by: names[index]))
                after = id
            }
            ops.append(own)
        }
        let orders = interleavings(ops)
        #expect(orders.count == 210)
        var outcomes = Set<String>()
        for (number, order) in orders.enumerated() {
            // Every order at the hub; the clients' relays on every 7th (the
            // convergence of the rest is the same code).
            let run = number % 7 == 0 ? integrate(order, start: start, clients: people)
                : integrate(order, start: start, clients: [])
            let shown = run.hub.state.items.map(\.id)
            #expect(shown.count == 9)
            for ids in runs {
                guard let first = shown.firstIndex(of: ids[0]) else { Issue.record("\(ids[0]) lost"); continue }
                #expect(Array(shown[first..<min(first + ids.count, shown.count)]) == ids, "run \(ids) split in \(shown)")
            }
            let rest = shown.filter { !runs.joined().contains($0) }
            #expect(rest == ["a1", "b2"])
            if let anchor { #expect(shown.first == anchor && shown.last == "b2") } else { #expect(Array(shown.suffix(2)) == ["a1", "b2"]) }
            outcomes.insert(shown.joined(separator: " "))
        }
        #expect(outcomes.count == 6, "each order of the three runs happens: \(outcomes.sorted())")
        _ = peersConverge(people)
    }

    // MARK: TC2 concurrent edits

    /// Base "Buy milk": Ana "Buy oat milk", Bo "Buy milk!" -> "Buy oat milk!"
    /// whichever the hub takes first, and nobody is told anything.
    @Test(arguments: [true, false])
    func tc2DisjointEditsBothStay(anaFirst: Bool) throws {
        let start = reminders([("a1", "Buy milk")], by: "cy")
        var ana = listReplica(1, start), bo = listReplica(2, start)
        let a = try act(&ana, .edit(id: "a1", title: .init("Buy oat milk", base: "Buy milk"), memo: nil), by: "ana")
        let b = try act(&bo, .edit(id: "a1", title: .init("Buy milk!", base: "Buy milk"), memo: nil), by: "bo")
        let run = integrate(anaFirst ? [a, b] : [b, a], start: start, clients: [ana, bo])
        #expect(run.hub.state.item("a1")?.title == "Buy oat milk!")
        #expect(run.notices.isEmpty)
        #expect(run.hub.outcome(of: a.id) == .applied && run.hub.outcome(of: b.id) == .applied)
        #expect(run.changed.allSatisfy { $0.isEmpty })
        #expect(peersConverge([ana, bo]).item("a1")?.title == "Buy oat milk!")
    }

    /// Ana "Buy oat milk" against Bo "Buy soy milk": the later in the total
    /// order stands; the earlier author is told, with item, field and text.
    @Test(arguments: [true, false])
    func tc2OverlappingEditsLaterWinsAndTheEarlierAuthorIsTold(anaFirst: Bool) throws {
        let start = reminders([("a1", "Buy milk")], by: "cy")
        var ana = listReplica(1, start), bo = listReplica(2, start)
        let a = try act(&ana, .edit(id: "a1", title: .init("Buy oat milk", base: "Buy milk"), memo: nil), by: "ana")
        let b = try act(&bo, .edit(id: "a1", title: .init("Buy soy milk", base: "Buy milk"), memo: nil), by: "bo")
        let run = integrate(anaFirst ? [a, b] : [b, a], start: start, clients: [ana, bo])
        let (earlier, later, text) = anaFirst ? ("ana", "bo", "Buy soy milk") : ("bo", "ana", "Buy oat milk")
        #expect(run.hub.state.item("a1")?.title == text)
        #expect(run.hub.state.entries[0].titleBy == later)
        #expect(run.notices == [KindNotice(
            to: earlier, code: "overwritten",
            message: "\(later) changed this reminder's title at the same time; it now reads \"\(text)\"",
            item: "a1", field: "title", text: text)])
        // The first edit on the untouched base told nobody (cy's own text was its base).
        #expect(run.hub.outcome(of: a.id) == .applied && run.hub.outcome(of: b.id) == .applied)
    }

    @Test func tc2TheMemoToo() throws {
        var state = reminders([("a1", "Milk")], by: "ana")
        applyTodo(.edit(id: "a1", title: nil, memo: .init("2 litres", base: "")), by: "ana", to: &state)
        let bo = TodoList.Change.edit(id: "a1", title: nil, memo: .init("1 litre", base: ""))
        let notices = TodoList.notices(of: reminderOp(bo, by: "bo"), in: state)
        #expect(notices == [KindNotice(to: "ana", code: "overwritten",
                                       message: "bo changed this reminder's memo at the same time; it now reads \"1 litre\"",
                                       item: "a1", field: "memo", text: "1 litre")])
        #expect(applyTodo(bo, by: "bo", to: &state, seq: 2) == .applied)
        #expect(state.item("a1")?.memo == "1 litre")
        // An author without a name is "someone".
        applyTodo(.edit(id: "a1", title: nil, memo: .init("x", base: "")), by: "ana", to: &state, seq: 3)
        let anonymous = TodoList.notices(of: reminderOp(.edit(id: "a1", title: nil, memo: .init("y", base: "")), by: ""), in: state)
        #expect(anonymous.map(\.message) == ["someone changed this reminder's memo at the same time; it now reads \"y\""])
    }

    /// No notice: the same author overwriting their own text, an edit
    /// without base, a merge, a field nobody wrote (a checkpoint's text), an
    /// edit of a deleted item, different fields.
    @Test func tc2NoNoticeWhenNothingOfSomeoneElseIsLost() throws {
        var state = reminders([("a1", "Buy milk")])
        let untold = TodoList.notices(of: reminderOp(.edit(id: "a1", title: .init("Buy soy milk", base: "Buy oil"), memo: nil), by: "bo"),
                                      in: state)
        #expect(untold.isEmpty, "the title has no author yet")
        applyTodo(.edit(id: "a1", title: .init("Buy oat milk", base: "Buy milk"), memo: nil), by: "ana", to: &state)
        func notices(_ change: TodoList.Change, by author: String) -> [KindNotice] {
            TodoList.notices(of: reminderOp(change, by: author, seq: 2), in: state)
        }
        #expect(notices(.edit(id: "a1", title: .init("Buy soy milk", base: "Buy milk"), memo: nil), by: "ana").isEmpty, "same author")
        #expect(notices(.edit(id: "a1", title: .init("Buy soy milk"), memo: nil), by: "bo").isEmpty, "no base: a plain replace")
        #expect(notices(.edit(id: "a1", title: .init("Buy milk!", base: "Buy milk"), memo: nil), by: "bo").isEmpty, "merged")
        #expect(notices(.edit(id: "a1", title: .init("Buy oat milk", base: "Buy milk"), memo: nil), by: "bo").isEmpty, "the same change")
        #expect(notices(.edit(id: "a1", title: .init("Buy milk", base: "Buy milk"), memo: nil), by: "bo").isEmpty,
                "no change from its base")
        #expect(notices(.edit(id: "a1", title: nil, memo: .init("2 litres", base: "")), by: "bo").isEmpty, "another field")
        #expect(notices(.done(id: "a1", done: true), by: "bo").isEmpty)
        #expect(notices(.edit(id: "a1", title: .init("Buy\nsoy", base: "Buy milk"), memo: nil), by: "bo").isEmpty, "refused")
        applyTodo(.delete(id: "a1"), by: "cy", to: &state, seq: 3)
        #expect(notices(.edit(id: "a1", title: .init("Buy soy milk", base: "Buy milk"), memo: nil), by: "bo").isEmpty, "deleted")
    }

    /// Concurrent edits of different fields both stay, in both orders.
    @Test(arguments: [true, false])
    func tc2DifferentFieldsBothStay(anaFirst: Bool) throws {
        let start = reminders([("a1", "Milk")], by: "cy")
        var ana = listReplica(1, start), bo = listReplica(2, start)
        let a = try act(&ana, .edit(id: "a1", title: .init("Oat milk", base: "Milk"), memo: nil), by: "ana")
        let b = try act(&bo, .edit(id: "a1", title: nil, memo: .init("2 litres", base: "")), by: "bo")
        let run = integrate(anaFirst ? [a, b] : [b, a], start: start, clients: [ana, bo])
        #expect(run.hub.state.item("a1") == TodoList.Item(id: "a1", title: "Oat milk", memo: "2 litres", done: false))
        #expect(run.notices.isEmpty)
    }

    /// Spans are counted in Characters: emoji and combining marks are one
    /// character each, never split, whatever their bytes or scalars.
    @Test(arguments: [true, false])
    func tc2NonASCIITextMergesByCharacter(anaFirst: Bool) throws {
        let cases: [(base: String, ana: String, bo: String, merged: String?)] = [
            ("Thé 🍵", "Thé vert 🍵", "Thé 🍵!", "Thé vert 🍵!"),
            ("🍵🍵🍵", "🍵X🍵🍵", "🍵🍵🍵Y", "🍵X🍵🍵Y"),
            ("👍 ok", "👍🏽 ok", "👍 ok!", "👍🏽 ok!"),               // a skin tone joins its emoji: one character changed
            ("Cafe noir", "Cafe\u{301} noir", "Cafe noire", "Cafe\u{301} noire"),
            ("🇫🇷 vin", "🇫🇷 vin rouge", "🇮🇹 vin", "🇮🇹 vin rouge"),
            // An accent put on the first letter changes that character, so
            // an insert before it touches the same place: the later wins.
            ("ab", "a\u{301}b", "Xab", nil),
            // Two inserts at one point are one place too.
            ("Milk", "Milk!", "Milk?", nil),
        ]
        for (base, anaText, boText, merged) in cases {
            let start = reminders([("a1", base)], by: "cy")
            var ana = listReplica(1, start), bo = listReplica(2, start)
            let a = try act(&ana, .edit(id: "a1", title: .init(anaText, base: base), memo: nil), by: "ana")
            let b = try act(&bo, .edit(id: "a1", title: .init(boText, base: base), memo: nil), by: "bo")
            let run = integrate(anaFirst ? [a, b] : [b, a], start: start, clients: [ana, bo])
            let title = try #require(run.hub.state.item("a1")?.title)
            let expected = merged ?? (anaFirst ? boText : anaText)
            #expect(Array(title.unicodeScalars) == Array(expected.unicodeScalars), "\(base): \(anaText) + \(boText) gave \(title)")
            #expect(run.notices.count == (merged == nil ? 1 : 0), "\(base): \(run.notices)")
            #expect(run.notices.first?.text.map { Array($0.unicodeScalars) }
                ?? Array(expected.unicodeScalars) == Array(expected.unicodeScalars))
            #expect(TodoModel.merge(.init(anaFirst ? boText : anaText, base: base), over: anaFirst ? anaText : boText).text == expected)
        }
    }

    /// Two merges that together would pass 1,000 characters: the later wins whole.
    /// Review finding: a merge made its author the field's only author, so
    /// a later overwrite by that author told nobody that ana's merged change
    /// was gone. Everyone whose change is in the text is told.
    @Test func tc2AnOverwriteOfMergedTextTellsEveryoneWhoseChangeItHeld() throws {
        var state = reminders([("a1", "Buy milk")])
        applyTodo(.edit(id: "a1", title: .init("Buy oat milk", base: "Buy milk"), memo: nil), by: "ana", to: &state)
        applyTodo(.edit(id: "a1", title: .init("Buy milk!", base: "Buy milk"), memo: nil), by: "bo", to: &state)
        #expect(state.entries[0].title == "Buy oat milk!")
        let bo = TodoList.Change.edit(id: "a1", title: .init("Buy soy milk!", base: "Buy milk!"), memo: nil)
        #expect(TodoList.notices(of: reminderOp(bo, by: "bo", seq: 3), in: state).map(\.to) == ["ana"])
        // Three people: cy's edit against the old base overwrites both merged changes.
        var three = reminders([("a1", "abc def ghi")])
        applyTodo(.edit(id: "a1", title: .init("ABC def ghi", base: "abc def ghi"), memo: nil), by: "ana", to: &three)
        applyTodo(.edit(id: "a1", title: .init("abc def GHI", base: "abc def ghi"), memo: nil), by: "bo", to: &three)
        let cy = TodoList.Change.edit(id: "a1", title: .init("abc DEF ghi", base: "abc def ghi"), memo: nil)
        #expect(Set(TodoList.notices(of: reminderOp(cy, by: "cy", seq: 3), in: three).map(\.to)) == ["ana", "bo"])
        // A plain replace afterwards: only its author is in the text.
        applyTodo(.edit(id: "a1", title: .init("new"), memo: nil), by: "cy", to: &three)
        #expect(three.entries[0].titleWith.isEmpty)
    }

    @Test func tc2AMergeOver1000CharactersIsAnOverwrite() throws {
        let base = "x" + String(repeating: " ", count: 10) + "y"
        var state = reminders([("a1", "")], by: "cy")
        applyTodo(.edit(id: "a1", title: nil, memo: .init(base)), by: "cy", to: &state)
        let anaText = String(repeating: "a", count: 600) + base
        let boText = base + String(repeating: "b", count: 600)
        applyTodo(.edit(id: "a1", title: nil, memo: .init(anaText, base: base)), by: "ana", to: &state, seq: 2)
        let bo = TodoList.Change.edit(id: "a1", title: nil, memo: .init(boText, base: base))
        #expect(TodoList.notices(of: reminderOp(bo, by: "bo", seq: 3), in: state).map(\.to) == ["ana"])
        applyTodo(bo, by: "bo", to: &state, seq: 3)
        #expect(state.item("a1")?.memo == boText)
    }

    // MARK: TC3 delete wins

    /// Ana deletes a1 while Bo edits it, ticks it or moves it. Delete first
    /// in the hub's order: Bo's change is refused "ana deleted this reminder"
    /// and his replica takes it back. Bo first: his change was acked and
    /// stays acked; the delete still takes the item off. Either way a1 is gone.
    @Test(arguments: [true, false])
    func tc3DeleteBeatsEditDoneAndMove(deleteFirst: Bool) throws {
        let intents: [TodoList.Intent] = [.edit(id: "a1", title: .init("Milk!", base: "a1"), memo: nil), .done(id: "a1", done: true),
                                          .move(id: "a1", after: "c3")]
        for intent in intents {
            let start = reminders("a1 b2 c3")
            var ana = listReplica(1, start), bo = listReplica(2, start)
            let delete = try act(&ana, .delete(id: "a1"), by: "ana")
            let other = try act(&bo, intent, by: "bo")
            let run = integrate(deleteFirst ? [delete, other] : [other, delete], start: start, clients: [ana, bo])
            #expect(idsText(run.hub) == "b2 c3", "\(intent)")
            #expect(run.hub.state.deleter(of: "a1") == "ana")
            #expect(run.hub.outcome(of: delete.id) == .applied)
            if deleteFirst {
                let refusal = TodoRefusal.noSuchItem("a1", deletedBy: "ana")
                #expect(run.hub.outcome(of: other.id) == .refused(refusal), "\(intent)")
                #expect(refusal.message == "ana deleted this reminder")
                #expect(run.changed[1].count == 1 && run.changed[1].first?.1 == .refused(refusal), "bo is told: \(run.changed[1])")
            } else {
                #expect(run.hub.outcome(of: other.id) == .applied, "acked, and an ack is final")
                #expect(run.changed[1].isEmpty)
            }
            #expect(run.changed[0].isEmpty, "ana's delete stands")
        }
    }

    /// Two deletes of one item: the first in the hub's order deletes it, the
    /// second is refused naming the first.
    @Test(arguments: [true, false])
    func tc3TwoDeletesTheFirstDeletesTheSecondIsTold(anaFirst: Bool) throws {
        let start = reminders("a1 b2")
        var ana = listReplica(1, start), bo = listReplica(2, start)
        let a = try act(&ana, .delete(id: "a1"), by: "ana")
        let b = try act(&bo, .delete(id: "a1"), by: "bo")
        let run = integrate(anaFirst ? [a, b] : [b, a], start: start, clients: [ana, bo])
        let (first, second) = anaFirst ? ("ana", b.id) : ("bo", a.id)
        #expect(idsText(run.hub) == "b2")
        #expect(run.hub.state.deleter(of: "a1") == first)
        #expect(run.hub.outcome(of: second) == .refused(.noSuchItem("a1", deletedBy: first)))
    }

    // MARK: TC4 two moves

    @Test(arguments: [true, false])
    func tc4TwoMovesOfOneItemTheLaterWinsAndItAppearsOnce(anaFirst: Bool) throws {
        let start = reminders("a1 b2 c3 d4")
        var ana = listReplica(1, start), bo = listReplica(2, start)
        let a = try act(&ana, .move(id: "c3", after: "a1"), by: "ana")
        let b = try act(&bo, .move(id: "c3", after: nil), by: "bo")
        #expect(idsText(ana) == "a1 c3 b2 d4" && idsText(bo) == "c3 a1 b2 d4")
        let run = integrate(anaFirst ? [a, b] : [b, a], start: start, clients: [ana, bo])
        #expect(idsText(run.hub) == (anaFirst ? "c3 a1 b2 d4" : "a1 c3 b2 d4"))
        #expect(run.hub.state.entries.filter { $0.id == "c3" }.count == 1)
        _ = peersConverge([ana, bo])
    }

    /// Moves of two items after each other, concurrently: no item lost or doubled.
    @Test(arguments: [true, false])
    func tc4CrossedMovesKeepEveryItemOnce(anaFirst: Bool) throws {
        let start = reminders("a1 b2 c3 d4")
        var ana = listReplica(1, start), bo = listReplica(2, start)
        let a = try act(&ana, .move(id: "a1", after: "d4"), by: "ana")
        let b = try act(&bo, .move(id: "d4", after: "a1"), by: "bo")
        let run = integrate(anaFirst ? [a, b] : [b, a], start: start, clients: [ana, bo])
        #expect(idsText(run.hub) == (anaFirst ? "b2 c3 a1 d4" : "d4 a1 b2 c3"))
        #expect(Set(run.hub.state.items.map(\.id)).count == 4)
    }

    // MARK: TC5 anchors deleted concurrently

    /// a1 b2 c3: Ana deletes b2 while Bo adds n1 after b2 -> a1 n1 c3, both orders.
    @Test(arguments: [true, false])
    func tc5AnAddAfterADeletedItemTakesItsSpot(deleteFirst: Bool) throws {
        let start = reminders("a1 b2 c3")
        var ana = listReplica(1, start), bo = listReplica(2, start)
        let delete = try act(&ana, .delete(id: "b2"), by: "ana")
        let add = try act(&bo, .add(id: "n1", after: "b2", title: "New", memo: ""), by: "bo")
        let run = integrate(deleteFirst ? [delete, add] : [add, delete], start: start, clients: [ana, bo])
        #expect(idsText(run.hub) == "a1 n1 c3")
        #expect(run.hub.outcome(of: add.id) == .applied)
        #expect(run.changed.allSatisfy { $0.isEmpty })
        #expect(idsText(peersConverge([ana, bo])) == "a1 n1 c3")
    }

    /// a1 b2 c3 d4: Bo moves a1 after c3 while Ana deletes c3 -> b2 a1 d4.
    @Test(arguments: [true, false])
    func tc5AMoveAfterADeletedItemTakesItsSpot(deleteFirst: Bool) throws {
        let start = reminders("a1 b2 c3 d4")
        var ana = listReplica(1, start), bo = listReplica(2, start)
        let delete = try act(&ana, .delete(id: "c3"), by: "ana")
        let move = try act(&bo, .move(id: "a1", after: "c3"), by: "bo")
        let run = integrate(deleteFirst ? [delete, move] : [move, delete], start: start, clients: [ana, bo])
        #expect(idsText(run.hub) == "b2 a1 d4")
        #expect(idsText(peersConverge([ana, bo])) == "b2 a1 d4")
    }

    /// An add after an item deleted long before (not concurrently) lands
    /// where it was too (the wire's "add after a deleted item", TC5), and
    /// a run of adds after a deleted anchor stays together (TC1).
    @Test func tc5AddsAfterATombstoneKeepTheirRuns() throws {
        var list = listReplica(1, reminders("a1 b2 c3"))
        try act(&list, .delete(id: "b2"), by: "ana")
        try act(&list, .add(id: "n1", after: "b2", title: "", memo: ""), by: "bo")
        try act(&list, .add(id: "n2", after: "n1", title: "", memo: ""), by: "bo")
        try act(&list, .add(id: "m1", after: "b2", title: "", memo: ""), by: "cy")
        #expect(idsText(list) == "a1 m1 n1 n2 c3")
        expectTodoInvariants(list)
    }

    // MARK: TC6 done twice

    @Test(arguments: [true, false])
    func tc6TwoPeopleTickingTheSameItemLeaveItDone(anaFirst: Bool) throws {
        let start = reminders("a1")
        var ana = listReplica(1, start), bo = listReplica(2, start)
        let a = try act(&ana, .done(id: "a1", done: true), by: "ana")
        let b = try act(&bo, .done(id: "a1", done: true), by: "bo")
        let run = integrate(anaFirst ? [a, b] : [b, a], start: start, clients: [ana, bo])
        #expect(run.hub.state.item("a1")?.done == true)
        #expect(run.hub.outcome(of: anaFirst ? a.id : b.id) == .applied)
        #expect(run.hub.outcome(of: anaFirst ? b.id : a.id) == .unchanged, "already done: changes nothing, refuses nothing")
        #expect(peersConverge([ana, bo]).item("a1")?.done == true)
    }

    /// Tick against untick: absolute values, so the later stands.
    @Test(arguments: [true, false])
    func tc6TickAgainstUntickTheLaterStands(tickFirst: Bool) throws {
        var start = reminders("a1")
        applyTodo(.done(id: "a1", done: true), to: &start)
        var ana = listReplica(1, reminders("a1")), bo = listReplica(2, start)
        let tick = try act(&ana, .done(id: "a1", done: true), by: "ana")
        let untick = try act(&bo, .done(id: "a1", done: false), by: "bo")
        var state = reminders("a1")
        for op in tickFirst ? [tick, untick] : [untick, tick] { _ = TodoList.apply(op, to: &state) }
        #expect(state.item("a1")?.done == !tickFirst)
    }

    // MARK: apply takes anything

    /// `apply` accepts every change in every state and never traps: changes
    /// about items nobody has, anchors that are tombstones, malformed ids.
    @Test func applyNeverTrapsOnStrangeChanges() {
        var state = reminders("a1 b2")
        applyTodo(.delete(id: "b2"), to: &state)
        let strange: [TodoList.Change] = [
            .add(id: "", after: nil, title: "", memo: ""), .add(id: "a1", after: "a1", title: "", memo: ""),
            .add(id: "n", after: "n", title: "", memo: ""), .move(id: "b2", after: "b2"), .move(id: "a1", after: "b2"),
            .edit(id: "b2", title: .init("x", base: "y"), memo: nil),
            .edit(id: "a1", title: .init("", base: ""), memo: .init("", base: "")),
            .done(id: "zz", done: false), .delete(id: String(repeating: "z", count: 65)),
        ]
        var model = TodoModel(state)
        for (index, change) in strange.enumerated() {
            let outcome = applyTodo(change, to: &state, seq: UInt64(index + 2))
            #expect(outcome == model.apply(change, by: "ana"), "\(change)")
            #expect(TodoList.violations(of: state).isEmpty)
        }
        #expect(model.matches(state))
    }
}
