import Foundation
import Testing
@testable import BoardCRDT

/// Changes and states of the reminders list as JSON (the store and the
/// replica protocol carry them): round trips, and decoded input checked (a
/// checkpoint from a peer is input like any other).
@Suite struct TodoCodableTests {
    func roundTrip<T: Codable & Equatable>(_ value: T) throws -> T {
        try JSONDecoder().decode(T.self, from: try JSONEncoder().encode(value))
    }

    func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(text.utf8))
    }

    static let changes: [TodoList.Change] = [
        .add(id: "a1", after: nil, title: "Milk", memo: ""), .add(id: "b-2_X", after: "a1", title: "", memo: "2 litres\nsoy"),
        .add(id: "e", after: nil, title: "Thé 🍵 \"quoted\" \\ \u{1}", memo: "e\u{301}"),
        .edit(id: "a1", title: .init("Milk", base: "Mil"), memo: nil), .edit(id: "a1", title: nil, memo: .init("x")),
        .edit(id: "a1", title: .init(""), memo: .init("", base: "")),
        .done(id: "a1", done: true), .done(id: "a1", done: false),
        .move(id: "a1", after: "b2"), .move(id: "a1", after: nil), .delete(id: "a1"),
    ]

    @Test(arguments: changes)
    func changeRoundTrips(_ change: TodoList.Change) throws {
        #expect(try roundTrip(change) == change)
        let operation = Operation(id: OperationID(replica: ReplicaID(7), seq: 2), lamport: 5, author: "ana \"a\" ü", change: change)
        #expect(try roundTrip(operation) == operation)
    }

    @Test func changeJSONIsCompact() throws {
        #expect(try json(TodoList.Change.add(id: "a1", after: nil, title: "Milk",
                                             memo: "")) == #"{"after":null,"id":"a1","memo":"","op":"add","title":"Milk"}"#)
        #expect(try json(TodoList.Change.edit(id: "a1", title: .init("Milk", base: "Mil"),
                                              memo: nil)) == #"{"id":"a1","op":"edit","title":{"base":"Mil","text":"Milk"}}"#)
        #expect(try json(TodoList.Change.edit(id: "a1", title: nil, memo: .init("x"))) == #"{"id":"a1","memo":{"text":"x"},"op":"edit"}"#)
        #expect(try json(TodoList.Change.done(id: "a1", done: true)) == #"{"done":true,"id":"a1","op":"done"}"#)
        #expect(try json(TodoList.Change.move(id: "a1", after: nil)) == #"{"after":null,"id":"a1","op":"move"}"#)
        #expect(try json(TodoList.Change.delete(id: "a1")) == #"{"id":"a1","op":"delete"}"#)
        // The forms in TodoList+Codable's documentation, and `after` left out meaning the top.
        #expect(try decode(TodoList.Change.self, #"{"op":"move","id":"a1"}"#) == .move(id: "a1", after: nil))
        #expect(try decode(TodoList.Change.self,
                           #"{"op":"add","id":"a1","title":"","memo":""}"#) == .add(id: "a1", after: nil, title: "", memo: ""))
    }

    @Test(arguments: [
        #"{"op":"tick","id":"a1"}"#, #"{"op":"done","id":"a1"}"#, #"{"op":"done","id":"a1","done":"yes"}"#,
        #"{"op":"delete"}"#, #"{"op":"add","id":"a1","after":null,"title":"x"}"#, #"{"op":"edit","id":"a1","title":"x"}"#,
        #"{"op":"edit","id":"a1","title":{"base":"x"}}"#, #"{"id":"a1"}"#, #"{"op":"move","id":7}"#,
    ])
    func malformedChangesAreRefused(_ text: String) {
        #expect(throws: DecodingError.self) { try decode(TodoList.Change.self, text) }
    }

    /// Changes that decode but break T1 are still changes: `apply` refuses
    /// them where they land (a peer's input is never trusted).
    @Test func aDecodedChangeBreakingT1IsRefusedByApply() throws {
        let change = try decode(TodoList.Change.self, #"{"op":"add","id":"no spaces","after":null,"title":"a\nb","memo":""}"#)
        var state = TodoList.initialState
        #expect(applyTodo(change, to: &state) == .refused(.badID("no spaces")))
        let edit = try decode(TodoList.Change.self, #"{"op":"edit","id":"a1"}"#)
        #expect(edit == .edit(id: "a1", title: nil, memo: nil))
        state = reminders("a1")
        #expect(applyTodo(edit, to: &state) == .refused(.emptyEdit))
    }

    @Test func stateRoundTripsWithAuthorsAndTombstones() throws {
        var state = reminders([("a1", "Milk"), ("b2", "Bread"), ("c3", "Thé 🍵")], by: "ana")
        applyTodo(.edit(id: "a1", title: nil, memo: .init("2 litres", base: "")), by: "bo", to: &state)
        applyTodo(.done(id: "c3", done: true), to: &state, seq: 2)
        applyTodo(.delete(id: "b2"), by: "cy", to: &state, seq: 3)
        applyTodo(.add(id: "n1", after: nil, title: "", memo: ""), by: "", to: &state, seq: 4)
        let back = try roundTrip(state)
        #expect(back == state)
        #expect(back.entries.map(\.titleBy) == state.entries.map(\.titleBy))
        #expect(back.deleter(of: "b2") == "cy")
        #expect(try json(TodoList.State(entries: [.init(id: "a1", title: "Milk", titleBy: "ana", memoBy: "ana"),
                                                  .init(id: "b2", deletedBy: "bo", deletedAt: 3)], deletions: 3))
            == #"{"deletions":3,"entries":[{"done":false,"id":"a1","memo":"","memo_by":"ana","title":"Milk","title_by":"ana"},"# +
               #"{"deleted_at":3,"deleted_by":"bo","done":false,"id":"b2","memo":"","title":""}]}"#)
        let checkpoint = Checkpoint<TodoList>(state: state, frontier: Stamp(lamport: 9, replica: ReplicaID(2)), versions: VersionVector())
        #expect(try roundTrip(checkpoint) == checkpoint)
    }

    /// A deleted item keeps its place and who deleted it (TC3, TC5), never
    /// its text: not in the state, nor in a checkpoint (what `sync` carries).
    @Test func aDeletedItemKeepsNoText() throws {
        var state = reminders([("a1", "Milk")], by: "ana")
        applyTodo(.edit(id: "a1", title: nil, memo: .init("secret memo", base: "")), by: "bo", to: &state)
        applyTodo(.delete(id: "a1"), by: "cy", to: &state, seq: 2)
        let entry = try #require(state.entries.first)
        #expect(entry.title.isEmpty && entry.memo.isEmpty && entry.titleBy.isEmpty && entry.memoBy.isEmpty && entry.deletedBy == "cy")
        let text = try json(Checkpoint<TodoList>(state: state, frontier: Stamp(lamport: 2, replica: ReplicaID(2)),
                                                 versions: VersionVector()))
        #expect(!text.contains("Milk") && !text.contains("secret memo"), "\(text)")
        #expect(TodoList.violations(of: state).isEmpty)
        // A tombstone stored with its text (before this rule) drops it when read.
        let old = try decode(
            TodoList.State.self,
            #"{"deletions":1,"entries":[{"id":"a1","title":"Milk","memo":"m","done":true,"deleted_by":"cy","deleted_at":1}]}"#)
        #expect(old.entries.first?.title == "" && old.entries.first?.isDeleted == true)
    }

    /// A checkpoint's state from a peer must pass `violations`: each broken
    /// one is refused with the problem named.
    @Test(arguments: [
        (#"{"entries":[{"id":"a1","title":"","memo":"","done":false},{"id":"a1","title":"","memo":"","done":false}],"deletions":0}"#,
         "a1 is on the list twice"),
        (#"{"entries":[{"id":"a 1","title":"","memo":"","done":false}],"deletions":0}"#, "is not a valid id"),
        (#"{"entries":[{"id":"","title":"","memo":"","done":false}],"deletions":0}"#, "is not a valid id"),
        (#"{"entries":[{"id":"a1","title":"two\nlines","memo":"","done":false}],"deletions":0}"#, "a title is one line"),
        (#"{"entries":[{"id":"a1","title":"","memo":"","done":false,"deleted_by":"bo"}],"deletions":1}"#, "has delete number 0"),
        (#"{"entries":[{"id":"a1","title":"","memo":"","done":false,"deleted_by":"bo","deleted_at":2}],"deletions":1}"#,
         "has delete number 2 of 1"),
        (#"{"entries":[{"id":"a1","title":"","memo":"","done":false,"deleted_at":1}],"deletions":1}"#, "is live with a delete number"),
    ])
    func invalidCheckpointStatesAreRefused(_ text: String, _ problem: String) {
        do {
            _ = try decode(TodoList.State.self, text)
            Issue.record("accepted \(text)")
        } catch let DecodingError.dataCorrupted(context) {
            #expect(context.debugDescription.hasPrefix("not a valid list: "))
            #expect(context.debugDescription.contains(problem), "\(context.debugDescription)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func aStateOverTheTextBoundOrTombstoneBoundIsRefused() throws {
        let long = String(repeating: "x", count: 1001)
        #expect(throws: DecodingError.self) {
            try decode(TodoList.State.self, #"{"entries":[{"id":"a1","title":"\#(long)","memo":"","done":false}],"deletions":0}"#)
        }
        let tombstones = (1...1001).map { #"{"id":"d\#($0)","title":"","memo":"","done":false,"deleted_by":"","deleted_at":\#($0)}"# }
        #expect(throws: DecodingError.self) {
            try decode(TodoList.State.self, #"{"entries":[\#(tombstones.joined(separator: ","))],"deletions":1001}"#)
        }
        // 1,000 exactly is fine.
        let kept = tombstones.dropFirst().joined(separator: ",")
        #expect(try decode(TodoList.State.self, #"{"entries":[\#(kept)],"deletions":1001}"#).entries.count == 1000)
    }

    /// A checkpoint from a peer whose delete count is at 2^64 - 1 passes
    /// `violations` (no tombstone is numbered beyond it), and the next
    /// delete then overflows `deletions += 1` and traps (`apply` must take
    /// every change in every state). Found reading `TodoList.apply` for the
    /// fuzz harness; the same class as the stock's `made` overflow (2e7b477).
    /// Either the decoder refuses such a count or a delete survives it.
    @Test func aDecodedDeleteCountLeavesRoomForTheNextDelete() throws {
        // A checkpoint counting UInt64.max deletes would trap the next delete: refused as input.
        let text = #"{"entries":[{"id":"a1","title":"","memo":"","done":false}],"deletions":18446744073709551615}"#
        #expect(throws: DecodingError.self) { try decode(TodoList.State.self, text) }
        let near = #"{"entries":[{"id":"a1","title":"","memo":"","done":false}],"deletions":4611686018427387903}"#
        var state = try decode(TodoList.State.self, near)
        #expect(TodoList.apply(Operation(id: OperationID(replica: ReplicaID(1), seq: 1), lamport: 1, change: .delete(id: "a1")),
                               to: &state) == .applied)
    }

    @Test(arguments: [#"{"entries":[]}"#, #"{"deletions":0}"#, #"{"entries":[{"id":"a1"}],"deletions":0}"#,
                      #"{"entries":[],"deletions":-1}"#, #"{"entries":{},"deletions":0}"#])
    func malformedStatesAreRefused(_ text: String) {
        #expect(throws: DecodingError.self) { try decode(TodoList.State.self, text) }
    }

    /// A replica adopts a valid checkpoint of the list and goes on from it.
    @Test func aReplicaStartsFromADecodedCheckpoint() throws {
        var hub = hubList(1, reminders("a1 b2 c3"), keptOperations: 1)
        for intent in [TodoList.Intent.delete(id: "b2"), .add(id: "n1", after: "b2", title: "New", memo: ""),
                       .done(id: "a1", done: true), .move(id: "a1", after: "c3")] {
            try act(&hub, intent, by: "ana")
        }
        #expect(hub.checkpoint.state != reminders("a1 b2 c3"), "the hub compacted")
        let checkpoint = try roundTrip(hub.checkpoint)
        var client = listReplica(2)
        _ = client.apply(Delta(checkpoint: checkpoint, operations: hub.log), freshID: { ReplicaID(99) })
        #expect(client.state == hub.state)
        #expect(idsText(client) == "n1 c3 a1")
        expectTodoInvariants(client)
    }
}
