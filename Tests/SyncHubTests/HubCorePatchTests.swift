import BoardCRDT
import Foundation
import SyncWire
import Testing
@testable import SyncHub

/// Publishing with patches (docs/PROTOCOL.md "Patches") in the pure core:
/// who gets the whole state, who a patch, what a slow connection gets, and
/// presence for replica clients that ask for it.
@Suite struct HubCorePatchTests {
    static func publishes(_ actions: [HubAction]) -> [PublishedState] {
        actions.compactMap { if case let .publish(published) = $0 { published } else { nil } }
    }

    /// A letter board with a thin client on patches (1) and one on states (2).
    static func board() -> HubCoreHarness {
        var hub = HubCoreHarness()
        hub.join(1)
        hub.join(2)
        _ = hub.turn()
        hub.send(1, ClientMessage<LetterBoard>.subscribeFrame(.patch))
        return hub
    }

    @Test func subscribeGetsTheWholeStateAtOnceThenPatches() throws {
        var hub = Self.board()
        let first = try #require(Self.publishes(hub.turn()).first)
        #expect(first.patchTo == [1] && first.stateTo.isEmpty, "nothing changed: the whole-state client gets no copy")
        #expect(first.delivery(to: 1, holding: 0, stateWaiting: false) == .whole)
        hub.send(2, #"{"type":"select","letter":"Q"}"#)
        let next = try #require(Self.publishes(hub.commit()).first)
        #expect(next.base == first.generation && next.generation > first.generation)
        #expect(next.delivery(to: 1, holding: first.generation, stateWaiting: false) == .patch)
        let patch = try #require(next.patch)
        #expect(patch.contains(#""op":"add","path":"/order/0","value":"Q""#), "\(patch)")
        #expect(patch.hasPrefix(#"{"type":"patch","board":"k","version":1,"ops":["#))
    }

    @Test func aSlowConnectionGetsTheWholeStateNeverAPatchOnTopOfAnUnwrittenOne() throws {
        var hub = Self.board()
        let first = try #require(Self.publishes(hub.turn()).first)
        hub.send(2, #"{"type":"select","letter":"Q"}"#)
        let next = try #require(Self.publishes(hub.commit()).first)
        // Its last frame waits unwritten (it may still be replaced): whole.
        #expect(next.delivery(to: 1, holding: first.generation, stateWaiting: true) == .whole)
        // It holds an older state than the base (frames were replaced): whole.
        #expect(next.delivery(to: 1, holding: first.generation - 1, stateWaiting: false) == .whole)
        // It holds this very state already: nothing.
        #expect(next.delivery(to: 1, holding: next.generation, stateWaiting: false) == .nothing)
    }

    /// One leaves as another comes in the same turn: the board's clients
    /// and names are as they were, so the publish looks unchanged to everyone
    /// else, and the newcomer still gets its first state (seen as a hang of
    /// `bench --connect-only` under churn: upgraded, never a state).
    @Test func aNewcomerGetsTheWholeStateWhenSomeoneLeftInTheSameTurn() throws {
        var hub = HubCoreHarness()
        hub.join(1)
        hub.join(2)
        _ = hub.turn()
        hub.leave(2)
        hub.join(3)
        let publish = try #require(Self.publishes(hub.turn()).first)
        #expect(publish.stateTo == [3], "the newcomer, and only it: the others hold this state already")
    }

    @Test func aPublishThatChangesNothingForPatchesSendsNoPatch() throws {
        var hub = Self.board()
        let first = try #require(Self.publishes(hub.turn()).first)
        hub.core.markForPublish(hub.core.boards["k"])
        let again = try #require(Self.publishes(hub.turn()).first)
        #expect(again.patch == nil && again.generation == first.generation)
        #expect(again.delivery(to: 1, holding: first.generation, stateWaiting: false) == .nothing)
        #expect(again.stateTo.isEmpty, "nothing changed: whole-state clients get nothing new either")
    }

    @Test func aSubscribeSendsTheWholeStateToItsSenderOnlyWhenNothingChanged() throws {
        var hub = Self.board()
        _ = hub.turn()
        hub.send(2, ClientMessage<LetterBoard>.subscribeFrame(.state))
        let answer = try #require(Self.publishes(hub.turn()).first)
        #expect(answer.stateTo == [2] && answer.wholeTo == [2], "the other whole-state clients get no copy")
        #expect(answer.delivery(to: 1, holding: answer.generation, stateWaiting: false) == .nothing)
    }

    @Test func theWholeFrameAndThePatchedStateAreTheSameJSON() throws {
        var hub = Self.board()
        let first = try #require(Self.publishes(hub.turn()).first)
        hub.send(2, #"{"type":"select","letter":"Q"}"#)
        hub.send(2, #"{"type":"select","letter":"R"}"#)
        hub.send(2, #"{"type":"join","name":"bo"}"#)
        // The name shows at the end of the turn, the letters once durable.
        let base = Self.publishes(hub.hold()).last ?? first
        let next = try #require(Self.publishes(hub.commit()).first)
        // The patch frame the publish made, applied to the frame before it.
        let frame = try #require(next.patch.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        let ops = String(decoding: try JSONSerialization.data(withJSONObject: try #require(frame["ops"])), as: UTF8.self)
        let rebuilt = try StatePatchTests.apply(ops, to: base.frame)
        let whole = try JSONSerialization.jsonObject(with: Data(next.frame.utf8))
        #expect(StatePatchTests.same(rebuilt, whole))
    }

    @Test func subscribeWithFormatStateGoesBackToWholeStates() throws {
        var hub = Self.board()
        _ = hub.turn()
        hub.send(1, ClientMessage<LetterBoard>.subscribeFrame(.state))
        let back = try #require(Self.publishes(hub.turn()).first)
        #expect(back.patchTo.isEmpty && back.stateTo == [1], "the state at once to its sender only")
    }

    @Test func aBadFormatIsBadFieldAndChangesNothing() {
        var hub = Self.board()
        _ = hub.turn()
        let actions = hub.send(1, #"{"type":"subscribe","format":"xml","ref":"r"}"#)
        let error = HubCoreHarness.frames(actions, to: 1).first
        #expect(error?["code"] as? String == "bad_field" && error?["ref"] as? String == "r")
        #expect(hub.core.boards["k"]?.members[1]?.format == .patch)
    }

    @Test func replicaClientsThatAskForPresenceGetPresenceNotStates() throws {
        var hub = HubCoreHarness()
        hub.join(1)
        hub.join(2)
        hub.send(2, ClientMessage<LetterBoard>.helloFrame(ReplicaHello(replica: ReplicaID(77), name: "rep", frontier: .origin,
                                                                        sent: 0, presenceOnly: true)))
        let first = try #require(Self.publishes(hub.turn()).first)
        #expect(first.stateTo == [1] && first.presenceTo == [2])
        let presence = try #require(first.presence)
        #expect(presence.hasPrefix(#"{"type":"presence","board":"k","version":0,"clients":2,"names":["rep"]"#), "\(presence)")
        // A change that leaves presence as it was sends no presence (the ops carry it).
        hub.send(1, #"{"type":"select","letter":"Q"}"#)
        let next = try #require(Self.publishes(hub.commit()).first)
        #expect(next.presence == nil && next.presenceTo.isEmpty)
        // Someone joining is presence.
        hub.join(3)
        let joined = try #require(Self.publishes(hub.turn()).first)
        #expect(joined.presence?.contains(#""clients":3"#) == true)
        // Back to states (a hello without presence): a whole state at once,
        // whatever it held before (it got no states meanwhile).
        hub.send(2, ClientMessage<LetterBoard>.helloFrame(ReplicaHello(replica: ReplicaID(77), name: "rep", frontier: .origin, sent: 0)))
        let back = try #require(Self.publishes(hub.turn()).first)
        #expect(back.stateTo.contains(2) && back.wholeTo.contains(2) && back.presenceTo.isEmpty)
    }
}
