import Testing
@testable import BoardCRDT
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Seeded convergence fuzzing of the Set table through a sealing hub (see
/// `SetFuzzSchedule`).
///
/// `BOARDCRDT_SET_SEED=<n> BOARDCRDT_SET_SCHEDULES=<k> swift test --filter SetConvergence`
/// runs k schedules from seed n; `BOARDCRDT_SET_TRACE=1` prints each step of
/// a failure, `BOARDCRDT_SET_STATS=1` what the schedules exercised.
@Suite struct SetConvergenceTests {
    static let defaultSeed: UInt64 = 0x5E7_7AB1E
    /// Kept small enough for about a second per shard in a debug build.
    static let defaultSchedulesPerShard = 50
    static let shards = 2

    static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }

    static func seeds(shard: Int) -> [UInt64] {
        let base = environment("BOARDCRDT_SET_SEED").flatMap { UInt64($0) } ?? defaultSeed
        let total = environment("BOARDCRDT_SET_SCHEDULES").flatMap { Int($0) } ?? defaultSchedulesPerShard * shards
        return stride(from: shard, to: total, by: shards).map { base &+ UInt64($0) }
    }

    static func runShard(_ shard: Int) {
        let tracing = environment("BOARDCRDT_SET_TRACE") != nil
        var totals = SetFuzzStatistics()
        var firstCollision: String?
        for seed in seeds(shard: shard) {
            var schedule = SetFuzzSchedule(seed: seed, tracing: tracing)
            do {
                try schedule.run()
            } catch {
                Issue.record("\(error)")
                return
            }
            totals.add(schedule.statistics)
            firstCollision = firstCollision ?? schedule.firstCollision
        }
        if environment("BOARDCRDT_SET_STATS") != nil { print("set shard \(shard): \(totals)") }
        if let firstCollision {
            // Regression for seed 1584900894: a re-stamped own operation used
            // to land on or after the author's later local ones.
            Issue.record("own operations out of stamp order in \(totals.ownStampCollisions) steps; first: \(firstCollision)")
        }
    }

    /// Seeds that once failed: a re-stamped own operation that came back
    /// landed on the author's later local ones (equal stamps), also when
    /// the hub's versions came back out of order or in one batch.
    @Test(arguments: [1_584_900_894, 1_584_900_945, 15] as [UInt64])
    func reStampedOwnOperationsKeepTheAuthorsOrder(seed: UInt64) throws {
        var schedule = SetFuzzSchedule(seed: seed, tracing: false)
        try schedule.run()
        #expect(schedule.firstCollision == nil)
    }

    @Test func setConvergenceShard0() { Self.runShard(0) }
    @Test func setConvergenceShard1() { Self.runShard(1) }
}
