import BoardCRDT
import Foundation
import SyncWire
import Testing
@testable import SyncHub

/// R16 in the core, event by event and with no I/O: a board's load is an
/// action, its content a later event, the clock an event too. Whoever waits
/// for a board waits alone; nobody else is held up.
struct HubCoreLoadingTests {
    typealias H = HubCoreHarness

    static func closes(_ actions: [HubAction]) -> [String] {
        actions.compactMap { if case let .close(id, code, reason) = $0 { "\(id) \(code) \(reason)" } else { nil } }
    }

    static func tickets(_ actions: [HubAction]) -> [UInt64] {
        actions.compactMap { if case let .store(.load(ticket, _, _)) = $0 { ticket } else { nil } }
    }

    static func loaded(_ ticket: UInt64, _ board: String, _ stored: StoredBoard? = nil) -> HubEvent {
        .store(.loaded(ticket: ticket, board: board, .success(stored)))
    }

    @Test func aJoinWhoseLoadAnswersLateWaitsAloneForIt() throws {
        var hub = H()
        let asked = hub.handle(.upgraded(connection: 1, board: BoardAddress(key: "slow")), answerLoads: false)
        #expect(H.loads(asked) == ["slow"])
        #expect(hub.core.boardOf[1] == nil, "not on its board before the board is read")
        // Meanwhile another board's client comes, changes it and is answered.
        hub.join(2, board: "quick")
        hub.send(2, #"{"type":"select","letter":"A","ref":"a"}"#)
        let other = hub.commit()
        #expect(H.frames(other, to: 2).first?["type"] as? String == "ack")
        #expect(H.published(other)?["board"] as? String == "quick")
        // The read answers late: only now is 1 seated and shown its board.
        hub.advance(seconds: 3)
        let ticket = try #require(Self.tickets(asked).first)
        hub.handle(Self.loaded(ticket, "slow"))
        let shown = hub.turn()
        #expect(H.published(shown)?["board"] as? String == "slow")
        #expect(hub.core.boardOf[1] == "slow")
    }

    @Test func aLoadThatFailsClosesItsWaitersWith1011AndTheNextJoinReadsAgain() throws {
        var hub = H()
        let asked = hub.handle(.upgraded(connection: 1, board: BoardAddress(key: "k")), answerLoads: false)
        let ticket = try #require(Self.tickets(asked).first)
        let failed = hub.handle(.store(.loaded(ticket: ticket, board: "k", .failure(StoreFailure(message: "disk I/O error")))))
        #expect(Self.closes(failed) == ["1 1011 board could not be loaded"])
        #expect(!hub.core.holds(board: BoardAddress(key: "k")))
        #expect(hub.core.counters.boardsUnreadable == 1)
        let again = hub.handle(.upgraded(connection: 2, board: BoardAddress(key: "k")), answerLoads: false)
        #expect(H.loads(again) == ["k"], "a failed read is not remembered: the next join asks again")
    }

    @Test func aLoadThatTimesOutClosesItsWaitersAndItsLateAnswerIsIgnored() throws {
        var hub = H()
        let asked = hub.handle(.upgraded(connection: 1, board: BoardAddress(key: "k")), answerLoads: false)
        let ticket = try #require(Self.tickets(asked).first)
        hub.advance(seconds: 9.9)
        #expect(Self.closes(hub.handle(.tick)).isEmpty, "within its bound it waits")
        hub.advance(seconds: 0.2)
        #expect(Self.closes(hub.handle(.tick)) == ["1 1011 the board could not be read within 10.0 s; try again"])
        #expect(hub.core.counters.loadsTimedOut == 1)
        let late = hub.handle(Self.loaded(ticket, "k"))
        #expect(late.isEmpty, "nobody waits for it any more")
        #expect(!hub.core.holds(board: BoardAddress(key: "k")))
        #expect(hub.core.boardOf[1] == nil)
    }

    @Test func twoJoinsOfOneBoardWhileItsLoadIsInFlightShareOneRead() throws {
        var hub = H()
        let first = hub.handle(.upgraded(connection: 1, board: BoardAddress(key: "k")), answerLoads: false)
        let second = hub.handle(.upgraded(connection: 2, board: BoardAddress(key: "k")), answerLoads: false)
        #expect(H.loads(first) == ["k"])
        #expect(H.loads(second).isEmpty, "one read serves both")
        hub.handle(Self.loaded(try #require(Self.tickets(first).first), "k"))
        let shown = hub.turn()
        #expect(H.published(shown)?["clients"] as? Int == 2)
        #expect(hub.core.boardOf[1] == "k" && hub.core.boardOf[2] == "k")
    }

    @Test func framesForABoardStillLoadingAreTakenInOrderOnceItIs() throws {
        var hub = H()
        let asked = hub.handle(.upgraded(connection: 1, board: BoardAddress(key: "k")), answerLoads: false)
        #expect(hub.send(1, #"{"type":"select","letter":"B","ref":"b"}"#, answerLoads: false).isEmpty)
        #expect(hub.send(1, #"{"type":"select","letter":"A","ref":"a"}"#, answerLoads: false).isEmpty)
        #expect(hub.handle(.binary(connection: 1), answerLoads: false).isEmpty)
        let stored = StoredBoard(version: 0, checkpoint: nil, operations: [], hubReplica: nil)
        let replayed = hub.handle(Self.loaded(try #require(Self.tickets(asked).first), "k", stored))
        #expect(H.frames(replayed, to: 1).map { $0["code"] as? String } == ["binary_frame"], "the binary frame is refused in its turn")
        let after = hub.commit()
        #expect(H.frames(after, to: 1).map { $0["ref"] as? String } == ["b", "a"])
        #expect(H.published(after)?["order"] as? [String] == ["B", "A"])
    }

    @Test func tooManyFramesWhileItsBoardLoadsCloseTheConnection() throws {
        var hub = H()
        hub.handle(.upgraded(connection: 1, board: BoardAddress(key: "k")), answerLoads: false)
        var closes: [String] = []
        for n in 0...PendingConnection.maxFrames {
            closes += Self.closes(hub.send(1, #"{"type":"select","letter":"A","ref":"\#(n)"}"#, answerLoads: false))
        }
        #expect(closes == ["1 1008 too many frames while the board was loading"])
    }

    @Test func aClientThatLeavesWhileItsBoardLoadsIsForgotten() throws {
        var hub = H()
        let asked = hub.handle(.upgraded(connection: 1, board: BoardAddress(key: "k")), answerLoads: false)
        hub.send(1, #"{"type":"select","letter":"A"}"#, answerLoads: false)
        hub.leave(1)
        let answered = hub.handle(Self.loaded(try #require(Self.tickets(asked).first), "k"))
        #expect(answered.isEmpty)
        hub.hold()
        #expect(hub.inFlight.isEmpty, "its frame is dropped with it")
        #expect(hub.core.boards["k"]?.members.isEmpty == true)
    }

    @Test func anHTTPRequestWaitsForItsBoardAndHearsWhetherItCame() throws {
        var hub = H()
        let shop = BoardAddress(key: "shop/s")
        let asked = hub.handle(.httpNeedsBoard(exchange: 5, board: shop), answerLoads: false)
        let ticket = try #require(Self.tickets(asked).first)
        let ready = hub.handle(Self.loaded(ticket, "shop/s"))
        #expect(ready.contains { if case .httpBoard(5, _, true, _) = $0 { true } else { false } })
        let held = hub.handle(.httpNeedsBoard(exchange: 6, board: shop), answerLoads: false)
        #expect(held.contains { if case .httpBoard(6, _, true, _) = $0 { true } else { false } }, "a held board answers at once")
        let other = hub.handle(.httpNeedsBoard(exchange: 7, board: BoardAddress(key: "shop/t")), answerLoads: false)
        hub.advance(seconds: 11)
        let timedOut = hub.handle(.tick)
        #expect(!Self.tickets(other).isEmpty)
        #expect(timedOut.contains { if case .httpBoard(7, _, false, _) = $0 { true } else { false } })
    }

    @Test func inMemoryNothingIsLoaded() {
        var core = HubCore(hubReplica: ReplicaID(1), limits: HubLimits())
        let actions = core.handle(.upgraded(connection: 1, board: BoardAddress(key: "k")), at: HubClock(seconds: 1))
        #expect(H.loads(actions).isEmpty)
        #expect(core.boardOf[1] == "k")
    }

    /// R4 in a cluster: a join is served by a read asked for after it came,
    /// so it never shows less than the log held when it came.
    @Test func inAClusterAJoinDuringAReadWaitsForOneMore() throws {
        var hub = HubDouble(id: "a")
        hub.handle(.upgraded(connection: 1, board: BoardAddress(key: "k")))
        hub.handle(.upgraded(connection: 2, board: BoardAddress(key: "k")))
        #expect(hub.loads.count == 1)
        let first = try #require(hub.loads.first)
        hub.loads = []
        let empty = StoredBoard(shared: SharedBoard(snapshot: nil, snapshotOffset: 0, epoch: "e1", entries: []))
        hub.handle(.store(.loaded(ticket: first.ticket, board: "k", .success(empty))))
        #expect(hub.core.boardOf[1] == "k")
        #expect(hub.core.boardOf[2] == nil, "2 came after the read was asked for")
        let second = try #require(hub.loads.first, "one more read for 2")
        #expect(second.after == 0)
        hub.handle(.store(.loaded(ticket: second.ticket, board: "k", .success(empty))))
        #expect(hub.core.boardOf[2] == "k")
    }

    /// A cluster's catch-up read that fails drops the board (its clients
    /// reconnect), as the synchronous read did.
    @Test func aFailedCatchUpDropsTheBoard() throws {
        var log = LogDouble()
        var a = HubDouble(id: "a", foldEvery: 3), b = HubDouble(id: "b")
        _ = a.join(1, "k", log: log)
        _ = b.join(2, "k", log: log)
        for letter in ["A", "B", "C", "D"] {
            _ = a.frame(1, #"{"type":"select","letter":"\#(letter)"}"#)
            _ = a.flush(into: &log)
            _ = a.follow("k", log: log)
        }
        b.handle(.store(.sequenced(board: "k", entries: [log.entries[3]])))
        let reload = try #require(b.loads.first)
        let dropped = b.handle(.store(.loaded(ticket: reload.ticket, board: "k", .failure(StoreFailure(message: "timeout")))))
        #expect(dropped.contains { if case .close(2, 1012, _) = $0 { true } else { false } })
        #expect(!b.core.holds(board: BoardAddress(key: "k")))
    }
}
