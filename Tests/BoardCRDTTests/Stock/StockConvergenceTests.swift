import Testing
@testable import BoardCRDT

/// Seeded convergence fuzzing of the juice bar through a sealing,
/// compacting hub: `ConvergenceFuzz<FruitStock>` (what the stock supplies
/// is in `StockFuzz.swift`).
///
/// `BOARDCRDT_STOCK_SEED=<n> BOARDCRDT_STOCK_SCHEDULES=<k> swift test --filter StockConvergence`
/// runs k schedules from seed n; `BOARDCRDT_STOCK_TRACE=1` prints each step
/// of a failure, `BOARDCRDT_STOCK_STATS=1` what the schedules exercised, and
/// `BOARDCRDT_STOCK_GAPS=0` keeps clients from leaving gaps at the hub
/// across batches (on by default). Default: 2 shards of 50 schedules.
@Suite struct StockConvergenceTests {
    /// Seeds that once failed: a client's operations buffered at the hub
    /// behind a gap, a compaction past them, and the hub refusing that
    /// client `stale` from then on (fixed in `Replica.compact`; see
    /// `StockConcurrentTests.sealingHubKeepsBufferedOperationsAcrossACompaction`).
    @Test(arguments: [356_548, 356_555] as [UInt64])
    func bufferedOperationsSurviveTheHubsCompactions(seed: UInt64) throws {
        if let failure = ConvergenceFuzz<FruitStock>.run(seed: seed) { Issue.record("\(failure)") }
    }

    @Test func stockConvergenceShard0() { ConvergenceFuzz<FruitStock>.runShard(0) }
    @Test func stockConvergenceShard1() { ConvergenceFuzz<FruitStock>.runShard(1) }
}
