import BoardCRDT
import Foundation
import SyncWire
import Testing
@testable import SyncHub

/// The hub's protocol machine, driven with no socket and no store.
struct HubCoreTests {
    var core = HubCore(hubReplica: ReplicaID(1), limits: HubLimits())

    /// A text frame of `connection`, parsed by its board's kind as the shell does.
    mutating func frame(_ connection: UInt64, _ text: String) -> [HubAction] {
        var text = text
        guard let parsed = text.withUTF8({ core.parse(connection: connection, UnsafeRawBufferPointer($0)) }) else { return [] }
        return core.handle(.frame(connection: connection, parsed))
    }

    /// Commits what the core recorded, as the in-memory shell does.
    mutating func commit() -> [HubAction] {
        let records = core.takeRecords()
        return core.handle(.committed(records)) + core.publishChanged()
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
        _ = core.handle(.joined(connection: 1, board: BoardAddress(key: "k"), stored: nil))
        _ = core.handle(.joined(connection: 2, board: BoardAddress(key: "k"), stored: nil))
        let state = published(core.publishChanged())
        #expect(state?["clients"] as? Int == 2)
        #expect(state?["order"] as? [String] == [])
        _ = core.handle(.left(connection: 2))
        #expect(published(core.publishChanged())?["clients"] as? Int == 1)
    }

    /// The ack and the new state wait for the store (durability), then go out together.
    @Test mutating func ackOnlyAfterCommit() {
        _ = core.handle(.joined(connection: 1, board: BoardAddress(key: "k"), stored: nil))
        _ = core.publishChanged()
        let immediate = frame(1, #"{"type":"select","letter":"C","ref":"r1"}"#)
        #expect(immediate.isEmpty)
        #expect(core.publishChanged().isEmpty)
        let after = commit()
        #expect(sends(after, to: 1).first?["type"] as? String == "ack")
        #expect(sends(after, to: 1).first?["version"] as? Int == 1)
        #expect(published(after)?["order"] as? [String] == ["C"])
    }

    /// B5: the seventh select is rejected with board_full.
    @Test mutating func seventhSelectRejected() {
        _ = core.handle(.joined(connection: 1, board: BoardAddress(key: "k"), stored: nil))
        for letter in ["A", "B", "C", "D", "E", "F", "G"] {
            _ = frame(1, #"{"type":"select","letter":"\#(letter)","ref":"\#(letter)"}"#)
        }
        let replies = sends(commit(), to: 1)
        #expect(replies.last?["type"] as? String == "rejected")
        #expect(replies.last?["code"] as? String == "board_full")
        #expect((core.boards["k"] as? KindRoom<LetterBoard>)?.replica.state.order.count == 6)
    }

    /// B10: a malformed frame gets a coded error at once and changes nothing.
    @Test mutating func malformedFrameGetsError() {
        _ = core.handle(.joined(connection: 1, board: BoardAddress(key: "k"), stored: nil))
        let actions = frame(1, #"{"type":"select","letter":"7"}"#)
        #expect(sends(actions, to: 1).first?["code"] as? String == "bad_letter")
        #expect(core.takeRecords().isEmpty)
        #expect(core.boards["k"]?.version == 0)
    }

    @Test mutating func rateLimitThenClose() {
        var limits = HubLimits()
        limits.messagesPerSecond = 1
        limits.messageBurst = 2
        limits.badFrameBurst = 3
        limits.badFramesPerSecond = 0.001
        core = HubCore(hubReplica: ReplicaID(1), limits: limits)
        _ = core.handle(.joined(connection: 1, board: BoardAddress(key: "k"), stored: nil))
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
        _ = core.handle(.joined(connection: 1, board: BoardAddress(key: "k"), stored: nil))
        _ = core.handle(.joined(connection: 2, board: BoardAddress(key: "k"), stored: nil))
        _ = frame(1, #"{"type":"select","letter":"Q","ref":"q"}"#)
        _ = commit()
        let hello = frame(2, #"{"type":"hello","replica":9,"name":"bo"}"#)
        let sync = sends(hello, to: 2).first
        #expect(sync?["type"] as? String == "sync")
        #expect((sync?["operations"] as? [Any])?.count == 1)
        _ = frame(3, #"{"type":"hello","replica":9}"#)
        _ = core.handle(.joined(connection: 3, board: BoardAddress(key: "k"), stored: nil))
        _ = frame(3, #"{"type":"hello","replica":10}"#)
        let impostor = #"{"type":"ops","ref":"s0","operations":[{"id":[9,1],"lamport":50,"by":"ana","change":{"op":"select","letter":"R"}}]}"#
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
        core = HubCore(hubReplica: ReplicaID(1), limits: limits)
        core.now = 1_000_000_000
        _ = core.handle(.joined(connection: 1, board: BoardAddress(key: "k"), stored: nil))
        _ = core.handle(.left(connection: 1))
        core.now += 2_000_000_000
        #expect(core.evictIdle(durable: false).isEmpty)
        #expect(core.evictIdle(durable: true) == ["k"])
        #expect(!core.holds(board: BoardAddress(key: "k")))
    }

    /// The board's own replica id is public (thin intents' operations carry
    /// it); a client that says hello under it is refused, so it can never
    /// send operations that would move the hub's acknowledged ones.
    @Test mutating func aHelloUnderTheBoardsOwnIdIsRefused() {
        _ = core.handle(.joined(connection: 1, board: BoardAddress(key: "k"), stored: nil))
        _ = frame(1, #"{"type":"select","letter":"A"}"#)
        _ = commit()
        let hello = frame(1, #"{"type":"hello","replica":1}"#)
        #expect(sends(hello, to: 1).first?["code"] as? String == "bad_replica")
        let ops = #"{"type":"ops","ref":"x","operations":[{"id":[1,1],"lamport":99,"change":{"op":"select","letter":"A"}}]}"#
        #expect(sends(frame(1, ops), to: 1).first?["code"] as? String == "hello_first")
        #expect((core.boards["k"] as? KindRoom<LetterBoard>)?.replica.log.map(\.lamport) == [1], "the hub's operation did not move")
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
