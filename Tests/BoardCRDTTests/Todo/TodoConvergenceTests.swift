import Testing
@testable import BoardCRDT

/// Seeded convergence fuzzing of the reminders list through a sealing,
/// compacting hub (see `TodoFuzzSchedule`).
///
/// `BOARDCRDT_TODO_SEED=<n> BOARDCRDT_TODO_SCHEDULES=<k> swift test --filter TodoConvergence`
/// runs k schedules from seed n; `BOARDCRDT_TODO_TRACE=1` prints each step
/// of a failure, `BOARDCRDT_TODO_STATS=1` what the schedules exercised, and
/// `BOARDCRDT_TODO_GAPS=0` keeps clients from leaving gaps at the hub
/// across batches (on by default).
@Suite struct TodoConvergenceTests {
    static let defaultSeed: UInt64 = 0x70D0_11
    /// Kept small enough for well under a second per shard in a debug build.
    static let defaultSchedulesPerShard = 60
    static let shards = 2

    static let knobs = FuzzKnobs(prefix: "BOARDCRDT_TODO", defaultSeed: defaultSeed, defaultSchedules: defaultSchedulesPerShard * shards, shards: shards)

    static func runShard(_ shard: Int) {
        let tracing = knobs.value("TRACE") != nil
        let gaps = knobs.value("GAPS") != "0"
        var totals = TodoFuzzStatistics()
        var failures = 0
        for seed in knobs.seeds(shard: shard) {
            var schedule = TodoFuzzSchedule(seed: seed, tracing: tracing, gaps: gaps)
            do {
                try schedule.run()
            } catch {
                Issue.record("\(error)")
                failures += 1
                if failures >= 3 { return }
                continue
            }
            totals.add(schedule.statistics)
        }
        if knobs.value("STATS") != nil { print("todo shard \(shard): \(totals)") }
    }

    @Test func todoConvergenceShard0() { Self.runShard(0) }
    @Test func todoConvergenceShard1() { Self.runShard(1) }
}
