import BoardCRDT
import Foundation
import SyncWire
import Testing
@testable import SyncHub

/// The hub's protocol machine, driven with no socket: the test answers for the store.
struct HubCoreTests {
    var hub = HubCoreHarness()

    /// A text frame of `connection`, as the shell hands it over.
    mutating func frame(_ connection: UInt64, _ text: String) -> [HubAction] {
        hub.send(connection, text)
    }

    /// Commits what the core recorded, as the store does.
    mutating func commit() -> [HubAction] {
        hub.commit()
    }

    func sends(_ actions: [HubAction], to connection: UInt64) -> [[String: Any]] {
        actions.compactMap { action -> [String: Any]? in
            guard case let .send(id, text) = action, id == connection else { return nil }
            return try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        }
    }

    func published(_ actions: [HubAction]) -> [String: Any]? {
        for case let .publish(published) in actions {
            return try? JSONSerialization.jsonObject(with: Data(published.frame.utf8)) as? [String: Any]
        }
        return nil
    }

    @Test mutating func joinPublishesTheStateWithThePresenceCount() {
        hub.join(1)
        hub.join(2)
        let state = published(hub.turn())
        #expect(state?["clients"] as? Int == 2)
        #expect(state?["order"] as? [String] == [])
        hub.leave(2)
        #expect(published(hub.turn())?["clients"] as? Int == 1)
    }

    /// The ack and the new state wait for the store (durability), then go out together.
    @Test mutating func ackOnlyAfterCommit() {
        hub.join(1)
        _ = hub.turn()
        let immediate = frame(1, #"{"type":"select","letter":"C","ref":"r1"}"#)
        #expect(immediate.isEmpty)
        #expect(hub.turn().isEmpty)
        let after = commit()
        #expect(sends(after, to: 1).first?["type"] as? String == "ack")
        #expect(sends(after, to: 1).first?["version"] as? Int == 1)
        #expect(published(after)?["order"] as? [String] == ["C"])
    }

    /// B5: the seventh select is rejected with board_full.
    @Test mutating func seventhSelectRejected() {
        hub.join(1)
        for letter in ["A", "B", "C", "D", "E", "F", "G"] {
            _ = frame(1, #"{"type":"select","letter":"\#(letter)","ref":"\#(letter)"}"#)
        }
        let replies = sends(commit(), to: 1)
        #expect(replies.last?["type"] as? String == "rejected")
        #expect(replies.last?["code"] as? String == "board_full")
        #expect((hub.core.boards["k"] as? KindRoom<LetterBoard>)?.replica.state.order.count == 6)
    }

    /// B10: a malformed frame gets a coded error at once and changes nothing.
    @Test mutating func malformedFrameGetsError() {
        hub.join(1)
        let actions = frame(1, #"{"type":"select","letter":"7"}"#)
        #expect(sends(actions, to: 1).first?["code"] as? String == "bad_letter")
        hub.hold()
        #expect(hub.inFlight.isEmpty)
        #expect(hub.core.boards["k"]?.version == 0)
    }

    @Test mutating func rateLimitThenClose() {
        var limits = HubLimits()
        limits.messagesPerSecond = 1
        limits.messageBurst = 2
        limits.badFrameBurst = 3
        limits.badFramesPerSecond = 0.001
        hub = HubCoreHarness(limits: limits)
        hub.join(1)
        var all: [HubAction] = []
        for _ in 0..<10 {
            all += frame(1, #"{"type":"deselect","letter":"A"}"#)
        }
        #expect(sends(all, to: 1).contains { $0["code"] as? String == "rate_limited" })
        #expect(all.contains { if case .close(1, 1008, _) = $0 { true } else { false } })
    }

    /// Replica clients: hello gets what they lack; their operations are
    /// acked after commit and relayed to the other replicas.
    @Test mutating func replicaHelloOpsAndRelay() throws {
        hub.join(1)
        hub.join(2)
        _ = frame(1, #"{"type":"select","letter":"Q","ref":"q"}"#)
        _ = commit()
        let hello = frame(2, #"{"type":"hello","replica":9,"name":"bo"}"#)
        let sync = sends(hello, to: 2).first
        #expect(sync?["type"] as? String == "sync")
        #expect((sync?["operations"] as? [Any])?.count == 1)
        _ = frame(3, #"{"type":"hello","replica":9}"#)
        hub.join(3)
        _ = frame(3, #"{"type":"hello","replica":10}"#)
        let impostor = #"{"type":"ops","ref":"s0","operations":[{"id":[9,1],"lamport":50,"by":"ana","change":{"op":"select","# +
                       #""letter":"R"}}]}"#
        #expect(sends(frame(2, impostor), to: 2).first?["code"] as? String == "not_your_name", "a replica acts only under its hello's name")
        let ops = #"{"type":"ops","ref":"s1","operations":[{"id":[9,1],"lamport":50,"by":"bo","change":{"op":"select","letter":"R"}}]}"#
        #expect(frame(2, ops).isEmpty)
        let after = commit()
        #expect(sends(after, to: 2).first?["type"] as? String == "ack")
        #expect(after.contains { if case let .relay(_, to) = $0 { to == [3] } else { false } })
        #expect(published(after)?["order"] as? [String] == ["Q", "R"])
        #expect(published(after)?["names"] as? [String] == ["bo"])
    }

    @Test mutating func idleBoardsAreEvictedOnlyWhenDurable() {
        var limits = HubLimits()
        limits.evictAfterSeconds = 1
        hub = HubCoreHarness(limits: limits)
        var memory = HubCore(hubReplica: ReplicaID(1), limits: limits)
        let start = HubClock(seconds: 1), later = HubClock(seconds: 3.5)
        hub.join(1)
        hub.leave(1)
        _ = memory.handle(.upgraded(connection: 1, board: BoardAddress(key: "k")), at: start)
        _ = memory.handle(.left(connection: 1), at: start)
        hub.advance(seconds: 2.5)
        hub.handle(.tick)
        _ = memory.handle(.tick, at: later)
        #expect(!hub.core.holds(board: BoardAddress(key: "k")), "a stored board leaves memory")
        #expect(hub.core.counters.boardsEvicted == 1)
        #expect(memory.holds(board: BoardAddress(key: "k")), "an in-memory board has nowhere else to be")
    }

    /// Without a store a record is durable at the end of the turn that made it.
    @Test func inMemoryTheTurnsEndCommits() {
        var memory = HubCore(hubReplica: ReplicaID(1), limits: HubLimits())
        let now = HubClock(seconds: 1)
        let join = memory.handle(.upgraded(connection: 1, board: BoardAddress(key: "k")), at: now)
        #expect(!join.contains { if case .store = $0 { true } else { false } }, "nothing is loaded")
        var text = #"{"type":"select","letter":"C","ref":"r1"}"#
        let immediate = text.withUTF8 { memory.handle(.frame(connection: 1, UnsafeRawBufferPointer($0)), at: now) }
        #expect(immediate.isEmpty)
        let turn = memory.handle(.turnEnded, at: now)
        #expect(!turn.contains { if case .store = $0 { true } else { false } }, "nothing goes to a store")
        #expect(sends(turn, to: 1).first?["type"] as? String == "ack")
        #expect(published(turn)?["order"] as? [String] == ["C"])
    }

    /// The board's own replica id is public (thin intents' operations carry
    /// it); a client that says hello under it is refused, so it can never
    /// send operations that would move the hub's acknowledged ones.
    @Test mutating func aHelloUnderTheBoardsOwnIdIsRefused() {
        hub.join(1)
        _ = frame(1, #"{"type":"select","letter":"A"}"#)
        _ = commit()
        let hello = frame(1, #"{"type":"hello","replica":1}"#)
        #expect(sends(hello, to: 1).first?["code"] as? String == "bad_replica")
        let ops = #"{"type":"ops","ref":"x","operations":[{"id":[1,1],"lamport":99,"change":{"op":"select","letter":"A"}}]}"#
        #expect(sends(frame(1, ops), to: 1).first?["code"] as? String == "hello_first")
        #expect((hub.core.boards["k"] as? KindRoom<LetterBoard>)?.replica.log.map(\.lamport) == [1], "the hub's operation did not move")
    }

    @Test func boardPaths() {
        #expect(BoardAddress.parse(path: "/boards/kitchen-1.b_2") == .success(BoardAddress(kind: "letters", name: "kitchen-1.b_2")))
        #expect(BoardAddress(key: "kitchen").key == "kitchen")
        guard case let .failure(unknown) = BoardAddress.parse(path: "/other") else {
            Issue.record("accepted /other")
            return
        }
        #expect(unknown.status == 404)
        #expect(unknown.message.contains("/boards/NAME"))
        for bad in ["/boards/", "/boards/.x", "/boards/a b", "/boards/" + String(repeating: "a", count: 65), "/boards/é", "/boards/a/b"] {
            guard case let .failure(refusal) = BoardAddress.parse(path: bad) else {
                Issue.record("accepted \(bad)")
                continue
            }
            #expect(refusal.status == 400)
        }
    }
}
