import Testing
@testable import BoardCRDT

/// Seeded convergence fuzzing of the juice bar through a sealing,
/// compacting hub (see `StockFuzzSchedule`).
///
/// `BOARDCRDT_STOCK_SEED=<n> BOARDCRDT_STOCK_SCHEDULES=<k> swift test --filter StockConvergence`
/// runs k schedules from seed n; `BOARDCRDT_STOCK_TRACE=1` prints each step
/// of a failure, `BOARDCRDT_STOCK_STATS=1` what the schedules exercised, and
/// `BOARDCRDT_STOCK_GAPS=0` keeps clients from leaving gaps at the hub
/// across batches (on by default).
@Suite struct StockConvergenceTests {
    static let defaultSeed: UInt64 = 0x57_0C4
    /// Kept small enough for well under a second per shard in a debug build.
    static let defaultSchedulesPerShard = 50
    static let shards = 2

    static let knobs = FuzzKnobs(prefix: "BOARDCRDT_STOCK", defaultSeed: defaultSeed, defaultSchedules: defaultSchedulesPerShard * shards, shards: shards)

    static func seeds(shard: Int) -> [UInt64] { knobs.seeds(shard: shard) }

    static func runShard(_ shard: Int) {
        let tracing = knobs.value("TRACE") != nil
        let gaps = knobs.value("GAPS") != "0"
        var totals = StockFuzzStatistics()
        for seed in seeds(shard: shard) {
            var schedule = StockFuzzSchedule(seed: seed, tracing: tracing, gaps: gaps)
            do {
                try schedule.run()
            } catch {
                Issue.record("\(error)")
                return
            }
            totals.add(schedule.statistics)
        }
        if knobs.value("STATS") != nil { print("stock shard \(shard): \(totals)") }
    }

    /// Seeds that once failed: a client's operations buffered at the hub
    /// behind a gap, a compaction past them, and the hub refusing that
    /// client `stale` from then on (fixed in `Replica.compact`; see
    /// `StockConcurrentTests.sealingHubKeepsBufferedOperationsAcrossACompaction`).
    @Test(arguments: [356_548, 356_555] as [UInt64])
    func bufferedOperationsSurviveTheHubsCompactions(seed: UInt64) throws {
        var schedule = StockFuzzSchedule(seed: seed, tracing: false, gaps: true)
        try schedule.run()
    }

    @Test func stockConvergenceShard0() { Self.runShard(0) }
    @Test func stockConvergenceShard1() { Self.runShard(1) }
}
