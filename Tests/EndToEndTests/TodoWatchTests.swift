import Foundation
import Testing

/// The reminders list (`/todo/NAME`, docs/rules/todo.md T8-T10, TC1-TC3,
/// TV1-TV6) run for real: `syncclient watch` in tmux panes and the `todo`
/// one-shots against the real hub. Everything is waited for, nothing is timed.
@Suite(.serialized) struct TodoWatchTests {
    /// The list as the hub has it (`syncclient todo list URL --json`).
    struct HubList: Equatable {
        var items: [Item]
        struct Item: Equatable {
            var id: String
            var title: String
            var memo: String
            var done: Bool
        }

        init?(_ url: String) {
            guard let result = try? syncclient(["todo", "list", url, "--json"]), result.status == 0,
                  let object = jsonObject(result.output.trimmingCharacters(in: .whitespacesAndNewlines)),
                  let items = object["items"] as? [[String: Any]] else { return nil }
            self.items = items.map {
                Item(id: $0["id"] as? String ?? "", title: $0["title"] as? String ?? "", memo: $0["memo"] as? String ?? "",
                     done: $0["done"] as? Bool ?? false)
            }
        }

        var titles: [String] { items.map(\.title) }
    }

    private func watch(_ url: String, name: String) throws -> TmuxSession {
        try TmuxSession([Build.syncclient.path, "watch", url, "--name", name], width: 80, height: 24)
    }

    @discardableResult
    private func waitForHub(_ url: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
                            _ condition: (HubList) -> Bool) -> HubList? {
        var last: HubList?
        let ok = eventually(timeout: 20) {
            last = HubList(url)
            return last.map(condition) ?? false
        }
        #expect(ok, "the hub's list never got there (\(what)): \(String(describing: last?.titles))", sourceLocation: sourceLocation)
        return ok ? last : nil
    }

    /// Adds an item with a one-shot; returns its id.
    @discardableResult
    private func add(_ url: String, _ title: String, _ extra: [String] = [],
                     sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let result = try syncclient(["todo", "add", url, title] + extra)
        #expect(result.status == 0, "todo add: \(result.errors)", sourceLocation: sourceLocation)
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The titles a watch screen shows, top to bottom, with their circles: `["○ Milk", "● Eggs"]`.
    static func rows(_ screen: TerminalScreen) -> [String] {
        screen.rows.map { String($0) }.compactMap { line in
            guard let circle = line.firstIndex(where: { $0 == "○" || $0 == "●" }) else { return nil }
            let text = line[circle...].trimmingCharacters(in: .whitespaces)
            // Drop a presence label at the right ("ana editing").
            if let gap = text.range(of: "   ") { return String(text[..<gap.lowerBound]) }
            return text
        }
    }

    static func row(of title: String, in screen: TerminalScreen) -> Int? {
        screen.rows.firstIndex { String($0).contains("○ " + title) || String($0).contains("● " + title) }
    }

    // MARK: One-shots (the exit codes of K3)

    @Test func oneShotsAddTickEditMoveDeleteAndListWithContractExitCodes() throws {
        let hub = try HubProcess()
        let url = "\(hub.url)/todo/shop"
        let list = try syncclient(["todo", "list", url])
        #expect(list.status == 0 && list.output == "No reminders\n")
        let milk = try add(url, "Buy milk", ["--memo", "2 litres"])
        #expect(milk.count == 8 && milk.allSatisfy { $0.isLetter || $0.isNumber }, "prints the new id: \(milk)")
        try add(url, "Call bo", ["--id", "b2"])
        try add(url, "Stamps", ["--id", "s3", "--top"])
        try add(url, "Bread", ["--id", "br", "--after", milk])
        #expect(HubList(url)?.titles == ["Stamps", "Buy milk", "Bread", "Call bo"])
        #expect(try syncclient(["todo", "done", url, "b2"]).status == 0)
        #expect(try syncclient(["todo", "edit", url, milk, "--title", "Buy oat milk", "--base", "Buy milk"]).status == 0)
        #expect(try syncclient(["todo", "edit", url, "s3", "--memo", "ten"]).status == 0)
        #expect(try syncclient(["todo", "move", url, "s3", "--after", "b2"]).status == 0)
        let shown = try syncclient(["todo", "list", url])
        #expect(shown.output == "[ ] \(milk) Buy oat milk\n    2 litres\n[ ] br Bread\n[x] b2 Call bo\n[ ] s3 Stamps\n    ten\n")
        #expect(try syncclient(["todo", "done", url, "b2", "--undo"]).status == 0)
        #expect(try syncclient(["todo", "delete", url, "br"]).status == 0)
        #expect(HubList(url)?.items.map(\.done) == [false, false, false])

        // Refused by the hub: exit 1, its message on standard error.
        let deleted = try syncclient(["todo", "edit", url, "br", "--title", "Rye bread"])
        #expect(deleted.status == 1 && deleted.errors.contains("deleted this reminder"), "\(deleted.errors)")
        let missing = try syncclient(["todo", "add", url, "X", "--after", "zz"])
        #expect(missing.status == 1 && missing.errors.contains("there is no reminder zz"), "\(missing.errors)")
        let taken = try syncclient(["todo", "add", url, "X", "--id", "b2"])
        #expect(taken.status == 1 && taken.errors.contains("already used"), "\(taken.errors)")
        let itself = try syncclient(["todo", "move", url, "b2", "--after", "b2"])
        #expect(itself.status == 1 && itself.errors.contains("after itself"), "\(itself.errors)")

        // Usage errors: exit 2, before anything is sent.
        for arguments in [["todo", "done", url, "bad id!"], ["todo", "move", url, "b2"],
                          ["todo", "move", url, "b2", "--top", "--after", "s3"],
                          ["todo", "edit", url, "b2"], ["todo", "add", url, "two\nlines"],
                          ["todo", "edit", url, "b2", "--title", "a", "--memo", "b", "--base", "c"],
                          ["todo", "list", "\(hub.url)/stock/bar"], ["todo", "list", "ws://127.0.0.1:1/todo/x"]] {
            let result = try syncclient(arguments)
            #expect(result.status == 2, "\(arguments): \(result.status) \(result.errors)")
            #expect(!result.errors.isEmpty)
        }
        #expect(HubList(url)?.titles == ["Buy oat milk", "Call bo", "Stamps"])
    }

    // MARK: TC1: both add after the same item

    @Test func twoPeopleAddAfterTheSameItemAndEachRunStaysTogether() throws {
        let hub = try HubProcess()
        let url = "\(hub.url)/todo/runs"
        try add(url, "Milk", ["--id", "m1"])
        let ana = try watch(url, name: "ana")
        let bo = try watch(url, name: "bo")
        for pane in [ana, bo] { pane.waitFor("the list") { Self.rows($0) == ["○ Milk"] && $0.text.contains("2 here") } }
        // Both: Enter edits Milk, Return adds right after it (T9).
        ana.type("\r")
        bo.type("\r")
        ana.waitFor("ana editing Milk") { $0.text.contains("Milk▏") }
        bo.waitFor("bo editing Milk") { $0.text.contains("Milk▏") }
        ana.type("\r")
        bo.type("\r")
        ana.type("Eggs\rFlour")
        bo.type("Tea")
        ana.type("\u{1B}")
        bo.type("\u{1B}")
        let list = waitForHub(url, "both runs") { $0.titles.count == 4 && !$0.titles.contains("") }
        let titles = list?.titles ?? []
        #expect(titles == ["Milk", "Eggs", "Flour", "Tea"] || titles == ["Milk", "Tea", "Eggs", "Flour"], "TC1: \(titles)")
        for pane in [ana, bo] {
            pane.waitFor("the same order on both screens") { Self.rows($0) == titles.map { "○ " + $0 } }
        }
    }

    // MARK: TV3: presence, and the text arriving

    @Test func oneTypesWhileTheOtherSeesWhoEditsAndTheTextArriving() throws {
        let hub = try HubProcess()
        let url = "\(hub.url)/todo/presence"
        try add(url, "Buy milk", ["--id", "a1"])
        try add(url, "Call bo", ["--id", "b2"])
        let ana = try watch(url, name: "ana")
        let bo = try watch(url, name: "bo")
        for pane in [ana, bo] { pane.waitFor("the list") { Self.rows($0).count == 2 && $0.text.contains("2 here") } }
        ana.type("\u{1B}[B\r")  // Down to Call bo, Enter edits it.
        bo.waitFor("ana editing beside Call bo") { screen in
            Self.row(of: "Call bo", in: screen).map { screen.row($0).contains("ana editing") } == true
        }
        #expect(!(ana.screen.text.contains("ana editing")), "nobody is told they edit themselves")
        ana.type(" about Zoë's café")
        bo.waitFor("the typed text arriving") { $0.text.contains("○ Call bo about Zoë's café") }
        ana.type("\u{1B}")
        bo.waitFor("the label gone when ana stops") { !$0.text.contains("ana editing") }
        waitForHub(url, "the edit") { $0.titles == ["Buy milk", "Call bo about Zoë's café"] }
    }

    // MARK: TC2, TV6: overwritten

    @Test func anOverlappingConcurrentEditTellsTheEarlierAuthorWhatWon() throws {
        let hub = try HubProcess()
        let url = "\(hub.url)/todo/overlap"
        try add(url, "Buy milk", ["--id", "a1"])
        let ana = try watch(url, name: "ana")
        ana.waitFor("the list") { Self.rows($0) == ["○ Buy milk"] && $0.isTodoLive }
        // Ana changes "milk" to "oat milk"; it is acknowledged.
        ana.type("\r\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[Doat \u{1B}")
        waitForHub(url, "ana's edit") { $0.titles == ["Buy oat milk"] }
        // Someone who started from "Buy milk" at the same time changed the same place.
        let other = try syncclient(["todo", "edit", url, "a1", "--title", "Buy soy milk", "--base", "Buy milk"])
        #expect(other.status == 0, "\(other.errors)")
        ana.waitFor("the overwritten notice") { screen in
            let text = screen.rows.map { String($0).trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
            return text.contains("overwritten:") && text.contains("changed this reminder's title at the same time")
                && text.contains("it now reads \"Buy soy milk\"")
        }
        ana.waitFor("the text that won") { Self.rows($0) == ["○ Buy soy milk"] }
        // Disjoint edits against one base both stay, with no notice (TC2).
        #expect(try syncclient(["todo", "edit", url, "a1", "--title", "Buy soy milk!", "--base", "Buy soy milk"]).status == 0)
        ana.waitFor("both kept") { Self.rows($0) == ["○ Buy soy milk!"] }
    }

    // MARK: TC3, TV6: delete against edit

    @Test func deletingAnItemSomeoneEditsTellsThemWhoDeletedIt() throws {
        let hub = try HubProcess()
        let url = "\(hub.url)/todo/delete"
        try add(url, "Buy milk", ["--id", "a1"])
        try add(url, "Call bo", ["--id", "b2"])
        let ana = try watch(url, name: "ana")
        let bo = try watch(url, name: "bo")
        for pane in [ana, bo] { pane.waitFor("the list") { Self.rows($0).count == 2 && $0.text.contains("2 here") } }
        ana.type("\r")
        bo.waitFor("ana editing") { $0.text.contains("ana editing") }
        bo.type("d")
        ana.waitFor("told who deleted it") { screen in
            screen.text.contains("no such item: bo deleted this reminder") && Self.rows(screen) == ["○ Call bo"]
        }
        // Whatever ana types now goes to Call bo only after she starts editing it.
        #expect(!ana.screen.text.contains("▏"))
        // The edit of a deleted item from a one-shot: refused with the same words.
        let late = try syncclient(["todo", "edit", url, "a1", "--title", "Buy milk now"])
        #expect(late.status == 1 && late.errors.contains("bo deleted this reminder"), "\(late.errors)")
    }

    // MARK: T4, TV5: Space, seen by the other

    @Test func spaceTicksAnItemForEveryone() throws {
        let hub = try HubProcess()
        let url = "\(hub.url)/todo/done"
        try add(url, "Buy milk", ["--id", "a1"])
        try add(url, "Call bo", ["--id", "b2"])
        let ana = try watch(url, name: "ana")
        let bo = try watch(url, name: "bo")
        for pane in [ana, bo] { pane.waitFor("the list") { Self.rows($0).count == 2 && $0.text.contains("2 here") } }
        ana.type("\u{1B}[B ")
        bo.waitFor("Call bo ticked") { Self.rows($0) == ["○ Buy milk", "● Call bo"] }
        waitForHub(url, "done") { $0.items.map(\.done) == [false, true] }
        // A click on the circle unticks it (SGR x, y are 1-based).
        guard let y = Self.row(of: "Call bo", in: bo.screen) else { return }
        bo.click(x: 3, y: y + 1)
        ana.waitFor("unticked") { Self.rows($0) == ["○ Buy milk", "○ Call bo"] }
    }

    // MARK: TV4: drag with the mouse

    @Test func draggingARowWithTheMouseReordersTheList() throws {
        let hub = try HubProcess()
        let url = "\(hub.url)/todo/drag"
        try add(url, "Buy milk", ["--id", "a1"])
        try add(url, "Call bo", ["--id", "b2"])
        try add(url, "Stamps", ["--id", "s3"])
        let ana = try watch(url, name: "ana")
        let bo = try watch(url, name: "bo")
        for pane in [ana, bo] { pane.waitFor("the list") { Self.rows($0).count == 3 && $0.text.contains("2 here") } }
        let screen = ana.screen
        guard let from = Self.row(of: "Stamps", in: screen), let to = Self.row(of: "Buy milk", in: screen) else {
            Issue.record("rows not found:\n\(screen.text)")
            return
        }
        ana.press(x: 10, y: from + 1)
        ana.drag(x: 10, y: from)
        ana.drag(x: 10, y: to + 1)
        ana.waitFor("the others making room") { Self.rows($0) == ["○ Stamps", "○ Buy milk", "○ Call bo"] }
        ana.release(x: 10, y: to + 1)
        waitForHub(url, "the move") { $0.titles == ["Stamps", "Buy milk", "Call bo"] }
        bo.waitFor("bo sees the new order") { Self.rows($0) == ["○ Stamps", "○ Buy milk", "○ Call bo"] }
    }

    // MARK: T7: a hub restart

    @Test func itemsTypedInWatchSurviveAHubRestart() throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("synchub-todo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let first = try HubProcess(dataDirectory: data.path)
        let port = first.port
        let url = "\(first.url)/todo/restart"
        let ana = try watch(url, name: "ana")
        ana.waitFor("No reminders") { $0.text.contains("No reminders") && $0.isTodoLive }
        ana.type("\rMilk\rEggs\r\u{1B}")
        waitForHub(url, "typed items") { $0.titles == ["Milk", "Eggs"] }
        ana.waitFor("the list") { Self.rows($0) == ["○ Milk", "○ Eggs"] }
        first.stop()
        ana.waitFor("reconnecting") { $0.text.contains("reconnecting") }
        let second = try HubProcess(dataDirectory: data.path, port: port)
        ana.waitFor("live again with both items") { Self.rows($0) == ["○ Milk", "○ Eggs"] && $0.isTodoLive }
        #expect(HubList(url)?.titles == ["Milk", "Eggs"])
        // And it still plays: Home selects Milk, Space ticks it.
        ana.type("\u{1B}[H ")
        waitForHub(url, "ticked after the restart") { $0.items.map(\.done) == [true, false] }
        _ = second.stop()
    }
}

extension TerminalScreen {
    /// The reminders screen's status bar says "live".
    var isTodoLive: Bool { row(0).contains("· live") }
}
