import Foundation
import Testing
import BoardCRDT
import SyncWire

/// The reminders list's wire adapter (docs/rules/todo.md "Frames"): every
/// intent decodes, every malformed frame gets its code and a message that
/// names the field, changes and states are written as their decoders read them.
@Suite struct TodoListWireTests {
    typealias Message = ClientMessage<TodoList>

    func parse(_ text: String) throws(ProtocolError) -> Message {
        var text = text
        let result: Result<Message, ProtocolError> = text.withUTF8 { bytes in
            do throws(ProtocolError) { return .success(try Message.parse(UnsafeRawBufferPointer(bytes))) } catch { return .failure(error) }
        }
        return try result.get()
    }

    func error(_ text: String) -> ProtocolError? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    func intent(_ text: String) throws(ProtocolError) -> TodoList.Intent? {
        guard case let .intent(intent, _, _) = try parse(text) else { return nil }
        return intent
    }

    // MARK: intents

    @Test func everyIntentDecodes() throws {
        #expect(try intent(#"{"type":"add","id":"a1","after":null,"title":"Milk","memo":"2 litres"}"#)
            == .add(id: "a1", after: nil, title: "Milk", memo: "2 litres"))
        #expect(try intent(#"{"type":"add","after":"a1"}"#) == .add(id: nil, after: "a1", title: "", memo: ""),
                "title, memo default to \"\"; id made up")
        #expect(try intent(#"{"type":"add","after":null,"title":"Thé 🍵"}"#) == .add(id: nil, after: nil, title: "Thé 🍵", memo: ""))
        #expect(try intent(#"{"type":"edit","id":"a1","title":"Milk","base":"Mil"}"#) == .edit(id: "a1", title: .init("Milk", base: "Mil"),
                                                                                               memo: nil))
        #expect(try intent(#"{"type":"edit","id":"a1","memo":"2 litres","base":""}"#) == .edit(id: "a1", title: nil,
                                                                                               memo: .init("2 litres", base: "")))
        #expect(try intent(#"{"type":"edit","id":"a1","title":"Milk"}"#) == .edit(id: "a1", title: .init("Milk"), memo: nil))
        #expect(try intent(#"{"type":"edit","id":"a1","title":"Milk","memo":"x","title_base":"Mil","memo_base":""}"#)
            == .edit(id: "a1", title: .init("Milk", base: "Mil"), memo: .init("x", base: "")))
        #expect(try intent(#"{"type":"edit","id":"a1","title":"Milk","memo":"x"}"#) == .edit(id: "a1", title: .init("Milk"),
                                                                                             memo: .init("x")))
        #expect(try intent(#"{"type":"edit","id":"a1","title":"Milk","title_base":"Mil"}"#) == .edit(id: "a1",
            title: .init("Milk", base: "Mil"), memo: nil))
        #expect(try intent(#"{"type":"done","id":"a1","done":true}"#) == .done(id: "a1", done: true))
        #expect(try intent(#"{"type":"done","id":"a1","done":false}"#) == .done(id: "a1", done: false))
        #expect(try intent(#"{"type":"move","id":"a1","after":"b2"}"#) == .move(id: "a1", after: "b2"))
        #expect(try intent(#"{"type":"move","id":"a1","after":null}"#) == .move(id: "a1", after: nil))
        #expect(try intent(#"{"type":"delete","id":"a1"}"#) == .delete(id: "a1"))
        #expect(TodoList.intentTypes == ["add", "edit", "done", "move", "delete", "editing"])
        #expect(TodoList.pathSegment == "todo" && TodoList.tracksEditing)
    }

    @Test func refAndKeyAreKept() throws {
        #expect(try parse(#"{"type":"delete","id":"a1","ref":"r7","key":"k-1"}"#) == .intent(.delete(id: "a1"), ref: "r7", key: "k-1"))
        #expect(try parse(#"{"type":"add","after":null,"ref":"r8"}"#) == .intent(.add(id: nil, after: nil, title: "", memo: ""), ref: "r8",
                                                                                 key: nil))
    }

    @Test func editingIsPresenceOnly() throws {
        #expect(try parse(#"{"type":"editing","id":"a1","ref":"e1"}"#) == .editing(id: "a1", ref: "e1"))
        #expect(try parse(#"{"type":"editing","id":null}"#) == .editing(id: nil, ref: nil))
        #expect(try parse(#"{"type":"editing"}"#) == .editing(id: nil, ref: nil))
        #expect(try TodoList.intent(type: "editing", frame: Data(#"{"type":"editing","id":"a1"}"#.utf8)) == nil, "never an intent")
        #expect(Message.editingFrame(id: "a1", ref: "e1") == #"{"type":"editing","id":"a1","ref":"e1"}"#)
        #expect(try parse(Message.editingFrame(id: nil)) == .editing(id: nil, ref: nil))
        let state = reminders()
        #expect(TodoList.editingProblem("a1", in: state) == nil)
        #expect(TodoList.editingProblem("q9", in: state)?.code == "no_such_item")
        #expect(TodoList.editingProblem("q9", in: state)?.message == "there is no reminder q9")
        #expect(TodoList.editingProblem("b2", in: state)?.message == "bo deleted this reminder")
        #expect(TodoList.editingProblem("a b", in: state)?.code == "bad_field")
    }

    /// Every intent written by `intentMembers` (what `syncclient send` and
    /// the pages send) parses back to itself.
    @Test func intentMembersParseBack() throws {
        let intents: [TodoList.Intent] = [
            .add(id: nil, after: nil, title: "", memo: ""), .add(id: "a1", after: "b2", title: "Thé \"🍵\"", memo: "two\nlines"),
            .edit(id: "a1", title: .init("Milk", base: "Mil"), memo: nil), .edit(id: "a1", title: nil, memo: .init("x", base: "y")),
            .edit(id: "a1", title: .init("t", base: "tb"), memo: .init("m", base: "mb")),
            .edit(id: "a1", title: .init("t"), memo: .init("m", base: "mb")),
            .edit(id: "a1", title: .init("t"), memo: nil), .done(id: "a1", done: true), .done(id: "a1", done: false),
            .move(id: "a1", after: nil), .move(id: "a1", after: "b2"), .delete(id: "a1"),
        ]
        for value in intents {
            let frame = Message.thinFrame(value, ref: "r1", key: "k1")
            #expect(try parse(frame) == .intent(value, ref: "r1", key: "k1"), "\(frame)")
        }
        #expect(TodoList.intentMembers(.edit(id: "a1", title: .init("t", base: "tb"), memo: .init("m", base: "mb")))
            == #""type":"edit","id":"a1","title":"t","title_base":"tb","memo":"m","memo_base":"mb""#)
        #expect(TodoList.intentMembers(.edit(id: "a1", title: .init("Milk", base: "Mil"),
                                             memo: nil)) == #""type":"edit","id":"a1","title":"Milk","base":"Mil""#)
    }

    // MARK: malformed frames

    @Test(arguments: [
        (#"{"type":"add"}"#, "missing_field", "\"after\""),
        (#"{"type":"add","title":"Milk"}"#, "missing_field", "\"after\""),
        (#"{"type":"edit","title":"Milk"}"#, "missing_field", "\"id\""),
        (#"{"type":"edit","id":"a1"}"#, "missing_field", "\"title\""),
        (#"{"type":"edit","id":"a1","base":"x"}"#, "missing_field", "\"memo\""),
        (#"{"type":"done","id":"a1"}"#, "missing_field", "\"done\""),
        (#"{"type":"done","done":true}"#, "missing_field", "\"id\""),
        (#"{"type":"move","id":"a1"}"#, "missing_field", "\"after\""),
        (#"{"type":"move","after":null}"#, "missing_field", "\"id\""),
        (#"{"type":"delete"}"#, "missing_field", "\"id\""),
    ])
    func missingFieldsAreNamed(_ frame: String, _ code: String, _ field: String) {
        let problem = error(frame)
        #expect(problem?.code == code, "\(frame): \(String(describing: problem))")
        #expect(problem?.message.contains(field) == true, "\(frame): \(problem?.message ?? "-")")
    }

    @Test(arguments: [
        (#"{"type":"done","id":"a1","done":"yes"}"#, "\"done\""),
        (#"{"type":"done","id":"a1","done":1}"#, "\"done\""),
        (#"{"type":"add","after":5}"#, "\"after\""),
        (#"{"type":"add","after":null,"title":5}"#, "\"title\""),
        (#"{"type":"add","after":null,"memo":["x"]}"#, "\"memo\""),
        (#"{"type":"delete","id":7}"#, "\"id\""),
        (#"{"type":"edit","id":"a1","title":"x","base":false}"#, "\"base\""),
        (#"{"type":"edit","id":"a1","title":"x","memo":"y","title_base":1}"#, "\"title_base\""),
        (#"{"type":"edit","id":"a1","title":"x","memo":"y","base":"z"}"#, "\"base\""),
        (#"{"type":"move","id":"a1","after":{}}"#, "\"after\""),
    ])
    func wrongTypesAreBadFieldNamingTheField(_ frame: String, _ field: String) {
        let problem = error(frame)
        #expect(problem?.code == "bad_field", "\(frame): \(String(describing: problem))")
        #expect(problem?.message.contains(field) == true, "\(frame): \(problem?.message ?? "-")")
    }

    @Test func t1BoundsAreBadField() {
        let long = String(repeating: "x", count: 1001)
        let cases: [(String, String)] = [
            (#"{"type":"add","id":"a b","after":null}"#, "\"a b\" is not an id: use 1 to 64 of A-Z a-z 0-9 _ -"),
            (#"{"type":"add","id":"","after":null}"#, "\"\" is not an id: use 1 to 64 of A-Z a-z 0-9 _ -"),
            (#"{"type":"add","id":"\#(String(repeating: "a", count: 65))","after":null}"#, "is not an id"),
            (#"{"type":"add","after":"no/such"}"#, "\"no/such\" is not an id"),
            (#"{"type":"move","id":"a1","after":"é"}"#, "\"é\" is not an id"),
            (#"{"type":"done","id":"a.1","done":true}"#, "\"a.1\" is not an id"),
            (#"{"type":"delete","id":"a\n1"}"#, "is not an id"),
            (#"{"type":"add","after":null,"title":"\#(long)"}"#, "the title is 1001 characters; at most 1000"),
            (#"{"type":"add","after":null,"memo":"\#(long)"}"#, "the memo is 1001 characters; at most 1000"),
            (#"{"type":"edit","id":"a1","title":"\#(long)"}"#, "the title is 1001 characters"),
            (#"{"type":"edit","id":"a1","memo":"x","base":"\#(long)"}"#, "the memo is 1001 characters"),
            (#"{"type":"add","after":null,"title":"two\nlines"}"#, "a title is one line: no line breaks (put more in the memo)"),
            (#"{"type":"edit","id":"a1","title":"a\r\nb"}"#, "a title is one line"),
        ]
        for (frame, message) in cases {
            let problem = error(frame)
            #expect(problem?.code == "bad_field", "\(frame): \(String(describing: problem))")
            #expect(problem?.message.contains(message) == true, "\(frame): \(problem?.message ?? "-")")
        }
        // At the bounds: accepted.
        #expect(error(#"{"type":"add","id":"\#(String(repeating: "a", count: 64))","after":null,"# +
                      #""title":"\#(String(repeating: "é", count: 1000))","memo":"a\nb"}"#) == nil)
    }

    @Test func unknownTypesNameWhatIsExpected() {
        let problem = error(#"{"type":"tick","id":"a1"}"#)
        #expect(problem?.code == "unknown_type")
        #expect(problem?.message == "unknown \"type\" \"tick\" on a todo board; expected one of add, edit, done, move, delete, editing, " +
                                    "join, subscribe, hello, ops")
        #expect(error(#"{"type":"select","letter":"A"}"#)?.code == "unknown_type", "another kind's intent")
        #expect(error(#"{"id":"a1"}"#)?.code == "missing_field")
        #expect(error(#"{"type":"add","after":null"#)?.code == "bad_json")
    }

    // MARK: changes, state, ack

    static let changes: [TodoList.Change] = [
        .add(id: "a1", after: nil, title: "Milk", memo: ""),
        .add(id: "b2", after: "a1", title: "Thé \"🍵\" \\ \u{1}", memo: "two\nlines\u{2028}"),
        .edit(id: "a1", title: .init("Milk", base: "Mil"), memo: nil), .edit(id: "a1", title: nil, memo: .init("x")),
        .edit(id: "a1", title: .init("e\u{301}"), memo: .init("", base: "")), .done(id: "a1", done: true), .done(id: "a1", done: false),
        .move(id: "a1", after: "b2"), .move(id: "a1", after: nil), .delete(id: "a1"),
    ]

    @Test func changeJSONDecodesToTheSameChange() throws {
        for change in Self.changes {
            let json = TodoList.changeJSON(change)
            let back = try JSONDecoder().decode(TodoList.Change.self, from: Data(json.utf8))
            #expect(back == change, "\(json)")
            #expect(Array(TodoList.changeJSON(back).utf8) == Array(json.utf8), "byte for byte: \(json)")
            let op = BoardCRDT.Operation(id: OperationID(replica: ReplicaID(3), seq: 4), lamport: 9, author: "ana", change: change)
            #expect(try JSONDecoder().decode(BoardCRDT.Operation<TodoList.Change>.self, from: Data(TodoList.operationJSON(op).utf8)) == op)
        }
        #expect(TodoList.changeJSON(.add(id: "a1", after: nil, title: "Milk",
                                         memo: "")) == #"{"op":"add","id":"a1","after":null,"title":"Milk","memo":""}"#)
        #expect(TodoList.changeJSON(.edit(id: "a1", title: .init("Milk", base: "Mil"),
                                          memo: nil)) == #"{"op":"edit","id":"a1","title":{"text":"Milk","base":"Mil"}}"#)
        #expect(TodoList.changeJSON(.done(id: "a1", done: true)) == #"{"op":"done","id":"a1","done":true}"#)
        #expect(TodoList.changeJSON(.move(id: "a1", after: "b2")) == #"{"op":"move","id":"a1","after":"b2"}"#)
        #expect(TodoList.changeJSON(.delete(id: "a1")) == #"{"op":"delete","id":"a1"}"#)
    }

    /// a1 Milk, b2 (deleted by bo), c3 done with an emoji and quotes: only live items, in order.
    func reminders() -> TodoList.State {
        TodoList.State(entries: [
            .init(id: "a1", title: "Milk", memo: "2 litres", titleBy: "ana"),
            .init(id: "b2", title: "Gone", deletedBy: "bo", deletedAt: 1),
            .init(id: "c3", title: "Call \"bo\" 📞", memo: "line 1\nline 2", done: true),
        ], deletions: 1)
    }

    @Test func stateMembersListOnlyLiveItemsInOrder() throws {
        let state = reminders()
        let members = TodoList.stateMembers(state)
        #expect(members == #""items":[{"id":"a1","title":"Milk","memo":"2 litres","done":false},{"id":"c3","title":"Call \"bo\" 📞","# +
                           #""memo":"line 1\nline 2","done":true}]"#)
        struct Frame: Decodable {
            struct Item: Decodable, Equatable {
                var id: String, title: String, memo: String, done: Bool
            }
            var items: [Item]
        }
        let frame = try JSONDecoder().decode(Frame.self, from: Data(("{" + members + "}").utf8))
        #expect(frame.items == state.items.map { Frame.Item(id: $0.id, title: $0.title, memo: $0.memo, done: $0.done) })
        #expect(frame.items.map(\.id) == ["a1", "c3"])
        #expect(TodoList.stateMembers(TodoList.initialState) == #""items":[]"#)
        // The whole state frame the hub writes is valid JSON too.
        let whole = HubMessage.state(board: "home", kind: "todo", version: 31, members: members, clients: 2, names: ["ana", "bo"])
        #expect(try JSONSerialization.jsonObject(with: Data(whole.utf8)) is [String: Any])
    }

    @Test func anAddsAckNamesItsItem() {
        let add = BoardCRDT.Operation(id: OperationID(replica: ReplicaID(1), seq: 1), lamport: 1, author: "ana",
                                      change: TodoList.Change.add(id: "Xy12ab9Z", after: nil, title: "", memo: ""))
        #expect(TodoList.ackMembers(for: add) == #""id":"Xy12ab9Z""#)
        let done = BoardCRDT.Operation(id: OperationID(replica: ReplicaID(1), seq: 2), lamport: 2, author: "ana",
                                       change: TodoList.Change.done(id: "a1", done: true))
        #expect(TodoList.ackMembers(for: done) == "")
        #expect(TodoList.ackMembers(for: nil) == "")
        #expect(TodoList.summary(of: .done(id: "a1", done: true)) == "your tick")
        #expect(TodoList.summary(of: .done(id: "a1", done: false)) == "your untick")
        #expect(TodoList.summary(of: .add(id: "a1", after: nil, title: "", memo: "")) == "your new reminder")
    }
}

/// The reminders list's hand scanner (`scanIntent`) against its full
/// decoder: every frame it reads, it reads as the decoder does (the same
/// frame with one unknown member added goes to the decoder).
@Suite struct TodoIntentScannerTests {
    static func parse(_ text: String) -> ClientMessage<TodoList>? {
        Array(text.utf8).withUnsafeBytes { try? ClientMessage<TodoList>.parse($0) }
    }

    static func scan(_ text: String) -> ClientMessage<TodoList>? {
        Array(text.utf8).withUnsafeBytes { TodoList.scanIntent($0) }
    }

    @Test(arguments: [
        #"{"type":"done","id":"a1","done":true}"#, #"{"type":"done","id":"a1","done":false,"ref":"r1","key":"k1"}"#,
        #"{"type":"move","id":"a1","after":null}"#, #"{"type":"move","id":"a1","after":"b2","ref":"r\"2"}"#,
        #"{"type":"delete","id":"a_b-9"}"#, #" { "type" : "delete" , "id" : "x" } "#, #"{"type":"done","id":"a\u0031","done":true}"#,
    ])
    func framesItReadsAreReadAsTheDecoderReadsThem(_ frame: String) throws {
        let scanned = try #require(Self.scan(frame), "the scanner reads \(frame)")
        let decoded = try #require(Self.parse(String(frame.trimmingCharacters(in: .whitespaces).dropLast()) + #","zz":0}"#))
        #expect(scanned == decoded)
    }

    @Test(arguments: [
        #"{"type":"done","id":"a 1","done":true}"#, #"{"type":"done","id":"a1"}"#, #"{"type":"done","id":"a1","done":1}"#,
        #"{"type":"move","id":"a1"}"#, #"{"type":"move","id":"a1","after":"a1","done":true}"#, #"{"type":"edit","id":"a1","title":"x"}"#,
        #"{"type":"delete","id":"a1","ref":"\#(String(repeating: "r", count: 65))"}"#, #"{"type":"delete","id":"a1","key":""}"#,
        #"{"type":"add","after":null}"#, #"{"type":"delete","id":"a1","title":"x"}"#,
    ])
    func anythingElseIsLeftToTheDecoder(_ frame: String) {
        #expect(Self.scan(frame) == nil, "\(frame)")
    }
}
