import Testing
@testable import BoardCRDT

/// Seeded convergence fuzzing of the shop through a sealing, compacting
/// hub: `ConvergenceFuzz<BanchanShop>` (what the shop supplies is in
/// `ShopFuzz.swift`).
///
/// `BOARDCRDT_SHOP_SEED=<n> BOARDCRDT_SHOP_SCHEDULES=<k> swift test --filter ShopConvergence`
/// runs k schedules from seed n; `BOARDCRDT_SHOP_TRACE=1` prints each step
/// of a failure, `BOARDCRDT_SHOP_STATS=1` what the schedules exercised, and
/// `BOARDCRDT_SHOP_GAPS=0` keeps clients from leaving gaps at the hub.
/// Default: 2 shards of 60 schedules.
@Suite struct ShopConvergenceTests {
    @Test func shopConvergenceShard0() { ConvergenceFuzz<BanchanShop>.runShard(0) }
    @Test func shopConvergenceShard1() { ConvergenceFuzz<BanchanShop>.runShard(1) }
}
