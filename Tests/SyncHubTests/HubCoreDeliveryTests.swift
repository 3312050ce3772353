import BoardCRDT
import Foundation
import SyncWire
import Testing
@testable import SyncHub

/// Regression tests for "an ack is a promise" (issue: never lose or hide an
/// acknowledged change). Each failed on the hub before the fix.
struct HubCoreDeliveryTests {
    typealias H = HubCoreHarness

    /// Seq 2 arrives before seq 1: nothing is acknowledged as held until seq
    /// 1 arrives; then both are stored, relayed and counted.
    @Test func gappedOperationsAreStoredAndRelayedOnceTheGapCloses() {
        var hub = H()
        hub.join(1); hub.join(2)
        hub.send(1, #"{"type":"hello","replica":9}"#)
        hub.send(2, #"{"type":"hello","replica":10}"#)
        _ = hub.commit()

        hub.send(1, H.selects(9, [(2, 21, "B")], ref: "s2.1"))
        let first = hub.commit()
        let answer = H.frames(first, to: 1).first
        #expect(answer?["type"] as? String == "ack")
        #expect(answer?["have"] as? Int == 0, "seq 2 waits behind the gap: the hub holds none of replica 9's operations")
        #expect(H.frames(first, to: 2).isEmpty, "nothing is relayed while the gap is open")
        #expect(hub.letters()?.replica.state.order == [])

        hub.send(1, H.selects(9, [(1, 20, "A")], ref: "s1.2"))
        hub.hold()
        let stored = hub.inFlight.flatMap(\.operations).map(\.id.seq)
        #expect(stored == [1, 2], "both operations go to the store, not only the one in this frame")
        let second = hub.commit()
        #expect(H.frames(second, to: 1).first?["have"] as? Int == 2)
        let relayed = H.frames(second, to: 2).first { $0["type"] as? String == "ops" }
        #expect((relayed?["operations"] as? [Any])?.count == 2, "the other replica gets both")
        #expect(H.published(second)?["order"] as? [String] == ["A", "B"])
        #expect(H.published(second)?["version"] as? Int == 1, "one new state, one new version")
    }

    /// A frame the rate limiter drops is answered with its ref and what the
    /// hub holds, so the client sends it again instead of forgetting it.
    @Test func rateLimitedOperationsFrameTellsTheSenderWhatTheHubHolds() {
        var limits = HubLimits()
        limits.messagesPerSecond = 0.001
        limits.messageBurst = 2
        var hub = H(limits: limits)
        hub.join(1)
        hub.send(1, #"{"type":"hello","replica":9}"#)
        hub.send(1, H.selects(9, [(1, 20, "A")], ref: "s1.1"))
        _ = hub.commit()
        let dropped = hub.send(1, H.selects(9, [(2, 21, "B")], ref: "s2.2"))
        let error = H.frames(dropped, to: 1).first
        #expect(error?["code"] as? String == "rate_limited")
        #expect(error?["ref"] as? String == "s2.2")
        #expect(error?["have"] as? Int == 1)
    }

    /// `have` counts only what is durable: an operation still in flight is
    /// not reported as held, and `sync` does not show it.
    @Test func syncShowsOnlyDurableOperations() {
        var hub = H()
        hub.join(1); hub.join(2)
        hub.send(1, #"{"type":"hello","replica":9}"#)
        hub.send(1, H.selects(9, [(1, 20, "A")], ref: "s1.1"))
        hub.hold()
        let sync = H.frames(hub.send(2, #"{"type":"hello","replica":10}"#), to: 2).first
        #expect(sync?["type"] as? String == "sync")
        #expect((sync?["operations"] as? [Any])?.isEmpty == true, "the operation is not durable yet")
        let again = H.frames(hub.send(1, #"{"type":"hello","replica":9,"sent":1}"#), to: 1).first
        #expect(again?["have"] as? Int == 0)
        let after = hub.commit()
        #expect(H.frames(after, to: 2).contains { $0["type"] as? String == "ops" }, "relayed to the new replica once durable")
    }

    /// A replica the board has no record of, that says it sent operations,
    /// is told to start again rather than being left with a gap forever.
    @Test func unknownReplicaThatSentBeforeIsToldToStartAgain() {
        var hub = H()
        hub.join(1)
        let answer = H.frames(hub.send(1, #"{"type":"hello","replica":77,"sent":5}"#), to: 1).first
        #expect(answer?["code"] as? String == "unknown_replica")
        let ops = H.frames(hub.send(1, H.selects(77, [(6, 30, "C")], ref: "s6.1")), to: 1).first
        #expect(ops?["code"] as? String == "hello_first", "its operations are not taken")
        let fresh = H.frames(hub.send(1, #"{"type":"hello","replica":78,"sent":0}"#), to: 1).first
        #expect(fresh?["type"] as? String == "sync")
    }

    /// A resent keyed intent takes effect at most once: a reset whose ack
    /// was lost, resent after picks made since, clears nothing more.
    @Test func resentKeyedResetDoesNotClearLaterPicks() {
        var hub = H()
        hub.join(1)
        hub.send(1, #"{"type":"select","letter":"A","key":"k1"}"#)
        hub.send(1, #"{"type":"reset","ref":"r","key":"k2"}"#)
        let first = hub.commit()
        let ack = H.frames(first, to: 1).last
        hub.send(1, #"{"type":"select","letter":"B","key":"k3"}"#)
        _ = hub.commit()
        let resend = hub.send(1, #"{"type":"reset","ref":"again","key":"k2"}"#)
        let answer = H.frames(resend, to: 1).first
        #expect(answer?["type"] as? String == "ack")
        #expect(answer?["ref"] as? String == "again")
        #expect(answer?["version"] as? Int == ack?["version"] as? Int, "the first answer, again")
        let heldBefore = hub.inFlight.count
        hub.hold()
        #expect(hub.inFlight.count == heldBefore)
        #expect(hub.letters()?.replica.state.order == [Letter("B")].compactMap { $0 })
    }

    /// A resend that arrives before the first is durable waits for it and
    /// gets the same answer; the change is made once.
    @Test func keyedResendWhileInFlightGetsTheFirstAnswerOnceDurable() {
        var hub = H()
        hub.join(1); hub.join(2)
        hub.send(1, #"{"type":"select","letter":"C","ref":"a","key":"same"}"#)
        hub.hold()
        #expect(hub.send(2, #"{"type":"select","letter":"C","ref":"b","key":"same"}"#).isEmpty)
        hub.hold()
        #expect(hub.inFlight.flatMap(\.operations).count == 1)
        let after = hub.commit()
        #expect(H.frames(after, to: 1).first?["ref"] as? String == "a")
        #expect(H.frames(after, to: 2).first?["ref"] as? String == "b")
        #expect(H.frames(after, to: 2).first?["version"] as? Int == 1)
    }

    /// The keys the store is asked about in `actions`.
    static func lookups(_ actions: [HubAction]) -> [String] {
        actions.compactMap { if case let .store(.lookUpKey(_, key)) = $0 { key } else { nil } }
    }

    /// Keys older than memory are asked of the store (an action), the
    /// frame waits for the answer, and the store's answer counts as the first one.
    @Test func keysBeyondMemoryAreLookedUpInTheStore() {
        var limits = HubLimits()
        limits.rememberedKeysPerBoard = 2
        var hub = H(limits: limits)
        hub.join(1)
        for n in 0..<3 {
            let actions = hub.send(1, #"{"type":"deselect","letter":"Z","key":"k\#(n)"}"#)
            #expect(Self.lookups(actions).isEmpty, "nothing can be in the store yet")
        }
        _ = hub.commit()
        let asked = hub.send(1, #"{"type":"deselect","letter":"Z","ref":"z","key":"k0"}"#)
        #expect(Self.lookups(asked) == ["k0"], "k0 left memory")
        #expect(H.frames(asked, to: 1).isEmpty, "the frame waits for the store's answer")
        let answered = hub.handle(.store(.keyAnswer(board: "k", key: "k0", .success(.ack(version: 0)))))
        let answer = H.frames(answered, to: 1).first
        #expect(answer?["ref"] as? String == "z")
        let heldBefore = hub.inFlight.count
        hub.hold()
        #expect(hub.inFlight.count == heldBefore)
    }

    /// A board keeps its replica id across restarts: thin intents after a
    /// restart add no new replica to its version vector.
    @Test func boardKeepsItsReplicaIdAcrossRestarts() {
        var hub = H(hubReplica: ReplicaID(5))
        hub.join(1)
        hub.send(1, #"{"type":"select","letter":"A"}"#)
        hub.hold()
        #expect(hub.inFlight.first?.hubReplica == ReplicaID(5))
        let stored = StoredBoard(version: 1, checkpoint: nil, operations: hub.inFlight.flatMap(\.operations).map(\.json),
                                 hubReplica: ReplicaID(5))
        var restarted = H(hubReplica: ReplicaID(6))
        restarted.join(1, stored: stored)
        restarted.send(1, #"{"type":"select","letter":"B"}"#)
        let replicas = restarted.letters()?.replica.versions.entries.keys.map(\.rawValue)
        #expect(replicas == [5])
        #expect(restarted.letters()?.replica.versions[ReplicaID(5)] == 2)
    }

    /// Bounded replica metadata: a board that met thousands of replica ids
    /// keeps at most the limit once it compacts, and the checkpoint a client
    /// fetches stays small.
    @Test func boardForgetsLeastRecentReplicasWhenItCompacts() throws {
        var limits = HubLimits()
        limits.keptOperations = 16
        limits.maxReplicasPerBoard = 8
        limits.messageBurst = 1_000_000
        var hub = H(limits: limits)
        hub.join(1)
        for replica in UInt64(100)..<UInt64(2100) {
            hub.send(1, #"{"type":"hello","replica":\#(replica)}"#)
            let letter = ["A", "B"][Int(replica % 2)]
            let op = #"{"id":[\#(replica),1],"lamport":\#(replica),"change":{"op":"\#(replica % 4 < 2 ? "select" : "deselect")","# +
                     #""letter":"\#(letter)"}}"#
            hub.send(1, #"{"type":"ops","operations":[\#(op)]}"#)
            if replica % 8 == 0 { _ = hub.commit() }
        }
        _ = hub.commit()
        let room = try #require(hub.letters())
        // The 8 most recent idle ones, plus the board's own, the connected
        // one, those with operations after the checkpoint (at most 2 x 16)
        // and those with operations not yet durable (at most 8 here).
        #expect(room.replica.versions.entries.count <= 8 + 2 + 2 * 16 + 8)
        #expect(room.durableCheckpoint.versions.entries.count <= 8 + 2 + 8)
        #expect(room.replica.checkpoint.forgetHorizon > .origin)
        #expect(hub.core.counters.replicasForgotten > 1900)
        let sync = hub.send(1, #"{"type":"hello","replica":5000}"#)
        guard case let .send(_, text)? = sync.first else { Issue.record("no sync"); return }
        #expect(text.utf8.count < 8 * 1024, "a new replica's sync stays small: \(text.utf8.count) bytes")
    }
}

/// Regressions found by review: a `sync` during a compaction not yet durable,
/// a board that compacts while loading, and keys at a small memory.
struct HubCoreCatchUpTests {
    typealias H = HubCoreHarness

    /// A compaction whose record is still in flight folded operations that
    /// are in neither the durable checkpoint nor the log: the `sync` waits
    /// for the checkpoint, so a new replica never builds a state that never was.
    @Test func syncWaitsForACompactionToBecomeDurable() throws {
        var limits = HubLimits()
        limits.keptOperations = 16
        var hub = H(limits: limits)
        hub.join(1); hub.join(2)
        for n in 0..<31 { hub.send(1, #"{"type":"\#(n % 2 == 0 ? "select" : "deselect")","letter":"A"}"#) }
        _ = hub.commit()
        hub.send(1, #"{"type":"select","letter":"B"}"#)
        hub.hold()
        let room = try #require(hub.letters())
        #expect(room.compactionInFlight)
        #expect(H.frames(hub.send(2, #"{"type":"hello","replica":9}"#), to: 2).isEmpty, "no sync while the checkpoint is in flight")
        let after = hub.commit()
        let sync = H.frames(after, to: 2).first { $0["type"] as? String == "sync" }
        #expect(sync != nil, "the sync follows the checkpoint")
        #expect(sync?["replica"] as? Int == 9)
        // Its checkpoint and operations give exactly the durable order.
        let data = try JSONSerialization.data(withJSONObject: sync ?? [:])
        let frame = try JSONDecoder().decode(SyncFrame<LetterBoard>.self, from: data)
        var client = Replica<LetterBoard>(id: ReplicaID(9), limits: ReplicaLimits(compacts: false))
        if let checkpoint = frame.checkpoint { _ = try client.adopt(checkpoint, freshID: { ReplicaID(10) }) }
        client.receive(frame.operations)
        #expect(client.state == room.replica.state)
    }

    /// Loading a board with more operations than the window compacts it;
    /// that checkpoint holds only durable operations, so it is what a sync
    /// sends, and the next record stores it.
    @Test func aBoardThatCompactsWhileLoadingSyncsItsWholeState() throws {
        var writer = Replica<LetterBoard>(id: ReplicaID(5), limits: ReplicaLimits(compacts: false))
        var operations: [BoardCRDT.Operation<LetterBoard.Change>] = []
        let intents: [LetterBoard.Intent] = ["A", "B", "C", "D", "E"].map { .select(Letter($0)!) }
            + [.deselect(Letter("B")!), .select(Letter("F")!), .move(Letter("F")!, to: 1)]
        for intent in intents { operations += try [#require(try writer.perform(intent))] }
        var limits = HubLimits()
        limits.keptOperations = 2
        var hub = H(limits: limits)
        hub.join(
            1,
            stored: StoredBoard(version: 8, checkpoint: nil, operations: operations.map(LetterBoard.operationJSON),
                                hubReplica: ReplicaID(5)))
        let sync = H.frames(hub.send(1, #"{"type":"hello","replica":9}"#), to: 1).first
        let data = try JSONSerialization.data(withJSONObject: sync ?? [:])
        let frame = try JSONDecoder().decode(SyncFrame<LetterBoard>.self, from: data)
        var client = Replica<LetterBoard>(id: ReplicaID(9), limits: ReplicaLimits(compacts: false))
        if let checkpoint = frame.checkpoint { _ = try client.adopt(checkpoint, freshID: { ReplicaID(10) }) }
        client.receive(frame.operations)
        #expect(client.state.order == writer.state.order)
        hub.send(1, #"{"type":"select","letter":"Z"}"#)
        hub.hold()
        #expect(hub.inFlight.first?.checkpoint != nil, "the loaded compaction is stored")
    }

    /// With every remembered key pending, a key the store answered is not
    /// evicted before the resend that asked for it uses it.
    @Test func aKeyFromTheStoreIsNotEvictedBeforeItIsUsed() {
        var limits = HubLimits()
        limits.rememberedKeysPerBoard = 1
        var hub = H(limits: limits)
        hub.join(1, stored: StoredBoard(version: 1, checkpoint: nil, operations: [], hubReplica: nil, hasKeys: true))
        #expect(HubCoreDeliveryTests.lookups(hub.send(1, #"{"type":"select","letter":"B","key":"pending"}"#)) == ["pending"])
        hub.handle(.store(.keyAnswer(board: "k", key: "pending", .success(nil))))
        hub.hold()
        #expect(HubCoreDeliveryTests.lookups(hub.send(1, #"{"type":"select","letter":"A","ref":"r","key":"old"}"#)) == ["old"])
        let answer = H.frames(hub.handle(.store(.keyAnswer(board: "k", key: "old", .success(.ack(version: 1))))), to: 1).first
        #expect(answer?["ref"] as? String == "r")
        #expect(answer?["version"] as? Int == 1)
        hub.hold()
        #expect(hub.inFlight.flatMap(\.operations).count == 1, "only B was applied")
    }
}
