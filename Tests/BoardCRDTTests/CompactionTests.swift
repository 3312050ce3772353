import Testing
@testable import BoardCRDT

/// Checkpoints, bounded memory, and what happens to a replica that was away
/// across a compaction (stale operations, rebase under a fresh id).
@Suite struct CompactionTests {
    @Test func compactionKeepsStateAndFoldsTheLog() throws {
        var hub = board(1)
        try select(&hub, "ABCD")
        try perform(&hub, .deselect(tile("B")), .move(tile("D"), to: 1))
        let state = hub.state
        hub.compact(keeping: 2)
        #expect(hub.state == state)
        #expect(hub.log.count == 2)
        #expect(hub.checkpoint.frontier == Stamp(lamport: 4, replica: ReplicaID(1)))
        #expect(hub.checkpoint.versions[ReplicaID(1)] == 4)
        #expect(hub.versions[ReplicaID(1)] == 6)
        expectInvariants(hub)
    }

    @Test func automaticCompactionBoundsTheLog() throws {
        var hub = board(1, limits: ReplicaLimits(keptOperations: 4))
        for round in 0..<100 {
            let letter = Letter.all[round % 26]
            try perform(&hub, .select(letter))
            if hub.state.order.count == 6 { try perform(&hub, .reset) }
            #expect(hub.log.count < 8)
        }
        expectInvariants(hub)
        var fresh = Board(id: ReplicaID(2), checkpoint: hub.checkpoint)
        fresh.receive(hub.log)
        #expect(fresh.state == hub.state, "checkpoint plus recent operations is the whole board")
    }

    @Test func aReplicaStartsFromACheckpoint() throws {
        var hub = board(1)
        try select(&hub, "XYZ")
        hub.compact()
        let client = Board(id: ReplicaID(2), checkpoint: hub.checkpoint)
        #expect(orderText(client) == "XYZ")
        #expect(client.versions == hub.versions)
        #expect(client.clock == 3, "its next operation is stamped after the checkpoint")
    }

    @Test func deltaCarriesTheCheckpointOnlyToReplicasBehindIt() throws {
        var hub = board(1), client = board(2)
        try select(&hub, "AB")
        hub.compact(keeping: 1)
        let behind = hub.delta(for: client.versions, remoteFrontier: client.checkpoint.frontier)
        #expect(behind.checkpoint == hub.checkpoint)
        #expect(behind.operations.map(\.id.seq) == [2])
        sync(hub, to: &client)
        #expect(orderText(client) == "AB")
        let level = hub.delta(for: client.versions, remoteFrontier: client.checkpoint.frontier)
        #expect(level.checkpoint == nil)
        #expect(level.operations.isEmpty)
        expectInvariants(client)
    }

    @Test func operationFromAReplicaOfflineAcrossACompactionIsStaleAndRebased() throws {
        var hub = board(1), away = board(2)
        try select(&hub, "AB")
        syncBoth(&hub, &away)
        let lost = try select(&away, "C")[0] // Lamport 3, never reaches the hub in time
        try select(&hub, "DE") // Lamport 3 and 4
        hub.compact()
        #expect(hub.checkpoint.frontier == Stamp(lamport: 4, replica: ReplicaID(1)))

        let before = hub.state
        let refused = hub.receive(lost)
        #expect(refused.refused == [.stale(lost.id, frontier: hub.checkpoint.frontier)])
        #expect(refused.refused[0].description.contains("predates the board's checkpoint"))
        #expect(hub.state == before, "a stale operation changes nothing")

        let (adopt, _) = sync(hub, to: &away, freshID: ReplicaID(7))
        #expect(adopt.adopted)
        #expect(away.id == ReplicaID(7), "the replica continues under a fresh id")
        #expect(adopt.rebased.map(\.change) == [.select(tile("C"))], "its intent survives")
        #expect(adopt.rebased[0].lamport > hub.checkpoint.frontier.lamport)
        #expect(orderText(away) == "ABDEC")

        sync(away, to: &hub)
        #expect(hub.state == away.state)
        #expect(hub.versions == away.versions)
        #expect(hub.versions[ReplicaID(2)] == 0, "the stale operation is in nobody's history")
        expectInvariants(hub)
        expectInvariants(away)
    }

    @Test func laterOperationsOfARetiredReplicaAreStaleToo() throws {
        var hub = board(1), away = board(2)
        let early = try select(&away, "Q")[0]
        try select(&hub, "AB")
        hub.compact()
        let late = try select(&away, "RS")
        #expect(late.allSatisfy { $0.stamp > hub.checkpoint.frontier }, "stamped after the frontier")
        hub.receive(early)
        let report = hub.receive(late)
        #expect(report.refused.count == 2, "its history crossed the checkpoint: all of it waits for the rebase")
        #expect(orderText(hub) == "AB")
        sync(hub, to: &away, freshID: ReplicaID(8))
        sync(away, to: &hub)
        #expect(orderText(hub) == "ABQRS")
        #expect(hub.state == away.state)
    }

    @Test func replicaOfflineButStampedAfterTheFrontierIsKept() throws {
        var hub = board(1), away = board(2)
        try select(&hub, "A")
        syncBoth(&hub, &away)
        hub.compact() // frontier 1@1
        let offline = try select(&away, "B") // Lamport 2: after the frontier
        sync(hub, to: &away)
        #expect(away.id == ReplicaID(2), "no rebase needed")
        hub.receive(offline)
        #expect(orderText(hub) == "AB")
        #expect(hub.state == away.state)
    }

    @Test func olderCheckpointIsNotAdopted() throws {
        var hub = board(1)
        try select(&hub, "AB")
        hub.compact(keeping: 1)
        let old = hub.checkpoint
        try select(&hub, "C")
        hub.compact()
        let report = try hub.adopt(old, freshID: { ReplicaID(5) })
        #expect(!report.adopted)
        #expect(orderText(hub) == "ABC")
    }

    @Test func checkpointFromAnotherLineOfCompactionsIsRefused() throws {
        var a = board(1), b = board(2)
        try select(&a, "A")
        a.compact()
        try select(&b, "B")
        try perform(&b, .deselect(tile("B")), .select(tile("B")))
        b.compact()
        #expect(throws: CheckpointRefusal.divergent) { try a.adopt(b.checkpoint, freshID: { ReplicaID(5) }) }
        #expect(orderText(a) == "A")
        #expect(!CheckpointRefusal.divergent.description.isEmpty)
        // Through `apply` (a delta with that checkpoint) the refusal is reported, not dropped.
        let (adopt, _) = a.apply(Delta(checkpoint: b.checkpoint), freshID: { ReplicaID(5) })
        #expect(adopt.refusal == .divergent)
        #expect(!adopt.adopted)
    }

    @Test func adoptingACheckpointDrainsOperationsThatWaitedOnIt() throws {
        var hub = board(1), client = board(2)
        let ops = try select(&hub, "ABC")
        client.receive(ops[2]) // waits for 1 and 2
        hub.compact(keeping: 1)
        let delta = Delta<LetterBoard>(checkpoint: hub.checkpoint, operations: [])
        client.apply(delta, freshID: { ReplicaID(5) })
        #expect(orderText(client) == "ABC", "the buffered third operation follows the checkpoint")
        #expect(client.pendingCount == 0)
        expectInvariants(client)
    }

    @Test func memoryStaysBoundedWithManyReplicas() throws {
        var hub = board(1, limits: ReplicaLimits(keptOperations: 8))
        for raw in UInt64(2)..<200 {
            var client = board(raw)
            sync(hub, to: &client)
            if let op = try client.perform(.select(Letter.all[Int(raw) % 26])) { hub.receive(op) }
            if hub.state.order.count == 6 { try perform(&hub, .reset) }
        }
        #expect(hub.log.count < 16)
        // The version vector keeps one entry per replica id ever seen: the
        // documented limit (docs/SEMANTICS.md).
        #expect(hub.versions.entries.count <= 199)
        expectInvariants(hub)
    }
}
