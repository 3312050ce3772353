/// SplitMix64 (Steele, Lea, Flood): tiny, seedable, and good enough to drive
/// schedules; Foundation randomness would not be reproducible from a seed.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Uniform-enough in 0..<n for small n; n must be positive.
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    mutating func inRange(_ range: ClosedRange<Int>) -> Int { range.lowerBound + below(range.count) }
    mutating func percent(_ p: Int) -> Bool { below(100) < p }
    mutating func shuffle<T>(_ items: inout [T]) {
        guard items.count > 1 else { return }
        for i in stride(from: items.count - 1, to: 0, by: -1) { items.swapAt(i, below(i + 1)) }
    }
}

/// What the schedules exercised (`PREFIX_STATS=1` prints it per shard):
/// named counters the generic schedule and the kind both bump, and named
/// maxima ("largest list").
struct FuzzCounts: CustomStringConvertible {
    var counters: [String: Int] = [:]
    var maxima: [String: Int] = [:]

    mutating func bump(_ name: String, by amount: Int = 1) { counters[name, default: 0] += amount }
    mutating func atLeast(_ name: String, _ value: Int) { maxima[name] = max(maxima[name] ?? value, value) }
    subscript(_ name: String) -> Int { counters[name] ?? 0 }

    mutating func add(_ other: FuzzCounts) {
        counters.merge(other.counters, uniquingKeysWith: +)
        maxima.merge(other.maxima, uniquingKeysWith: max)
    }

    var description: String {
        (counters.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            + maxima.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }).joined(separator: ", ")
    }
}

/// A reference, so that noting a step does not conflict with mutating one.
final class Trace {
    var lines: [String] = []
}

/// A broken check, with what reproduces it: the seed and the env knobs.
struct FuzzFailure: Error, CustomStringConvertible {
    var title: String
    var knobs: FuzzKnobs
    var filter: String
    var seed: UInt64
    var gaps: Bool?
    var step: Int
    var problems: [String]
    var trace: [String]

    var description: String {
        let p = knobs.prefix
        return "\(title) convergence failure, reproduce with \(p)_SEED=\(seed) "
            + (gaps.map { "\(p)_GAPS=\($0 ? 1 : 0) " } ?? "")
            + "\(p)_SCHEDULES=1 \(p)_TRACE=1 swift test --filter \(filter)\n"
            + "step \(step): " + problems.joined(separator: "\n  ")
            + (trace.isEmpty ? "" : "\ntrace:\n" + trace.joined(separator: "\n"))
    }
}
