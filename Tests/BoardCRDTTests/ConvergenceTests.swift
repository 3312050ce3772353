import Testing
@testable import BoardCRDT

/// Seeded convergence fuzzing in the manner of Yjs and Loro: 3 to 8
/// replicas, random intents, random partial syncs with duplicated and
/// reordered delivery, replicas offline across compactions. Invariants are
/// checked after every step; after a full sync every replica must equal the
/// others and `ReferenceModel`. The schedule is `ConvergenceFuzz` (peers);
/// the letter board's part is `LetterBoardFuzz.swift`.
///
/// `BOARDCRDT_SEED=<n> BOARDCRDT_SCHEDULES=<k> swift test --filter Convergence`
/// runs k schedules from seed n; `BOARDCRDT_TRACE=1` prints each step.
@Suite struct ConvergenceTests {
    /// CI default: four tests of 5,000 schedules run in parallel (`LetterBoard.fuzz`).
    static func runShard(_ shard: Int) { ConvergenceFuzz<LetterBoard>.runShard(shard) }

    @Test func convergenceShard0() { Self.runShard(0) }
    @Test func convergenceShard1() { Self.runShard(1) }
    @Test func convergenceShard2() { Self.runShard(2) }
    @Test func convergenceShard3() { Self.runShard(3) }

    /// Seeds that once failed; each stays as its own test.
    static func regression(_ seed: UInt64) {
        if let failure = ConvergenceFuzz<LetterBoard>.run(seed: seed) { Issue.record("\(failure)") }
    }

    // Engine: draining the pending buffer left an empty entry per replica
    // behind (memory that grew with ids). Fixed with `takePending`; the same
    // fix drains, in `adopt`, buffered operations whose gap a checkpoint
    // covered (they used to stay buffered until their replica sent again).
    @Test func regressionSeed2963460096() { Self.regression(2_963_460_096) }
    @Test func regressionSeed2963460098() { Self.regression(2_963_460_098) }
    @Test func regressionSeed2963460099() { Self.regression(2_963_460_099) }
    @Test func regressionSeed2963460101() { Self.regression(2_963_460_101) }

    // Harness: two replicas compacted on both sides of a partition, making two
    // lines of checkpoints that cannot merge. Compaction must extend the
    // newest checkpoint (the hub is the only compactor in SyncHub); the
    // fuzzer now only compacts in a group holding the newest checkpoint.
    @Test func regressionSeed2963460330() { Self.regression(2_963_460_330) }
    @Test func regressionSeed2963460516() { Self.regression(2_963_460_516) }
    @Test func regressionSeed2963461093() { Self.regression(2_963_461_093) }
    @Test func regressionSeed2963461695() { Self.regression(2_963_461_695) }
}
