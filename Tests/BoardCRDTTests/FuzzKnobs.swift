#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The environment knobs every convergence fuzz reads, named by a prefix:
/// `PREFIX_SEED`, `PREFIX_SCHEDULES`, `PREFIX_TRACE`, `PREFIX_STATS`, ...
/// (`BOARDCRDT` for the letters, `BOARDCRDT_SET`, `BOARDCRDT_STOCK`).
struct FuzzKnobs {
    let prefix: String
    let defaultSeed: UInt64
    /// Schedules over all shards when `PREFIX_SCHEDULES` is not set.
    let defaultSchedules: Int
    let shards: Int

    /// `PREFIX_name`, when set.
    func value(_ name: String) -> String? {
        guard let value = getenv(prefix + "_" + name) else { return nil }
        return String(cString: value)
    }

    /// The seeds shard `shard` runs: every `shards`-th seed from the base.
    func seeds(shard: Int) -> [UInt64] {
        let base = value("SEED").flatMap { UInt64($0) } ?? defaultSeed
        let total = value("SCHEDULES").flatMap { Int($0) } ?? defaultSchedules
        return stride(from: shard, to: total, by: shards).map { base &+ UInt64($0) }
    }
}
