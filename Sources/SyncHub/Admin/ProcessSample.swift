import Foundation

/// This process's CPU and memory as the console shows them (O2), read from
/// /proc on Linux: the CPU share over the last second (100 = one core) and
/// the resident set.
struct ProcessSample {
    private var lastTicks: UInt64?
    private var lastNanos: UInt64 = 0
    private(set) var cpuPercent = 0.0
    let started = Date()

    /// Called about once a second (the hub's tick).
    mutating func update(nowNanos: UInt64) {
        guard nowNanos >= lastNanos + 1_000_000_000 || lastTicks == nil else { return }
        guard let ticks = Self.cpuTicks() else { return }
        if let lastTicks, nowNanos > lastNanos {
            let seconds = Double(ticks - min(ticks, lastTicks)) / Double(sysconf(Int32(_SC_CLK_TCK)))
            cpuPercent = 100 * seconds / (Double(nowNanos - lastNanos) / 1e9)
        }
        lastTicks = ticks
        lastNanos = nowNanos
    }

    /// utime + stime of this process, in clock ticks.
    static func cpuTicks() -> UInt64? {
        guard let text = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // Fields after the command's closing parenthesis: state is the 3rd field overall, utime the 14th.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return nil }
        return user + system
    }

    /// Resident set size in bytes.
    static func residentBytes() -> UInt64 {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = UInt64(fields[1]) else { return 0 }
        return pages * UInt64(sysconf(Int32(_SC_PAGESIZE)))
    }
}

/// What the hub's connections of each board were sent over the last ten
/// seconds (O3: bytes per second), in one-second buckets.
struct BoardTraffic {
    private var buckets: [String: (second: UInt64, bytes: [UInt64])] = [:]

    mutating func note(_ bytes: Int, board: String, nowNanos: UInt64) {
        guard bytes > 0 else { return }
        let second = nowNanos / 1_000_000_000
        // In place: no copy of the buckets per publish.
        Self.advance(&buckets[board, default: (second, [UInt64](repeating: 0, count: 10))], to: second)
        buckets[board]?.bytes[Int(second % 10)] &+= UInt64(bytes)
    }

    /// Bytes per second over the last ten seconds.
    func perSecond(_ board: String, nowNanos: UInt64) -> Double {
        guard var entry = buckets[board] else { return 0 }
        Self.advance(&entry, to: nowNanos / 1_000_000_000)
        return Double(entry.bytes.reduce(0, +)) / 10
    }

    /// Forgets boards no longer held.
    mutating func keep(only held: (String) -> Bool) {
        buckets = buckets.filter { held($0.key) }
    }

    private static func advance(_ entry: inout (second: UInt64, bytes: [UInt64]), to second: UInt64) {
        guard second > entry.second else { return }
        for step in 1...min(10, second - entry.second) { entry.bytes[Int((entry.second + step) % 10)] = 0 }
        entry.second = second
    }
}
