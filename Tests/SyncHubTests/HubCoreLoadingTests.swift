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
        actions.compactMap { if case let .store(.load(ticket, _, _, _)) = $0 { ticket } else { nil } }
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
        // K4: the state comes first, before any answer to what it sent while waiting.
        let firstState = replayed.firstIndex { if case .publish = $0 { true } else { false } }
        let firstAnswer = replayed.firstIndex { if case .send(1, _) = $0 { true } else { false } }
        #expect(firstState != nil && firstAnswer != nil && firstState! < firstAnswer!)
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
        hub.advance(seconds: Double(HubLimits().evictAfterSeconds) + 1)
        hub.handle(.tick)
        #expect(!hub.core.holds(board: BoardAddress(key: "k")), "a board read for nobody is let go")
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
        hub.advance(seconds: Double(HubLimits().evictAfterSeconds))
        hub.handle(.tick)
        #expect(!hub.core.holds(board: shop), "a board held only for requests is let go")
    }

    /// Without a store nothing is evicted, so a request may not make more
    /// boards than the limit either.
    @Test func anInMemoryHubsHTTPRequestsKeepToTheBoardLimit() {
        var limits = HubLimits()
        limits.maxBoards = 2
        var core = HubCore(hubReplica: ReplicaID(1), limits: limits)
        var ready: [Bool] = []
        for n in 0..<4 {
            let actions = core.handle(.httpNeedsBoard(exchange: UInt64(n), board: BoardAddress(key: "shop/s\(n)")),
                                      at: HubClock(seconds: 1))
            for case let .httpBoard(_, _, isReady, _) in actions { ready.append(isReady) }
        }
        #expect(ready == [true, true, false, false])
        #expect(core.boards.count == 2)
    }

    /// Each waiter is bounded from when it came, also when it is carried to
    /// another read.
    @Test func aJoinWaitsAtMostItsOwnBoundAcrossReads() throws {
        var hub = HubDouble(id: "a")
        hub.handle(.upgraded(connection: 1, board: BoardAddress(key: "k")))
        hub.clock.nanos += 6_000_000_000
        hub.handle(.upgraded(connection: 2, board: BoardAddress(key: "k")))
        let first = try #require(hub.loads.first)
        let empty = StoredBoard(shared: SharedBoard(snapshot: nil, snapshotOffset: 0, epoch: "e1", entries: []))
        hub.handle(.store(.loaded(ticket: first.ticket, board: "k", .success(empty))))
        #expect(hub.core.boardOf[1] == "k")
        hub.clock.nanos += 9_000_000_000
        #expect(HubCoreLoadingTests.closes(hub.handle(.tick)).isEmpty, "2 came 9 s ago: within its 10 s")
        hub.clock.nanos += 1_100_000_000
        #expect(HubCoreLoadingTests.closes(hub.handle(.tick)) == ["2 1011 the board could not be read within 10.0 s; try again"])
    }

    /// A board dropped (its log lost history to another one, R15) while a join's tail was read
    /// is read whole for that join, never built from the tail alone.
    @Test func aBoardDroppedWhileItsTailIsReadIsReadWhole() throws {
        var log = LogDouble()
        var a = HubDouble(id: "a")
        _ = a.join(1, "k", log: log)
        a.select(["A", "B", "C"], by: 1, into: &log)
        a.handle(.upgraded(connection: 2, board: BoardAddress(key: "k")))
        let tail = try #require(a.loads.first)
        #expect(tail.after == 3)
        a.loads = []
        a.handle(.store(.logHead(board: "k", SharedLogHead(top: 0, last: 0, epoch: "e2"), lost: true)))
        #expect(!a.core.holds(board: BoardAddress(key: "k")))
        let partial = StoredBoard(shared: SharedBoard(snapshot: nil, snapshotOffset: 3, epoch: "e1", entries: []))
        a.handle(.store(.loaded(ticket: tail.ticket, board: "k", .success(partial))))
        #expect(a.core.boardOf[2] == nil, "not seated on a tail")
        let whole = try #require(a.loads.first, "read again, whole")
        #expect(whole.after == 0)
        let all = StoredBoard(shared: SharedBoard(snapshot: nil, snapshotOffset: 0, epoch: "e1", entries: log.entries))
        a.handle(.store(.loaded(ticket: whole.ticket, board: "k", .success(all))))
        #expect(a.core.boardOf[2] == "k")
        #expect(a.state("k")?["order"] as? [String] == ["A", "B", "C"])
    }

    /// A10 while waiting: a token that runs out during the board's read is
    /// closed when the board comes, and none of its frames is taken.
    @Test func aTokenThatRunsOutWhileItsBoardLoadsIsClosedAndNothingOfItIsTaken() async throws {
        let (verifier, secret, _) = try await AuthFixtures.secretVerifier()
        var hub = HubCoreHarness(verifier: verifier)
        hub.clock = HubClock(nanos: 1_000_000_000, wall: AuthFixtures.now)
        let soon = AuthFixtures.now.addingTimeInterval(2)
        let token = try await AuthFixtures.mint(AuthFixtures.claims(sub: "ana", name: nil, exp: soon, boards: ["boards/*": "write"]),
                                                secret: secret)
        hub.handle(.upgraded(connection: 1, board: BoardAddress(key: "k")), answerLoads: false)
        let authed = hub.send(1, #"{"type":"auth","token":"\#(token)"}"#, answerLoads: false)
        #expect(authed.contains { if case .authenticated(1) = $0 { true } else { false } }, "the pre-token limits stop while it waits")
        hub.send(1, #"{"type":"select","letter":"A","ref":"a"}"#, answerLoads: false)
        hub.advance(seconds: 3)
        let seated = hub.handle(Self.loaded(try #require(Self.tickets(authed).first), "k"))
        #expect(Self.closes(seated) == ["1 4401 token expired"])
        hub.hold()
        #expect(hub.inFlight.isEmpty, "its frame is not taken")
    }

    /// A key's lookup that fails, or takes too long, closes only the
    /// connection that used it; the others on the board go on.
    @Test func aKeyLookupThatFailsOrTimesOutClosesOnlyItsConnection() throws {
        var hub = H()
        hub.join(1, stored: StoredBoard(version: 0, checkpoint: nil, operations: [], hubReplica: nil, hasKeys: true))
        hub.join(2)
        #expect(HubCoreDeliveryTests.lookups(hub.send(1, #"{"type":"select","letter":"A","key":"old"}"#)) == ["old"])
        hub.send(1, #"{"type":"select","letter":"B","ref":"behind"}"#)
        hub.send(2, #"{"type":"select","letter":"C","ref":"c"}"#)
        let failed = hub.handle(.store(.keyAnswer(board: "k", key: "old", .failure(StoreFailure(message: "disk I/O error")))))
        #expect(Self.closes(failed) == ["1 1011 the store could not be read"])
        let after = hub.commit()
        #expect(H.frames(after, to: 2).first?["ref"] as? String == "c")
        #expect(H.frames(after, to: 1).isEmpty, "nothing of 1 was taken")
        #expect(H.published(after)?["order"] as? [String] == ["C"])
        hub.join(3)
        #expect(HubCoreDeliveryTests.lookups(hub.send(3, #"{"type":"select","letter":"D","key":"older"}"#)) == ["older"])
        hub.advance(seconds: 10.5)
        #expect(Self.closes(hub.handle(.tick)) == ["3 1011 the store could not be read in time"])
        #expect(hub.core.counters.loadsTimedOut == 1)
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
        a.select(["A", "B", "C", "D"], by: 1, into: &log)
        b.handle(.store(.sequenced(board: "k", entries: [log.entries[3]])))
        let reload = try #require(b.loads.first)
        let dropped = b.handle(.store(.loaded(ticket: reload.ticket, board: "k", .failure(StoreFailure(message: "timeout")))))
        #expect(dropped.contains { if case .close(2, 1012, _) = $0 { true } else { false } })
        #expect(!b.core.holds(board: BoardAddress(key: "k")))
    }
}
