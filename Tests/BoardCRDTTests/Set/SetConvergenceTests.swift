import Testing
@testable import BoardCRDT

/// Seeded convergence fuzzing of the Set table through a sealing hub over
/// connections: `ConvergenceFuzz<SetTable>` (what the table supplies is in
/// `SetFuzz.swift`). Default: 2 shards of 40 schedules.
///
/// `BOARDCRDT_SET_SEED=<n> BOARDCRDT_SET_SCHEDULES=<k> swift test --filter SetConvergence`
/// runs k schedules from seed n; `BOARDCRDT_SET_TRACE=1` prints each step of
/// a failure, `BOARDCRDT_SET_STATS=1` what the schedules exercised,
/// `BOARDCRDT_SET_GAPS=0` keeps the hub from buffering gaps (see `FuzzTopology.connections`).
@Suite struct SetConvergenceTests {
    /// Seeds that once failed: a re-stamped own operation that came back
    /// landed on the author's later local ones (equal stamps), also when
    /// the hub's versions came back out of order or in one batch. The
    /// schedules these seeds give have changed since (compaction,
    /// checkpoints, per-connection order); they still run in full, and
    /// `engineViolations` ("log out of stamp order") fails them after any
    /// step where an author's own operations collide.
    @Test(arguments: [1_584_900_894, 1_584_900_945, 15] as [UInt64])
    func reStampedOwnOperationsKeepTheAuthorsOrder(seed: UInt64) throws {
        var schedule = ConvergenceFuzz<SetTable>(seed: seed, tracing: false)
        try schedule.run()
        #expect(schedule.counts["operations"] > 0)
    }

    /// Found by the fuzz with gaps: a sealing hub that compacted past an
    /// operation it held behind a gap retired its replica and refused it,
    /// and every later one, as stale for good. It now keeps them and
    /// re-stamps them after the checkpoint once the gap fills.
    @Test func aSealingHubThatCompactsPastAHeldOperationStillIntegratesIt() throws {
        var hub = table(1, dealt(twelve), limits: ReplicaLimits(keptOperations: 1, sealsOrder: true))
        var client = table(2, dealt(twelve), limits: ReplicaLimits(compacts: false, hubSealsOrder: true))
        let first = try #require(try client.perform(.deal, by: "ana"))      // dropped by the rate limiter
        let second = try #require(try client.perform(.deal, by: "ana"))     // arrives first: held
        #expect(hub.receive([second]).buffered == 1)
        for _ in 0..<4 { _ = try hub.perform(.deal, by: "") }
        #expect(hub.checkpoint.frontier > second.stamp, "the hub compacted past the held operation")
        let report = hub.receive([first, second])
        #expect(report.refused.isEmpty)
        #expect(hub.versions[ReplicaID(2)] == 2)
        #expect(report.restamped == [first.id, second.id])
        expectTableInvariants(hub)
    }

    @Test(arguments: [1_584_900_896, 1_584_901_023] as [UInt64])
    func seedsThatFoundTheRetiredReplicaPass(seed: UInt64) throws {
        if let failure = ConvergenceFuzz<SetTable>.run(seed: seed, gaps: true) { Issue.record("\(failure)") }
    }

    @Test func setConvergenceShard0() { ConvergenceFuzz<SetTable>.runShard(0) }
    @Test func setConvergenceShard1() { ConvergenceFuzz<SetTable>.runShard(1) }
}
