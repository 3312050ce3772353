import Foundation
import Testing
@testable import BoardCRDT

/// Bounded replica metadata (docs/SEMANTICS.md, "Forgetting replicas").
struct ForgettingTests {
    /// The hub forgets the least recently active replicas once they are
    /// folded, never itself, a connected one, or one with operations in the log.
    @Test func forgetsLeastRecentFoldedReplicasOnly() throws {
        var hub = board(1, limits: ReplicaLimits(keptOperations: 1, compacts: false))
        var clients = (2...6).map { board(UInt64($0)) }
        for index in clients.indices {
            sync(hub, to: &clients[index])
            let op = try select(&clients[index], ["A", "B", "C", "D", "E"][index])
            hub.receive(op)
        }
        hub.compact(keeping: 1)
        // Replicas 2...5 are folded; 6's operation is still in the log.
        let forgotten = hub.forgetReplicas(beyond: 0, keeping: [ReplicaID(3)])
        #expect(forgotten == 3, "2, 4 and 5 go; 3 is connected, 6 has an operation in the log")
        #expect(hub.knows(ReplicaID(3)) && hub.knows(ReplicaID(6)))
        #expect(!hub.knows(ReplicaID(2)) && !hub.knows(ReplicaID(4)) && !hub.knows(ReplicaID(5)))
        #expect(hub.checkpoint.forgetHorizon <= hub.checkpoint.frontier)
        #expect(hub.checkpoint.forgetHorizon.lamport >= 1)
        expectInvariants(hub)
    }

    /// A client holding operations of replicas the hub has since forgotten
    /// adopts the hub's checkpoint as folding them, and converges: nothing is
    /// retired, replayed twice, or lost.
    @Test func clientAdoptsACheckpointThatForgotReplicas() throws {
        var hub = board(1, limits: ReplicaLimits(keptOperations: 1, compacts: false))
        var writer = board(2)
        var watcher = board(3)
        let ops = try select(&writer, "ABC")
        hub.receive(ops)
        watcher.receive(ops)
        try perform(&hub, .select(tile("D")))
        hub.compact(keeping: 0)
        #expect(hub.forgetReplicas(beyond: 0, keeping: []) == 1, "replica 2 is forgotten")
        let report = try watcher.adopt(hub.checkpoint, freshID: { ReplicaID(99) })
        #expect(report.adopted)
        #expect(report.rebased.isEmpty)
        #expect(watcher.id == ReplicaID(3), "its own id is untouched")
        #expect(orderText(watcher) == "ABCD")
        #expect(watcher.log.isEmpty)
        #expect(watcher.retired.isEmpty, "replica 2's operations are folded, not late")
        expectInvariants(watcher)
    }

    /// A client whose checkpoint already names a replica adopts a later one
    /// that forgot it (a plain dominance check calls that divergent). A
    /// replica missing for another reason, whose operation the client holds
    /// stamped after the horizon, still makes the checkpoint divergent.
    @Test func aCheckpointThatForgotAReplicaTheClientKnowsIsAContinuation() throws {
        var hub = board(1, limits: ReplicaLimits(keptOperations: 1, compacts: false))
        var writer = board(2)
        var watcher = board(3)
        hub.receive(try select(&writer, "AB"))
        hub.compact(keeping: 0)
        _ = try watcher.adopt(hub.checkpoint, freshID: { ReplicaID(98) })
        #expect(watcher.checkpoint.versions[ReplicaID(2)] == 2)
        try perform(&hub, .select(tile("C")))
        hub.compact(keeping: 0)
        #expect(hub.forgetReplicas(beyond: 0, keeping: []) == 1)
        #expect(hub.checkpoint.versions[ReplicaID(2)] == 0)
        let report = try watcher.adopt(hub.checkpoint, freshID: { ReplicaID(99) })
        #expect(report.adopted)
        #expect(orderText(watcher) == "ABC")
        expectInvariants(watcher)

        // A checkpoint from another history: it lacks replica 4, whose
        // operation this client holds after that checkpoint's horizon.
        var other = board(4)
        var stranger = board(5, limits: ReplicaLimits(keptOperations: 1, compacts: false))
        let late = try select(&other, "Z")
        var client = board(6)
        client.receive(late)
        client.compact(keeping: 0)
        try perform(&stranger, .select(tile("Y")))
        stranger.compact(keeping: 0)
        _ = stranger.forgetReplicas(beyond: 0, keeping: [])
        var fake = stranger.checkpoint
        fake.forgetHorizon = Stamp(lamport: 0, replica: ReplicaID(1))
        fake.frontier = Stamp(lamport: 9, replica: ReplicaID(5))
        #expect(throws: CheckpointRefusal.divergent) { try client.adopt(fake, freshID: { ReplicaID(97) }) }
    }

    /// The horizon travels with the checkpoint; an older checkpoint without
    /// it still decodes; a horizon after the frontier is refused.
    @Test func forgetHorizonIsCodable() throws {
        let checkpoint = Checkpoint<LetterBoard>(state: .init(), frontier: Stamp(lamport: 9, replica: ReplicaID(1)),
                                                 versions: VersionVector([ReplicaID(1): 3]),
                                                 forgetHorizon: Stamp(lamport: 4, replica: ReplicaID(7)))
        let data = try JSONEncoder().encode(checkpoint)
        #expect(try JSONDecoder().decode(Checkpoint<LetterBoard>.self, from: data) == checkpoint)
        let old = #"{"state":{"selections":[]},"frontier":{"lamport":9,"replica":1},"versions":[[1,3]]}"#
        #expect(try JSONDecoder().decode(Checkpoint<LetterBoard>.self, from: Data(old.utf8)).forgetHorizon == .origin)
        let bad = #"{"state":{"selections":[]},"frontier":{"lamport":2,"replica":1},"versions":[],"forgetHorizon":{"lamport":5,"# +
                  #""replica":1}}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Checkpoint<LetterBoard>.self, from: Data(bad.utf8)) }
    }
}
