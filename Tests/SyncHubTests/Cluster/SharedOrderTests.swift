import BoardCRDT
import Foundation
import SyncWire
import Testing
@testable import SyncHub

/// A board's shared log as Redis keeps it, for the core alone: offsets,
/// key deduplication (`@OFFSET`), nothing else. The real log is tested over
/// real sockets (Tests/python/test_cluster.py).
struct LogDouble {
    var entries: [SharedLogEntry] = []
    var keys: [String: String] = [:]

    mutating func append(_ proposal: SharedProposal) -> SharedAppendResult {
        if let key = proposal.key, let seen = keys[key] { return .duplicate(seen: seen) }
        let offset = UInt64(entries.count + 1)
        // Links as the append script draws them (here fixed: 1000 × offset + 7), each entry naming the one before.
        entries.append(SharedLogEntry(offset: offset, body: Array(proposal.body.utf8), link: Self.link(offset),
                                      prev: offset == 1 ? 0 : Self.link(offset - 1)))
        if let key = proposal.key { keys[key] = "@\(offset)" }
        return .appended(offset: offset, epoch: "e1")
    }

    static func link(_ offset: UInt64) -> UInt64 { 1_000 * offset + 7 }
}

/// One hub of a cluster, driven with no socket and no Redis: the test
/// plays the shell and the log (its loads answered from a `LogDouble`).
struct HubDouble {
    var core: HubCore
    var clock = HubClock(seconds: 1)
    /// Folds the core offered, kept for the test to read.
    var folds: [SharedFold] = []
    /// Proposals handed to the log and not yet appended.
    var proposals: [SharedProposal] = []
    /// Loads asked for and not answered (no log given to `handle`).
    var loads: [(ticket: UInt64, board: String, after: UInt64)] = []
    /// Write-backs the core asked for (R15).
    var restores: [SharedRestore] = []

    init(id: String, timeoutNanos: UInt64 = 2_000_000_000, foldEvery: UInt64 = 1_000) {
        core = HubCore(hubReplica: ReplicaID(7), limits: HubLimits(),
                       sequencing: .shared(SharedLogSettings(hubID: id, timeoutNanos: timeoutNanos, foldEvery: foldEvery)))
    }

    /// One event; with `log`, loads are answered from it (the entries after
    /// the offset asked, or `stored` when given), else kept in `loads`.
    @discardableResult
    mutating func handle(_ event: HubEvent, log: LogDouble? = nil, stored: SharedBoard? = nil) -> [HubAction] {
        var out: [HubAction] = []
        var queue = [event]
        while !queue.isEmpty {
            for action in core.handle(queue.removeFirst(), at: clock) {
                switch action {
                case let .store(.propose(new)): proposals += new
                case let .store(.fold(fold)): folds.append(fold)
                case let .store(.restore(restore)): restores.append(restore)
                case let .store(.load(ticket, board, after, _)):
                    if let stored {
                        queue.append(.store(.loaded(ticket: ticket, board: board.key, .success(StoredBoard(shared: stored)))))
                    } else if let log {
                        let entries = Array(log.entries.dropFirst(Int(after)))
                        let fresh = SharedBoard(snapshot: nil, snapshotOffset: after, epoch: "e1", entries: entries)
                        queue.append(.store(.loaded(ticket: ticket, board: board.key, .success(StoredBoard(shared: fresh)))))
                    } else {
                        loads.append((ticket, board.key, after))
                    }
                case .store: break   // follow, unfollow, presence: the log double keeps no followers
                default: out.append(action)
                }
            }
        }
        return out
    }

    mutating func join(_ connection: UInt64, _ key: String, log: LogDouble, stored: SharedBoard? = nil) -> [HubAction] {
        handle(.upgraded(connection: connection, board: BoardAddress(key: key)), log: log, stored: stored)
    }

    mutating func frame(_ connection: UInt64, _ text: String) -> [HubAction] {
        var text = text
        return text.withUTF8 { bytes in handle(.frame(connection: connection, UnsafeRawBufferPointer(bytes))) }
    }

    /// Ends the turn and takes the proposals it handed to the log.
    mutating func takeProposals() -> [SharedProposal] {
        handle(.turnEnded)
        defer { proposals = [] }
        return proposals
    }

    /// Appends what the core proposed; returns the log's answers as actions.
    mutating func flush(into log: inout LogDouble) -> [HubAction] {
        var actions: [HubAction] = []
        for proposal in takeProposals() {
            actions += handle(.store(.appended(board: proposal.board, number: proposal.number, result: log.append(proposal))))
        }
        return actions
    }

    /// Selects each of `letters` through `connection`, one at a time: proposed,
    /// appended to `log`, and applied back (a fold offered on the way is kept).
    mutating func select(_ letters: [String], by connection: UInt64, into log: inout LogDouble) {
        for letter in letters {
            _ = frame(connection, #"{"type":"select","letter":"\#(letter)"}"#)
            _ = flush(into: &log)
            _ = follow("k", log: log)
        }
    }

    /// Hands the core the log's entries it has not seen (the follower).
    mutating func follow(_ key: String, log: LogDouble) -> [HubAction] {
        let from = Int(core.boards[key]?.shared.applied ?? 0)
        let fresh = Array(log.entries.dropFirst(from))
        return handle(.store(.sequenced(board: key, entries: fresh))) + handle(.turnEnded)
    }

    func state(_ key: String) -> [String: Any]? {
        guard let frame = core.boards[key]?.stateShape().json else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(frame.utf8)) as? [String: Any]
    }
}

func replies(_ actions: [HubAction], to connection: UInt64) -> [[String: Any]] {
    actions.compactMap { action -> [String: Any]? in
        guard case let .send(id, text) = action, id == connection else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }
}

struct SharedOrderTests {
    /// R4: two hubs applying one log show one state under one version,
    /// whatever order their own clients' changes were proposed in.
    @Test func twoHubsApplyingOneLogShowOneStatePerVersion() {
        var log = LogDouble()
        var a = HubDouble(id: "a"), b = HubDouble(id: "b")
        _ = a.join(1, "k", log: log)
        _ = b.join(2, "k", log: log)
        _ = a.frame(1, #"{"type":"select","letter":"F","ref":"a1"}"#)
        _ = b.frame(2, #"{"type":"select","letter":"D","ref":"b1"}"#)
        _ = b.flush(into: &log)
        _ = a.flush(into: &log)
        let ackA = replies(a.follow("k", log: log), to: 1)
        let ackB = replies(b.follow("k", log: log), to: 2)
        #expect(ackA.first?["type"] as? String == "ack" && ackA.first?["ref"] as? String == "a1")
        #expect(ackB.first?["type"] as? String == "ack" && ackB.first?["ref"] as? String == "b1")
        #expect(a.state("k")?["order"] as? [String] == ["D", "F"])
        #expect(b.state("k")?["order"] as? [String] == ["D", "F"])
        #expect(a.state("k")?["version"] as? Int == 2 && b.state("k")?["version"] as? Int == 2)
    }

    /// An intent is answered only once the log confirmed it AND the hub applied it.
    @Test func answerWaitsForConfirmationAndApplication() {
        var log = LogDouble()
        var a = HubDouble(id: "a")
        _ = a.join(1, "k", log: log)
        #expect(a.frame(1, #"{"type":"select","letter":"C","ref":"r"}"#).isEmpty)
        #expect(replies(a.flush(into: &log), to: 1).isEmpty)
        let answer = replies(a.follow("k", log: log), to: 1)
        #expect(answer.count == 1 && answer.first?["version"] as? Int == 1)
        // Applied before confirmed: the answer waits for the confirmation.
        var b = HubDouble(id: "b")
        _ = b.join(2, "k", log: log)
        _ = b.frame(2, #"{"type":"select","letter":"E","ref":"s"}"#)
        let proposal = b.takeProposals()[0]
        let result = log.append(proposal)
        #expect(replies(b.follow("k", log: log), to: 2).isEmpty)
        let confirmed = replies(b.handle(.store(.appended(board: "k", number: proposal.number, result: result))), to: 2)
        #expect(confirmed.first?["type"] as? String == "ack" && confirmed.first?["ref"] as? String == "s")
    }

    /// R6: a keyed intent resent to another hub gets the first answer with
    /// the resend's ref, and takes effect once.
    @Test func keyedResendToAnotherHubGetsTheFirstAnswer() {
        var log = LogDouble()
        var a = HubDouble(id: "a"), b = HubDouble(id: "b")
        _ = a.join(1, "k", log: log)
        _ = b.join(2, "k", log: log)
        _ = a.frame(1, #"{"type":"select","letter":"Q","ref":"first","key":"k-1"}"#)
        _ = a.flush(into: &log)
        let first = replies(a.follow("k", log: log), to: 1)
        _ = b.frame(2, #"{"type":"select","letter":"Q","ref":"again","key":"k-1"}"#)
        var answers = replies(b.flush(into: &log), to: 2)
        answers += replies(b.follow("k", log: log), to: 2)
        #expect(first.first?["type"] as? String == "ack" && first.first?["version"] as? Int == 1)
        #expect(answers.count == 1)
        #expect(answers.first?["type"] as? String == "ack" && answers.first?["ref"] as? String == "again")
        #expect(answers.first?["version"] as? Int == 1)
        #expect(log.entries.count == 1)
    }

    /// R8: no confirmation within the timeout is `unavailable`; the resend
    /// with the same key then gets the true answer, applied once.
    @Test func unconfirmedIntentIsUnavailableAndItsResendGetsTheTruth() {
        var log = LogDouble()
        var a = HubDouble(id: "a", timeoutNanos: 1_000)
        _ = a.join(1, "k", log: log)
        a.clock.nanos = 10
        _ = a.frame(1, #"{"type":"select","letter":"Z","ref":"r1","key":"z"}"#)
        let proposal = a.takeProposals()[0]
        _ = log.append(proposal)   // it reached the log, but the answer never came
        a.clock.nanos = 10 + 2_000
        let expired = a.handle(.tick)
        #expect(replies(expired, to: 1).first?["code"] as? String == "unavailable")
        _ = a.frame(1, #"{"type":"select","letter":"Z","ref":"r2","key":"z"}"#)
        var answers = replies(a.flush(into: &log), to: 1)
        answers += replies(a.follow("k", log: log), to: 1)
        #expect(answers.count == 1 && answers.first?["type"] as? String == "ack" && answers.first?["ref"] as? String == "r2")
        #expect(log.entries.count == 1)
        #expect(a.state("k")?["order"] as? [String] == ["Z"])
    }

    /// A log that does not follow what the hub applied (a fold trimmed it
    /// past this hub): the board is read again in place; its thin clients
    /// stay and see the newer state, with no version going back.
    @Test func aGapReloadsTheBoardInPlace() throws {
        var log = LogDouble()
        var a = HubDouble(id: "a", foldEvery: 3), b = HubDouble(id: "b")
        _ = a.join(1, "k", log: log)
        _ = b.join(2, "k", log: log)
        a.select(["A", "B", "C", "D"], by: 1, into: &log)
        let fold = try #require(a.folds.first)
        // b missed entries 1-3 (trimmed); it hears of entry 4 first.
        let actions = b.handle(.store(.sequenced(board: "k", entries: [log.entries[3]])))
        #expect(!actions.contains { if case .close = $0 { return true } else { return false } })
        let reload = try #require(b.loads.first)
        #expect(b.loads.count == 1 && reload.board == "k", "the board is read again")
        let snapshot = try fold.encode().whole
        let rest = Array(log.entries.dropFirst(Int(fold.offset)))
        let versionBefore = b.state("k")?["version"] as? Int ?? 0
        let again = SharedBoard(snapshot: snapshot, snapshotOffset: fold.offset, epoch: "e1", entries: rest)
        let reloaded = b.handle(.store(.loaded(ticket: reload.ticket, board: "k", .success(StoredBoard(shared: again)))))
        #expect(!reloaded.contains { if case .close = $0 { return true } else { return false } }, "the thin client stays")
        #expect(b.core.boards["k"]?.members[2] != nil)
        let shown = b.handle(.turnEnded).compactMap { action -> Int? in
            guard case let .publish(published) = action, published.stateTo.contains(2) else { return nil }
            return (try? JSONSerialization.jsonObject(with: Data(published.frame.utf8)) as? [String: Any])?["version"] as? Int
        }
        #expect(shown.count == 1 && (shown.first ?? 0) >= versionBefore, "the newer state is shown, the version never goes back")
        #expect(b.core.holds(board: BoardAddress(key: "k")))
        #expect(b.state("k")?["order"] as? [String] == ["A", "B", "C", "D"])
        #expect(b.state("k")?["version"] as? Int == a.state("k")?["version"] as? Int)
    }

    /// R4: clients on other hubs count in `clients` and `names`.
    @Test func presenceOfOtherHubsCounts() {
        let log = LogDouble()
        var a = HubDouble(id: "a")
        _ = a.join(1, "k", log: log)
        _ = a.handle(.store(.presence(board: "k", clients: 3, names: ["zoe"])))
        #expect(a.state("k")?["clients"] as? Int == 4)
        #expect(a.state("k")?["names"] as? [String] == ["zoe"])
    }

    /// R9: after `foldEvery` entries a hub offers a snapshot, and a hub
    /// loading that snapshot plus the rest shows the same state.
    @Test func aFoldedSnapshotLoadsToTheSameState() throws {
        var log = LogDouble()
        var a = HubDouble(id: "a", foldEvery: 4)
        _ = a.join(1, "todo/t", log: log)
        for index in 0..<10 {
            _ = a.frame(1, #"{"type":"add","id":"i\#(index)","title":"t\#(index)","after":null,"ref":"r\#(index)"}"#)
            _ = a.flush(into: &log)
            _ = a.follow("todo/t", log: log)
        }
        _ = a.takeProposals()
        let folds = a.folds
        #expect(folds.count == 2 && folds[0].history == folds[1].history, "one history: the second fold may keep the first's runs")
        let fold = try #require(folds.last)
        // Packed as the fold encoder packs them: the second keeps the first's run.
        var window = PackedWindow(history: fold.history)
        let deflater = Deflater()
        _ = try window.pack(folds[0].encode(), with: deflater)
        let first = window.runs
        let snapshot = try PackedSnapshot.unpack(window.pack(fold.encode(), with: deflater))
        #expect(first.count == 1 && window.runs.count == 2 && window.runs[0].packed == first[0].packed)
        #expect(window.runs.map(\.count) == [4, 4])
        var b = HubDouble(id: "b")
        let rest = Array(log.entries.dropFirst(Int(fold.offset)))
        _ = b.join(2, "todo/t", log: log, stored: SharedBoard(snapshot: snapshot, snapshotOffset: fold.offset, epoch: "e1", entries: rest))
        let stateA = try #require(a.state("todo/t")), stateB = try #require(b.state("todo/t"))
        #expect(stateA["version"] as? Int == stateB["version"] as? Int)
        #expect((stateA["items"] as? [[String: Any]])?.count == 10)
        #expect(NSDictionary(dictionary: stateA).isEqual(to: stateB.merging(["clients": stateA["clients"] ?? 0]) { $1 }))
    }

    /// A hub that found another folding the board (the fold's lease was
    /// taken) offers its next fold only after three folds' worth, even of
    /// its own entries; a fold of its own that lands makes it offer at once again.
    @Test func aHubThatFoundAnotherFoldingOffersOnlyAfterThreeFoldsWorth() throws {
        var log = LogDouble()
        var b = HubDouble(id: "b", foldEvery: 4)
        _ = b.join(2, "todo/t", log: log)
        func add(_ count: Int, from start: Int) {
            for index in start..<(start + count) {
                _ = b.frame(2, #"{"type":"add","id":"i\#(index)","title":"t","after":null}"#)
                _ = b.flush(into: &log)
                _ = b.follow("todo/t", log: log)
            }
        }
        add(4, from: 0)
        #expect(b.folds.count == 1, "its own entries brought the board to a fold")
        _ = b.handle(.store(.foldedElsewhere(board: "todo/t")))
        add(8, from: 4)
        #expect(b.folds.count == 1, "two folds' worth of its own entries: another hub folds")
        add(4, from: 12)
        #expect(b.folds.count == 2, "three folds' worth: it offers, in case that hub stopped")
        _ = b.handle(.store(.folded(board: "todo/t", offset: try #require(b.folds.last).offset)))
        add(4, from: 16)
        #expect(b.folds.count == 3, "its own fold landed: it folds on its own entries again")
    }

    /// A select judged "already selected" on a hub that had not yet applied
    /// another hub's reset is acknowledged with the version it was judged
    /// on, under which the letter is selected; a keyed resend to the other
    /// hub gets the same answer.
    @Test func aNoOpIsAcknowledgedWithTheVersionItWasJudgedOn() {
        var log = LogDouble()
        var a = HubDouble(id: "a"), b = HubDouble(id: "b")
        _ = a.join(1, "k", log: log)
        _ = b.join(2, "k", log: log)
        _ = a.frame(1, #"{"type":"select","letter":"J"}"#)
        _ = a.flush(into: &log)
        _ = a.follow("k", log: log)
        _ = b.follow("k", log: log)
        _ = a.frame(1, #"{"type":"reset"}"#)
        _ = a.flush(into: &log)                      // b has not seen the reset
        _ = b.frame(2, #"{"type":"select","letter":"J","ref":"j","key":"kj"}"#)
        var answers = replies(b.flush(into: &log), to: 2)
        answers += replies(b.follow("k", log: log), to: 2)
        #expect(answers.count == 1 && answers.first?["type"] as? String == "ack")
        #expect(answers.first?["version"] as? Int == 1, "J is selected at version 1, not after the reset")
        _ = a.follow("k", log: log)
        var again = replies(a.frame(1, #"{"type":"select","letter":"J","ref":"again","key":"kj"}"#), to: 1)
        again += replies(a.flush(into: &log), to: 1)
        again += replies(a.follow("k", log: log), to: 1)
        #expect(again.first?["version"] as? Int == 1 && again.first?["ref"] as? String == "again")
    }

    /// A client's second intent that is a no-op only because of its first,
    /// still in flight, goes through the log as a change and is answered
    /// at its place.
    @Test func aNoOpOnlyBecauseOfChangesInFlightIsOrderedToo() {
        var log = LogDouble()
        var a = HubDouble(id: "a")
        _ = a.join(1, "k", log: log)
        _ = a.frame(1, #"{"type":"select","letter":"B","ref":"1"}"#)
        _ = a.frame(1, #"{"type":"select","letter":"B","ref":"2"}"#)
        var answers = replies(a.flush(into: &log), to: 1)
        answers += replies(a.follow("k", log: log), to: 1)
        #expect(log.entries.count == 2)
        #expect(answers.map { $0["version"] as? Int } == [1, 1])
    }
}
