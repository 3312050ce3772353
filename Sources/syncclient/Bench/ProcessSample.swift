import Foundation
import Glibc

/// Resident memory and CPU time of a process, read from /proc.
struct ProcessSample: Sendable {
    var residentKiB: Int
    /// User + system CPU seconds so far.
    var cpuSeconds: Double
    var at: UInt64

    static func read(pid: Int32) -> ProcessSample? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
        let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
            .flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") } ?? 0
        // Fields after the command name (which may hold spaces) in ")".
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return ProcessSample(residentKiB: rss, cpuSeconds: (user + system) / ticks, at: BenchClock.now())
    }

    static func own() -> ProcessSample? { read(pid: getpid()) }

    /// Several processes (the hubs of a cluster) as one: RSS and CPU time
    /// summed. Nil with no pid, or when any of them cannot be read (so a
    /// before/after difference always covers the same processes).
    static func read(pids: [Int32]) -> ProcessSample? {
        guard !pids.isEmpty else { return nil }
        var total = ProcessSample(residentKiB: 0, cpuSeconds: 0, at: 0)
        for pid in pids {
            guard let sample = read(pid: pid) else { return nil }
            total.residentKiB += sample.residentKiB
            total.cpuSeconds += sample.cpuSeconds
            total.at = sample.at
        }
        return total
    }

    /// Percent of one core used between `self` and `later`.
    func cpuPercent(until later: ProcessSample) -> Double {
        let wall = Double(later.at - at) / 1e9
        return wall > 0 ? (later.cpuSeconds - cpuSeconds) / wall * 100 : 0
    }
}

enum BenchClock {
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
