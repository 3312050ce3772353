import BoardCRDT
import SyncWire
import Testing
@testable import SyncHub

/// The memo a publish hands the shell with its whole-state audience
/// (`AudienceMemo`): the same object while nobody comes, leaves or changes
/// format, a new one as soon as someone does, and none when a publish goes
/// to only some of the audience (the shell then looks every id up).
@Suite struct AudienceMemoTests {
    static func publish(_ hub: inout HubCoreHarness) throws -> PublishedState {
        try #require(HubCorePatchTests.publishes(hub.turn()).first)
    }

    @Test func theMemoStaysWithTheAudienceAndIsNewWhenItChanges() throws {
        var hub = HubCoreHarness()
        hub.join(1)
        hub.join(2)
        let first = try Self.publish(&hub)
        let memo = try #require(first.stateMemo)
        #expect(Set(first.stateTo) == [1, 2])
        memo.shell = memo  // what the shell keeps; the core must carry it along untouched

        hub.send(1, #"{"type":"select","letter":"Q"}"#)
        let changed = try #require(HubCorePatchTests.publishes(hub.commit()).first)
        #expect(changed.stateMemo === memo, "the same audience: the same memo, with what the shell kept")
        #expect(changed.stateMemo?.shell === memo)

        hub.join(3)
        let joined = try Self.publish(&hub)
        #expect(Set(joined.stateTo) == [1, 2, 3])
        let afterJoin = try #require(joined.stateMemo)
        #expect(afterJoin !== memo && afterJoin.shell == nil, "a newcomer: a new, empty memo")

        afterJoin.shell = afterJoin

        hub.leave(2)
        hub.send(1, #"{"type":"select","letter":"R"}"#)
        let left = try #require(HubCorePatchTests.publishes(hub.commit()).first)
        #expect(Set(left.stateTo) == [1, 3])
        let afterLeave = try #require(left.stateMemo)
        #expect(afterLeave !== afterJoin && afterLeave.shell == nil, "someone left: a new, empty memo")
        afterLeave.shell = afterLeave

        // 3 goes over to patches: the next change's whole states reach only 1,
        // through a new memo.
        hub.send(3, ClientMessage<LetterBoard>.subscribeFrame(.patch))
        _ = try Self.publish(&hub)
        hub.send(1, #"{"type":"select","letter":"S"}"#)
        let changed2 = try #require(HubCorePatchTests.publishes(hub.commit()).first)
        #expect(changed2.stateTo == [1] && changed2.patchTo == [3])
        let afterFormat = try #require(changed2.stateMemo)
        #expect(afterFormat !== afterLeave && afterFormat.shell == nil, "a change of format: a new, empty memo")
    }

    @Test func aPublishToSomeOfTheAudienceCarriesNoMemo() throws {
        var hub = HubCoreHarness()
        hub.join(1)
        hub.join(2)
        _ = try Self.publish(&hub)
        // Nothing changed; only the connection that asked gets the whole state.
        hub.send(2, ClientMessage<LetterBoard>.subscribeFrame(.state))
        let answer = try Self.publish(&hub)
        #expect(answer.stateTo == [2])
        #expect(answer.stateMemo == nil, "stateTo is not the audience: no memo to fill")
    }
}
