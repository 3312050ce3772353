import BoardCRDT
import Testing
@testable import syncclient

/// A reminders screen wired to a local replica the way `ReplicaLink` wires
/// it: every intent the controller sends is performed on the replica and
/// the new snapshot comes back at once. Other people's changes go in with
/// `others(_:by:)`.
struct TodoBench {
    var controller: TodoController
    var replica = Replica<TodoList>(id: .random(), limits: ReplicaLimits(compacts: false, hubSealsOrder: true))
    var editing: [String: String] = [:]
    var refusal: String?
    var previous: LinkSnapshot<TodoList>?
    /// Every intent sent so far.
    var sent: [TodoList.Intent] = []
    var quit = false

    init(name: String = "ana", width: Int = 60, height: Int = 16, items: [(String, String, String, Bool)] = []) {
        controller = TodoController(boardName: "home", name: name, width: width, height: height)
        var after: String?
        for (id, title, memo, done) in items {
            _ = try? replica.perform(.add(id: id, after: after, title: title, memo: memo), by: "bo")
            if done { _ = try? replica.perform(.done(id: id, done: true), by: "bo") }
            after = id
        }
        deliver()
    }

    var snapshot: LinkSnapshot<TodoList> {
        LinkSnapshot(board: replica.state, state: .live, clients: 2, names: ["ana", "bo"], version: 3, refusal: refusal,
                     unacknowledged: 0, editing: editing)
    }

    mutating func deliver() {
        let now = snapshot
        handle(controller.react(to: .snapshot(now, previous: previous)))
        previous = now
    }

    /// Carries out the actions as `WatchSession` does (a snapshot after each send).
    mutating func handle(_ actions: [TodoAction]) {
        for action in actions {
            switch action {
            case let .send(intent):
                sent.append(intent)
                do {
                    _ = try replica.perform(intent, by: controller.model.me ?? "")
                    refusal = nil
                } catch {
                    refusal = ScreenModel.refusalText(code: error.code, message: error.message)
                }
                deliver()
            case .redraw: break
            case .quit: quit = true
            }
        }
    }

    mutating func key(_ key: Key) { handle(controller.react(to: .input(.key(key)))) }
    mutating func type(_ text: String) { for character in text { key(.character(character)) } }
    mutating func tick(_ count: Int = 1) { for _ in 0..<count { handle(controller.react(to: .tick)) } }
    mutating func mouse(_ action: MouseEvent.Action, x: Int, y: Int) {
        handle(controller.react(to: .input(.mouse(MouseEvent(action: action, button: .left, x: x, y: y)))))
    }
    mutating func click(x: Int, y: Int) {
        mouse(.press, x: x, y: y)
        mouse(.release, x: x, y: y)
    }

    /// Someone else's change, arriving from the hub.
    mutating func others(_ intent: TodoList.Intent, by name: String = "bo") {
        _ = try? replica.perform(intent, by: name)
        deliver()
    }

    var lines: [String] { controller.render(colour: .none).map(visible) }
    var screen: String { lines.joined(separator: "\n") }
    var titles: [String] { replica.state.items.map(\.title) }
    /// The two message rows (TV6) read as one text.
    var message: String {
        let layout = controller.layout
        return lines[layout.messageRow...(layout.messageRow + 1)].map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }

    /// The row (0-based) whose text contains `text`.
    func row(of text: String) -> Int? { lines.firstIndex { $0.contains(text) } }
}

/// The reminders list in the terminal (docs/rules/todo.md T8-T10, TV1-TV6),
/// driven without a terminal.
@Suite struct TodoScreenTests {
    static let three: [(String, String, String, Bool)] = [
        ("a1", "Buy milk", "2 litres", false), ("b2", "Call bo", "", true), ("c3", "Pick up parcel", "", false),
    ]

    // MARK: TV1: rows, circles, memos, dimmed done titles

    @Test func rowsShowCircleTitleAndMemoUnderIt() {
        let bench = TodoBench(items: Self.three)
        let lines = bench.lines
        #expect(lines.count == 16 && lines.allSatisfy { $0.count == 60 })
        #expect(lines[0].hasPrefix(" home · live · 2 here · reminders"))
        #expect(lines[1].hasPrefix(" here: ana (you), bo"))
        #expect(lines[3].hasPrefix(">"), "the first item is selected")
        #expect(columns(lines[3], 2, 12) == "○ Buy milk  ")
        #expect(columns(lines[4], 4, 8) == "2 litres")
        #expect(columns(lines[5], 2, 9) == "● Call bo", "done: filled circle")
        #expect(columns(lines[6], 2, 16) == "○ Pick up parcel", "no memo, no memo row (T10)")
        #expect(lines[15].contains("Enter edit") && lines[15].contains("Space done"))
    }

    @Test func doneTitlesAreDimmedAndNoColourWritesNoEscapes() {
        let bench = TodoBench(items: Self.three)
        let coloured = bench.controller.render(colour: .basic)
        // Basic colours: done titles in faint ("2"), like the help line.
        #expect(coloured[5].contains("\u{1B}[0;2mCall bo"))
        #expect(!coloured[6].contains("\u{1B}[0;2mPick"))
        #expect(bench.controller.render(colour: .none).allSatisfy { !$0.contains("\u{1B}") })
    }

    @Test func rendersAtSeveralSizes() {
        for (width, height) in [(24, 7), (40, 10), (80, 24), (132, 50)] {
            let bench = TodoBench(width: width, height: height, items: Self.three)
            let lines = bench.lines
            #expect(lines.count == height && lines.allSatisfy { $0.count == width }, "\(width)x\(height)")
            #expect(bench.screen.contains("○ Buy"), "\(width)x\(height)")
        }
        let tiny = TodoBench(width: 20, height: 5, items: Self.three)
        #expect(tiny.lines[0].hasPrefix("terminal too small"))
    }

    @Test func longTitlesWrapUnderTheTitleColumnAtSpaces() {
        let long = "Buy oat milk and bread and eggs for the weekend"
        var bench = TodoBench(width: 30, height: 12, items: [("a1", long, "", false), ("b2", "Next", "", false)])
        let lines = bench.lines
        #expect(lines[3].hasPrefix(">") && columns(lines[3], 4, 23) == "Buy oat milk and bread ")
        #expect(columns(lines[4], 0, 28) == "    and eggs for the weekend", "continuation lines start at the title column")
        let next = bench.row(of: "○ Next") ?? 0
        #expect(next > 4)
        // The cursor follows the text when it wraps.
        bench.key(.enter)
        #expect(bench.lines[next - 1].contains("weekend▏"))
    }

    @Test func wrapCoversTheTextWithoutGaps() {
        for text in ["", "a", "one two three four five", "xxxxxxxxxxxxxxxxxxxxxxxxx", "a\nb\n", "two  spaces  here  ok"] {
            let characters = Array(text)
            let lines = TodoLayout.wrap(characters, width: 6)
            #expect(lines.first?.start == 0 && lines.last?.end == characters.count, "\(text)")
            for (a, b) in zip(lines, lines.dropFirst()) { #expect(a.end == b.start, "\(text)") }
            for line in lines {
                let drawn = characters[line.start..<line.end].filter { !$0.isNewline }
                #expect(drawn.count <= 7, "\(text): a line holds at most width + its trailing space")
            }
        }
    }

    // MARK: T8, T9, TV2: editing in place

    @Test func enterOnNoRemindersAddsTheFirstItemAndEditsIt() {
        var bench = TodoBench()
        #expect(bench.screen.contains("No reminders"))
        bench.key(.enter)
        guard case let .add(id?, nil, "", "")? = bench.sent.first else {
            Issue.record("expected an add at the top, sent \(bench.sent)")
            return
        }
        #expect(bench.controller.editingItem == id, "presence: editing the new item")
        bench.type("Milk")
        #expect(bench.lines[3].contains("○ Milk▏"), "cursor at the end of the typed title")
        bench.key(.escape)
        #expect(bench.sent.last == .edit(id: id, title: TodoList.TextEdit("Milk", base: ""), memo: nil))
        #expect(bench.titles == ["Milk"])
        #expect(bench.controller.editingItem == nil)
        #expect(!bench.screen.contains("▏"))
    }

    @Test func cursorMovesWithLeftRightAndBackspaceDeletesBeforeIt() {
        var bench = TodoBench(items: Self.three)
        bench.key(.enter)
        #expect(bench.lines[3].contains("Buy milk▏"))
        bench.key(.left); bench.key(.left); bench.key(.left); bench.key(.left)
        #expect(bench.lines[3].contains("Buy ▏milk"))
        bench.type("oat ")
        bench.key(.home)
        bench.key(.delete)
        bench.key(.end)
        bench.key(.backspace)
        #expect(bench.controller.model.editor?.string == "uy oat mil")
        bench.key(.escape)
        #expect(bench.titles[0] == "uy oat mil")
    }

    @Test func nonASCIITypingIsKeptExactly() {
        // The decoder turns multi-byte UTF-8 into characters, even split across reads.
        var decoder = InputDecoder()
        let bytes = Array("Café ☕👍".utf8)
        let events = decoder.feed(bytes[0..<4]) + decoder.feed(bytes[4..<9]) + decoder.feed(bytes[9...])
        #expect(events == "Café ☕👍".map { InputEvent.key(.character($0)) })
        var bench = TodoBench(items: Self.three)
        bench.key(.enter)
        bench.key(.end)
        bench.type(" für Zoë ☕")
        bench.key(.backspace)
        bench.type("👍")
        bench.key(.escape)
        #expect(bench.titles[0] == "Buy milk für Zoë 👍")
        #expect(bench.sent.last == .edit(id: "a1", title: TodoList.TextEdit("Buy milk für Zoë 👍", base: "Buy milk"), memo: nil))
        // Latin letters are drawn as they are; a symbol the grid cannot hold in one column shows as "?".
        #expect(bench.lines[3].contains("Buy milk für Zoë ?"))
    }

    @Test func returnInATitleAddsTheNextItemRightAfterAndMovesThere() {
        var bench = TodoBench(items: Self.three)
        bench.key(.enter)
        bench.type("!")
        bench.key(.enter)
        #expect(bench.titles == ["Buy milk!", "", "Call bo", "Pick up parcel"])
        guard case let .add(id?, "a1", "", "")? = bench.sent.last(where: { if case .add = $0 { true } else { false } }) else {
            Issue.record("expected an add after a1, sent \(bench.sent)")
            return
        }
        #expect(bench.controller.editingItem == id)
        bench.type("Bread")
        bench.key(.enter)
        #expect(bench.titles == ["Buy milk!", "Bread", "", "Call bo", "Pick up parcel"], "T9: each Return continues below")
        // T9: leaving an item whose title is empty deletes it.
        bench.key(.escape)
        #expect(bench.titles == ["Buy milk!", "Bread", "Call bo", "Pick up parcel"])
        #expect(bench.sent.last.map { if case .delete = $0 { true } else { false } } == true)
    }

    @Test func anItemWhoseTitleIsEmptiedIsDeletedWhenEditingEnds() {
        var bench = TodoBench(items: Self.three)
        bench.key(.down)
        bench.key(.down)
        bench.key(.enter)
        for _ in 0..<20 { bench.key(.backspace) }
        bench.key(.up)
        #expect(bench.titles == ["Buy milk", "Call bo"])
        #expect(bench.controller.model.selected == "b2", "arrowing up off the item ends the edit and moves up")
    }

    @Test func tabAndDownGoToTheMemoAndMemoShowsWhileEditing() {
        var bench = TodoBench(items: Self.three)
        bench.key(.down); bench.key(.down)
        let row = bench.row(of: "Pick up parcel") ?? 0
        #expect(!bench.lines[row + 1].contains("memo"), "T10: no memo row when empty")
        bench.key(.enter)
        #expect(bench.lines[row + 1].contains("memo"), "T10: the memo shows while its item is edited")
        bench.key(.down)
        #expect(bench.lines[row + 1].contains("▏") && bench.controller.model.editor?.field == .memo)
        bench.type("at the post office")
        bench.key(.enter)
        bench.type("before 6")
        bench.key(.tab)
        #expect(bench.controller.model.editor?.field == .title)
        #expect(bench.replica.state.item("c3")?.memo == "at the post office\nbefore 6")
        bench.key(.escape)
        #expect(bench.lines[row + 1].contains("at the post office") && bench.lines[row + 2].contains("before 6"))
    }

    @Test func qQuitsOnlyWhenNotEditing() {
        var bench = TodoBench(items: Self.three)
        bench.key(.enter)
        bench.type("q")
        #expect(!bench.quit && bench.controller.model.editor?.string == "Buy milkq")
        bench.key(.escape)
        bench.key(.character("q"))
        #expect(bench.quit)
    }

    // MARK: TV5: Space, d, a

    @Test func spaceSendsTheAbsoluteDoneValueAndDDeletesAndAAppends() {
        var bench = TodoBench(items: Self.three)
        bench.key(.down)
        bench.key(.character(" "))
        #expect(bench.sent.last == .done(id: "b2", done: false))
        bench.key(.character(" "))
        #expect(bench.sent.last == .done(id: "b2", done: true))
        bench.key(.character("d"))
        #expect(bench.sent.last == .delete(id: "b2"))
        #expect(bench.titles == ["Buy milk", "Pick up parcel"])
        #expect(bench.controller.model.selected == "a1", "the selection stays near the deleted row")
        bench.key(.character("a"))
        guard case .add(_, "c3", "", "")? = bench.sent.last else {
            Issue.record("a adds at the end, sent \(bench.sent)")
            return
        }
        bench.type("Stamps")
        bench.key(.escape)
        #expect(bench.titles == ["Buy milk", "Pick up parcel", "Stamps"])
    }

    // MARK: Sending while typing (TC2 bases)

    @Test func typingIsSentAfterAQuietSpellWithTheBaseOfTheLastSend() {
        var bench = TodoBench(items: Self.three)
        bench.key(.enter)
        bench.type(" now")
        #expect(bench.controller.isAnimating)
        bench.tick(TodoEditor.sendAfterTicks - 1)
        #expect(bench.sent.isEmpty)
        bench.tick()
        #expect(bench.sent == [.edit(id: "a1", title: TodoList.TextEdit("Buy milk now", base: "Buy milk"), memo: nil)])
        #expect(!bench.controller.isAnimating)
        bench.key(.backspace); bench.key(.backspace); bench.key(.backspace); bench.key(.backspace)
        bench.key(.escape)
        #expect(bench.sent.last == .edit(id: "a1", title: TodoList.TextEdit("Buy milk", base: "Buy milk now"), memo: nil))
        #expect(bench.titles[0] == "Buy milk")
    }

    @Test func theEditorTakesOthersChangesWhileNothingIsUnsent() {
        var bench = TodoBench(items: Self.three)
        bench.key(.enter)
        bench.key(.left)  // cursor before the final "k"
        bench.others(.edit(id: "a1", title: TodoList.TextEdit("Buy oat milk", base: "Buy milk"), memo: nil))
        #expect(bench.lines[3].contains("Buy oat mil▏k"), "their insert before the cursor shifts it")
        bench.type("!")
        bench.key(.escape)
        #expect(bench.titles[0] == "Buy oat mil!k")
    }

    @Test func anItemDeletedWhileBeingEditedTellsWhoDeletedIt() {
        var bench = TodoBench(items: Self.three)
        bench.key(.enter)
        bench.type(" soon")
        bench.others(.delete(id: "a1"), by: "bo")
        #expect(bench.controller.model.editor == nil)
        #expect(bench.message.contains("no such item: bo deleted this reminder"), "\(bench.message)")
        // Not editing while nothing was typed: the same words.
        var quiet = TodoBench(items: Self.three)
        quiet.key(.enter)
        quiet.others(.delete(id: "a1"), by: "bo")
        #expect(quiet.screen.contains("bo deleted this reminder"))
    }

    // MARK: TV3, TV6

    @Test func whoElseEditsWhichItemShowsBesideIt() {
        var bench = TodoBench(items: Self.three)
        bench.editing = ["bo": "c3", "ana": "a1", "cy": "c3"]
        bench.deliver()
        let row = bench.row(of: "Pick up parcel") ?? 0
        #expect(bench.lines[row].hasSuffix("bo, cy editing "))
        #expect(!bench.lines[3].contains("editing"), "one's own presence is not labelled")
        // A long title makes room for the label.
        var narrow = TodoBench(width: 30, height: 12, items: [("a1", "A rather long title to wrap", "", false)])
        narrow.editing = ["bo": "a1"]
        narrow.deliver()
        #expect(narrow.lines[3].contains("bo editing") && narrow.lines[3].contains("A rather"))
    }

    @Test func noticesAndRefusalsShowOnTheMessageRow() {
        var bench = TodoBench(items: Self.three)
        bench.refusal = "overwritten: bo changed this reminder's title at the same time; it now reads \"Buy soy milk\""
        bench.deliver()
        #expect(bench.message.contains("overwritten: bo changed this reminder's title at the same time; it now reads \"Buy soy milk\""),
                "\(bench.message)")
    }

    // MARK: Mouse: T10 circle, click to edit, TV4 drag

    @Test func clickingTheCircleTogglesAndClickingTheRowEdits() {
        var bench = TodoBench(items: Self.three)
        bench.click(x: 2, y: 6)
        #expect(bench.sent.last == .done(id: "c3", done: true))
        bench.click(x: 10, y: 3)
        #expect(bench.controller.editingItem == "a1" && bench.controller.model.editor?.field == .title)
        bench.type("!")
        bench.click(x: 10, y: 4)
        #expect(bench.controller.model.editor?.field == .memo, "a click on the memo moves there")
        // Clicking below the list ends the edit; with none, it adds one (T9).
        bench.click(x: 10, y: 12)
        #expect(bench.controller.editingItem == nil && bench.titles[0] == "Buy milk!")
        bench.click(x: 10, y: 12)
        #expect(bench.controller.editingItem != nil && bench.titles.count == 4)
    }

    @Test func draggingARowReordersWithTheOthersMakingRoom() {
        var bench = TodoBench(items: Self.three)
        // a1 has a memo: rows 3-4; b2 row 5; c3 row 6.
        bench.mouse(.press, x: 10, y: 6)
        bench.mouse(.motion, x: 10, y: 5)
        bench.mouse(.motion, x: 10, y: 3)
        #expect(bench.lines[3].contains("Pick up parcel") && bench.lines[3].hasPrefix("="), "the dragged row sits where it would land")
        #expect(bench.lines[4].contains("Buy milk") && bench.lines[6].contains("Call bo"), "the others made room")
        #expect(bench.sent.isEmpty)
        bench.mouse(.release, x: 10, y: 3)
        #expect(bench.sent == [.move(id: "c3", after: nil)])
        #expect(bench.titles == ["Pick up parcel", "Buy milk", "Call bo"])
        // Down again, after b2.
        bench.mouse(.press, x: 10, y: 3)
        bench.mouse(.motion, x: 10, y: 6)
        bench.mouse(.release, x: 10, y: 6)
        #expect(bench.sent.last == .move(id: "c3", after: "b2"))
        #expect(bench.titles == ["Buy milk", "Call bo", "Pick up parcel"])
    }

    @Test func pipedOutputIsOneLinePerChange() {
        let bench = TodoBench(items: Self.three)
        let line = TodoController.transcriptLine(boardName: "home", snapshot: bench.snapshot, previous: nil)
        #expect(line == "home v3: [ ] Buy milk | [x] Call bo | [ ] Pick up parcel")
        #expect(TodoController.transcriptLine(boardName: "home", snapshot: bench.snapshot, previous: bench.snapshot) == nil)
    }

    @Test func listCommandTextShowsDoneIdsTitlesAndIndentedMemos() {
        let text = TodoListCommand.text([["id": "a1", "title": "Milk", "memo": "2 litres\noat", "done": false],
                                         ["id": "b2", "title": "Call bo", "memo": "", "done": true]])
        #expect(text == "[ ] a1 Milk\n    2 litres\n    oat\n[x] b2 Call bo\n")
        #expect(TodoListCommand.text([]) == "No reminders\n")
    }
}

/// The link's part in presence and notices: a todo state frame's `editing`
/// and a `notice` reach the snapshot the screen gets.
@Suite struct TodoLinkTests {
    static func frame(_ json: String) -> IncomingFrame<TodoList>? {
        let bytes = Array(json.utf8)
        return bytes.withUnsafeBytes { buffer in
            if case let .success(frame) = IncomingFrame<TodoList>.decode(buffer) { frame } else { nil }
        }
    }

    @Test func stateEditingAndNoticesReachTheSession() throws {
        var session = ReplicaSession<TodoList>(name: "ana")
        let state = try #require(Self.frame("""
            {"type":"state","board":"home","kind":"todo","version":3,"clients":2,"names":["ana","bo"],\
            "items":[{"id":"a1","title":"Milk","memo":"","done":false}],"editing":{"bo":"a1"}}
            """))
        _ = session.receive(state, now: 0)
        #expect(session.editing == ["bo": "a1"] && session.names == ["ana", "bo"])
        let notice = try #require(Self.frame("""
            {"type":"notice","ref":null,"code":"overwritten","id":"a1","field":"title","text":"Buy soy milk",\
            "message":"bo changed this reminder's title at the same time; it now reads \\"Buy soy milk\\""}
            """))
        #expect(notice.id == "a1" && notice.field == "title" && notice.text == "Buy soy milk")
        _ = session.receive(notice, now: 0)
        #expect(session.refusal == "overwritten: bo changed this reminder's title at the same time; it now reads \"Buy soy milk\"")
        // The editing map is replaced by each state frame (it drops when bo stops).
        _ = session.receive(try #require(Self.frame(#"{"type":"state","version":3,"clients":2,"names":["ana","bo"],"items":[],"# +
                                                    #""editing":{}}"#)), now: 0)
        #expect(session.editing.isEmpty)
    }
}
