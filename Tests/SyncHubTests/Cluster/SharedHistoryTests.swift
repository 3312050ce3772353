import Foundation
import Testing
@testable import SyncHub

/// R15 in the core: a log that went back is noticed before anything is
/// applied or appended on top of it, written back when it is a part of what
/// this hub applied, and never applied when another history was written on
/// it. (Over real Redis: Tests/python/test_cluster_history.py.)
struct SharedHistoryTests {
    /// A hub on board "k" that applied A, B, C (offsets 1-3) from `log`.
    private static func hubWithThreeEntries() -> (HubDouble, LogDouble) {
        var log = LogDouble()
        var hub = HubDouble(id: "a")
        _ = hub.join(1, "k", log: log)
        hub.select(["A", "B", "C"], by: 1, into: &log)
        return (hub, log)
    }

    private static func closes(_ actions: [HubAction]) -> [String] {
        actions.compactMap { if case let .close(id, code, _) = $0 { "\(id) \(code)" } else { nil } }
    }

    @Test func anEntryThatDoesNotFollowTheLastOneAppliedIsNotAppliedAndTheBoardIsDropped() {
        var (hub, _) = Self.hubWithThreeEntries()
        #expect(hub.core.boards["k"]?.shared.link == LogDouble.link(3))
        let other = SharedLogEntry(offset: 4, body: Array(#"{"h":"b","n":1,"a":"","c":{"select":"Z"}}"#.utf8), link: 99, prev: 12_345)
        let actions = hub.handle(.store(.sequenced(board: "k", entries: [other])))
        #expect(Self.closes(actions) == ["1 1012"])
        #expect(hub.core.boards["k"] == nil, "dropped, to be read again as the log holds it")
        #expect(hub.core.counters.sharedHistoryLost == 1 && hub.core.counters.sharedNotWrittenBack == 1)
        #expect(actions.contains { if case let .report(report) = $0 { report.message.contains("cannot write back") } else { false } })
    }

    @Test func aLogThatWentBackToAPartOfThisHubsHistoryIsWrittenBackAndHeldProposalsGoAgainAfter() throws {
        var (hub, _) = Self.hubWithThreeEntries()
        _ = hub.frame(1, #"{"type":"select","letter":"D","ref":"d"}"#)
        let proposal = try #require(hub.takeProposals().first)
        #expect(proposal.seen == SharedSeen(offset: 3, link: LogDouble.link(3), epoch: "e1"))
        // The log went back to offset 1 (its entry is the one this hub applied).
        let head = SharedLogHead(top: 1, last: LogDouble.link(1), epoch: "e1")
        let answer = hub.handle(.store(.appended(board: "k", number: proposal.number, result: .lost(head))))
        #expect(replies(answer, to: 1).isEmpty, "not answered: proposed again once written back")
        let restore = try #require(hub.restores.first)
        #expect(restore.seen.offset == 3 && restore.expected == head)
        #expect(try restore.encode().contains("\"offset\":3"))
        #expect(hub.takeProposals().isEmpty, "held while the board is written back")
        hub.handle(.store(.logHead(board: "k", head, lost: true)))
        #expect(hub.restores.count == 1, "one write-back at a time")
        hub.handle(.store(.restored(board: "k", .restored)))
        let again = hub.takeProposals()
        #expect(again.map(\.number) == [proposal.number] && again.first?.seen.offset == 3)
        #expect(hub.core.counters.sharedWrittenBack == 1 && hub.core.counters.sharedHistoryLost == 1)
        #expect(hub.state("k")?["order"] as? [String] == ["A", "B", "C"] && hub.state("k")?["version"] as? Int == 3)
    }

    @Test func aLogThatCameBackEmptyIsWrittenBack() throws {
        var (hub, _) = Self.hubWithThreeEntries()
        hub.handle(.store(.logHead(board: "k", SharedLogHead(top: 0, last: 0, epoch: ""), lost: true)))
        let restore = try #require(hub.restores.first)
        #expect(restore.expected == SharedLogHead(top: 0, last: 0, epoch: "") && restore.seen.epoch == "e1")
    }

    @Test func aLogThatWentBackToAnEntryThisHubDidNotApplyIsNotWrittenOver() {
        var (hub, _) = Self.hubWithThreeEntries()
        let actions = hub.handle(.store(.logHead(board: "k", SharedLogHead(top: 2, last: 4_242, epoch: "e1"), lost: true)))
        #expect(hub.restores.isEmpty)
        #expect(Self.closes(actions) == ["1 1012"] && hub.core.counters.sharedNotWrittenBack == 1)
    }

    @Test func aWriteBackThatFindsTheLogMovedPastThisHubWritesNothingAndGoesOn() throws {
        var (hub, _) = Self.hubWithThreeEntries()
        hub.handle(.store(.logHead(board: "k", SharedLogHead(top: 1, last: LogDouble.link(1), epoch: "e1"), lost: true)))
        #expect(hub.restores.count == 1)
        // Another hub that held more wrote back first.
        hub.handle(.store(.restored(board: "k", .moved(SharedLogHead(top: 5, last: 77, epoch: "e1")))))
        #expect(hub.restores.count == 1, "nothing more to write")
        #expect(hub.core.boards["k"]?.shared.writingBack == false)
    }

    @Test func aFencedProposalIsProposedAgainWhenTheFenceIsOverAndStillAnsweredByItsDeadline() throws {
        var (hub, _) = Self.hubWithThreeEntries()
        _ = hub.frame(1, #"{"type":"select","letter":"D","ref":"d"}"#)
        let proposal = try #require(hub.takeProposals().first)
        hub.handle(.store(.appended(board: "k", number: proposal.number, result: .fenced(milliseconds: 500))))
        hub.clock.nanos += 400_000_000
        hub.handle(.tick)
        #expect(hub.takeProposals().isEmpty, "the fence is not over")
        hub.clock.nanos += 200_000_000
        hub.handle(.tick)
        #expect(hub.takeProposals().map(\.number) == [proposal.number])
        hub.clock.nanos += 2_000_000_000
        let late = hub.handle(.tick)
        #expect(replies(late, to: 1).first?["code"] as? String == "unavailable", "its deadline stays")
    }

    @Test func aLostAnswerFromALogThatHoldsAsMuchIsAnotherHistoryAndDropsTheBoardOnce() throws {
        var (hub, _) = Self.hubWithThreeEntries()
        _ = hub.frame(1, #"{"type":"select","letter":"D","ref":"d"}"#)
        let proposal = try #require(hub.takeProposals().first)
        let other = SharedLogHead(top: 3, last: 4_242, epoch: "e1")
        let actions = hub.handle(.store(.appended(board: "k", number: proposal.number, result: .lost(other))))
        #expect(replies(actions, to: 1).first?["code"] as? String == "unavailable", "answered, never proposed again in a loop")
        #expect(Self.closes(actions) == ["1 1012"] && hub.restores.isEmpty && hub.takeProposals().isEmpty)
        #expect(hub.core.counters.sharedHistoryLost == 1 && hub.core.counters.sharedNotWrittenBack == 1)
    }

    @Test func aHeadAtTheSameOffsetWithAnotherLinkIsAnotherHistory() {
        var (hub, _) = Self.hubWithThreeEntries()
        let actions = hub.handle(.store(.logHead(board: "k", SharedLogHead(top: 3, last: 4_242, epoch: "e1"), lost: true)))
        #expect(Self.closes(actions) == ["1 1012"] && hub.restores.isEmpty)
    }

    @Test func aHubThatOnlyWatchesLearnsTheEpochFromTheHeadAndWritesBackUnderIt() throws {
        var log = LogDouble()
        var writer = HubDouble(id: "w"), watcher = HubDouble(id: "v")
        _ = writer.join(1, "k", log: log)
        _ = watcher.join(2, "k", log: log)
        writer.select(["A", "B"], by: 1, into: &log)
        _ = watcher.follow("k", log: log)
        // Loaded while the board was empty (no epoch yet); it never appends, so no append tells it.
        watcher.core.boards["k"]?.shared.epoch = ""
        watcher.handle(.store(.logHead(board: "k", SharedLogHead(top: 2, last: LogDouble.link(2), epoch: "e1"), lost: false)))
        #expect(watcher.core.boards["k"]?.shared.epoch == "e1")
        watcher.handle(.store(.logHead(board: "k", SharedLogHead(top: 0, last: 0, epoch: ""), lost: true)))
        #expect(try #require(watcher.restores.first).seen.epoch == "e1")
    }

    @Test func aWriteBackThatFailsIsTriedAgainASecondLaterNotAtOnce() throws {
        var (hub, _) = Self.hubWithThreeEntries()
        let head = SharedLogHead(top: 1, last: LogDouble.link(1), epoch: "e1")
        _ = hub.frame(1, #"{"type":"select","letter":"D","ref":"d"}"#)
        let proposal = try #require(hub.takeProposals().first)
        hub.handle(.store(.appended(board: "k", number: proposal.number, result: .lost(head))))
        hub.handle(.store(.restored(board: "k", .failed(reason: "OOM"))))
        #expect(hub.takeProposals().isEmpty, "held, not sent to be lost again")
        hub.handle(.store(.logHead(board: "k", head, lost: true)))
        #expect(hub.restores.count == 1, "not within the second")
        hub.clock.nanos += 1_100_000_000
        hub.handle(.store(.logHead(board: "k", head, lost: true)))
        #expect(hub.restores.count == 2)
        #expect(hub.core.counters.sharedHistoryLost == 1, "one loss, counted once")
    }

    @Test func aHubLeftBehindAWriteBackReadsTheSnapshotWhenNothingBringsItThere() {
        var (hub, _) = Self.hubWithThreeEntries()
        let ahead = SharedLogHead(top: 9, last: 77, epoch: "e1", snap: 9)
        hub.handle(.store(.logHead(board: "k", ahead, lost: false)))
        #expect(hub.loads.isEmpty, "entries may be on their way")
        hub.handle(.store(.logHead(board: "k", ahead, lost: false)))
        #expect(hub.loads.map(\.after) == [3], "a second without progress: read from where it is")
    }

    /// Found by the conformance suite: fenced proposals went again in the
    /// order of a dictionary, so a client's select-then-deselect could land
    /// as deselect-then-select.
    @Test func fencedProposalsGoAgainInTheOrderTheyWereMade() throws {
        var (hub, _) = Self.hubWithThreeEntries()
        for letter in ["D", "E", "F", "A", "B", "C"] {
            _ = hub.frame(1, #"{"type":"select","letter":"\#(letter)"}"#)
        }
        let first = hub.takeProposals()
        #expect(first.count >= 3)
        for proposal in first {
            hub.handle(.store(.appended(board: "k", number: proposal.number, result: .fenced(milliseconds: 100))))
        }
        hub.clock.nanos += 200_000_000
        hub.handle(.tick)
        let again = hub.takeProposals().map(\.number)
        #expect(again == first.map(\.number).sorted() && again.count == first.count)
    }
}
