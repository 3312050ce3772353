import Testing
@testable import BoardCRDT

/// Seeded convergence fuzzing of the reminders list through a sealing,
/// compacting hub: `ConvergenceFuzz<TodoList>` (what the list supplies is
/// in `TodoFuzz.swift`).
///
/// `BOARDCRDT_TODO_SEED=<n> BOARDCRDT_TODO_SCHEDULES=<k> swift test --filter TodoConvergence`
/// runs k schedules from seed n; `BOARDCRDT_TODO_TRACE=1` prints each step
/// of a failure, `BOARDCRDT_TODO_STATS=1` what the schedules exercised, and
/// `BOARDCRDT_TODO_GAPS=0` keeps clients from leaving gaps at the hub
/// across batches (on by default). Default: 2 shards of 60 schedules.
@Suite struct TodoConvergenceTests {
    @Test func todoConvergenceShard0() { ConvergenceFuzz<TodoList>.runShard(0) }
    @Test func todoConvergenceShard1() { ConvergenceFuzz<TodoList>.runShard(1) }
}
