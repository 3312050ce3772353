// The reminders list (`TodoList`, docs/rules/todo.md) in the decoder fuzz
// harness (docs/FUZZING.md): compiled with DecoderFuzz.swift into the
// harness's module by scripts/fuzz.sh.
//
// Besides checks 2-5, which every kind gets (`KindFuzz<TodoList>`), this
// file gives the harness:
// - the list's main invariants, checked apart from `TodoList.violations` on
//   every decoded state and every replica after every step: ids valid and
//   each once, texts within T1, at most `tombstonesKept` tombstones with
//   distinct delete numbers within `deletions`;
// - a read-back of the `state` frame's `items`: exactly the live items, in
//   order, every string byte for byte;
// - `TodoOracle.check`: a parsed todo intent is performed by a replica on a
//   small list (live, deleted and done items) and must leave it consistent,
//   a made-up id being 8 fresh characters; decoded todo operations are
//   replayed one by one on a state, where the notices of each (TC2) must be
//   `overwritten` ones for someone other than its author, about the
//   item it edits, and the items shown must stay the applied adds less the
//   applied deletes.

import Foundation
@testable import BoardCRDT

extension TodoList: FuzzedKind {
    static func fuzz(_ bytes: UnsafeRawBufferPointer) {
        let parsed = KindFuzz<TodoList>.parse(bytes)
        KindFuzz<TodoList>.run(bytes, parsed: parsed)
        TodoOracle.check(bytes, parsed: parsed)
    }

    static func independentViolations(of state: State) -> [String] {
        var problems: [String] = []
        var seen = Set<[UInt8]>()
        var numbers = Set<UInt64>()
        var tombstones = 0
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-".utf8)
        for entry in state.entries {
            let id = Array(entry.id.utf8)
            if id.isEmpty || id.count > 64 || !id.allSatisfy(allowed.contains) { problems.append("bad id \(entry.id)") }
            if !seen.insert(id).inserted { problems.append("\(entry.id) twice") }
            if entry.title.count > 1000 || entry.memo.count > 1000 { problems.append("\(entry.id): a text over 1000 characters") }
            if entry.title.unicodeScalars.contains(where: { "\n\r\u{0B}\u{0C}\u{85}\u{2028}\u{2029}".unicodeScalars.contains($0) }) {
                problems.append("\(entry.id): a line break in the title")
            }
            if entry.deletedBy != nil {
                tombstones += 1
                if entry.deletedAt == 0 || entry.deletedAt > state.deletions || !numbers.insert(entry.deletedAt).inserted {
                    problems.append("\(entry.id): delete number \(entry.deletedAt) of \(state.deletions)")
                }
            } else if entry.deletedAt != 0 {
                problems.append("\(entry.id): live with a delete number")
            }
        }
        if tombstones > 1000 { problems.append("\(tombstones) tombstones") }
        return problems
    }

    private struct StateFrame: Decodable {
        struct Item: Decodable, Equatable {
            var id: String
            var title: String
            var memo: String
            var done: Bool
        }
        var type: String
        var kind: String
        var items: [Item]
    }

    static func stateFrameProblem(_ frame: Data, _ state: State) -> String? {
        let read: StateFrame
        do { read = try JSONDecoder().decode(StateFrame.self, from: frame) } catch { return "does not decode: \(error)" }
        guard read.type == "state", read.kind == name else { return "type \(read.type), kind \(read.kind)" }
        let live = state.entries.filter { $0.deletedBy == nil }
        let bytes = { (items: [(String, String, String, Bool)]) in
            items.map { [Array($0.0.utf8), Array($0.1.utf8), Array($0.2.utf8), [$0.3 ? 1 : 0]] }
        }
        guard bytes(read.items.map { ($0.id, $0.title, $0.memo,
                                      $0.done) }) == bytes(live.map { ($0.id, $0.title, $0.memo, $0.done) }) else {
            return "items read back \(read.items), the live items are \(live)"
        }
        return nil
    }
}

enum TodoOracle {
    typealias Op = BoardCRDT.Operation<TodoList.Change>

    static func fail(_ what: String, _ bytes: UnsafeRawBufferPointer, _ detail: String) -> Never {
        DecoderFuzz.fail("todo: \(what)", bytes, detail)
    }

    /// a1 "Buy milk" (by ana), b2 deleted by bo, c3 done: what intents meet.
    static let small: TodoList.State = {
        var state = TodoList.initialState
        for (index, id) in ["a1", "b2", "c3"].enumerated() {
            _ = TodoList.apply(Op(id: OperationID(replica: ReplicaID(1), seq: UInt64(index + 1)), lamport: UInt64(index + 1), author: "ana",
                                  change: .add(id: id, after: index == 0 ? nil : ["a1", "b2"][index - 1],
                                               title: id == "a1" ? "Buy milk" : id, memo: "")),
                               to: &state)
        }
        _ = TodoList.apply(Op(id: OperationID(replica: ReplicaID(2), seq: 1), lamport: 4, author: "bo", change: .delete(id: "b2")),
                           to: &state)
        _ = TodoList.apply(Op(id: OperationID(replica: ReplicaID(2), seq: 2), lamport: 5, author: "bo",
                              change: .done(id: "c3", done: true)), to: &state)
        return state
    }()

    static func check(_ bytes: UnsafeRawBufferPointer, parsed: Result<ClientMessage<TodoList>, ProtocolError>) {
        switch parsed {
        case let .success(.intent(intent, _, _)):
            performed(intent, bytes)
        case let .success(.operations(operations, _)):
            replayed(operations, on: TodoList.initialState, bytes)
            replayed(operations, on: small, bytes)
        default:
            break
        }
        let decoder = JSONDecoder()
        let data = Data(bytes)
        if let operations = try? decoder.decode([Op].self, from: data) { replayed(operations, on: small, bytes) }
        if let frame = try? decoder.decode(SyncFrame<TodoList>.self, from: data) {
            replayed(frame.operations, on: frame.checkpoint?.state ?? small, bytes)
        }
    }

    /// A thin client's intent, performed on the hub's copy of `small`.
    static func performed(_ intent: TodoList.Intent, _ bytes: UnsafeRawBufferPointer) {
        var replica = Replica<TodoList>(id: DecoderFuzz.hubID,
                                        checkpoint: Checkpoint(state: small, frontier: .origin, versions: VersionVector()),
                                        limits: ReplicaLimits(keptOperations: DecoderFuzz.hubKept, sealsOrder: true))
        let before = replica.state
        do throws(TodoRefusal) {
            guard let op = try replica.perform(intent, by: "fuzz") else {
                if replica.state != before { fail("intent-no-op", bytes, "\(intent) recorded nothing but changed the list") }
                return
            }
            if case .add(nil, _, _, _) = intent {
                let id = op.change.itemID
                if id.utf8.count != 8
                    || !id.utf8.allSatisfy({
                        $0 < 0x80 && (Character(Unicode.Scalar($0)).isLetter || Character(Unicode.Scalar($0)).isNumber)
                    })
                    || before.index(of: id) != nil {
                    fail("made-up-id", bytes, "\(intent) made up \(id)")
                }
            }
            if replica.outcomes.last != .applied && replica.log.last?.id == op.id {
                fail("intent-applied", bytes, "\(intent) recorded \(op.change) but it was \(String(describing: replica.outcomes.last))")
            }
        } catch {
            if replica.state != before || !replica.log.isEmpty {
                fail("intent-refused", bytes, "\(intent) was refused \(error) but changed the list")
            }
        }
        let problems = replica.checkInvariants() + TodoList.independentViolations(of: replica.state)
        if !problems.isEmpty { fail("intent-invariants", bytes, "\(intent):\n" + problems.joined(separator: "\n")) }
    }

    /// Decoded operations applied one by one, in the order given.
    static func replayed(_ operations: [Op], on start: TodoList.State, _ bytes: UnsafeRawBufferPointer) {
        guard !operations.isEmpty, TodoList.violations(of: start).isEmpty else { return }
        var state = start
        var live = Set(start.entries.filter { $0.deletedBy == nil }.map(\.id))
        for op in operations {
            let notices = TodoList.notices(of: op, in: state)
            for notice in notices {
                guard notice.code == "overwritten", notice.to != op.author, !notice.to.isEmpty, notice.item == op.change.itemID,
                      notice.field == "title" || notice.field == "memo", case .edit = op.change else {
                    fail("notices", bytes, "\(op) gave \(notice) on \(state)")
                }
            }
            let outcome = TodoList.apply(op, to: &state)
            if !notices.isEmpty, outcome != .applied { fail("notices", bytes, "\(op) told \(notices) but was \(outcome)") }
            switch (op.change, outcome) {
            case let (.add(id, _, _, _), .applied): if !live.insert(id).inserted { fail("live-items", bytes, "\(op) added \(id) twice") }
            case let (.delete(id), .applied):
                if live.remove(id) == nil { fail("live-items", bytes, "\(op) deleted \(id), not on the list") }
            default: break
            }
            let shown = state.entries.filter { $0.deletedBy == nil }.map(\.id)
            let problems = TodoList.violations(of: state) + TodoList.independentViolations(of: state)
            if !problems.isEmpty || Set(shown) != live || shown.count != live.count {
                fail("replay", bytes, "after \(op): shown \(shown), expected \(live.sorted())\n" + problems.joined(separator: "\n"))
            }
        }
    }
}
