import Histogram

/// Visibility split by where the receiver is (R12): on the hub the change
/// was sent to ("same hub") or on another hub of the cluster ("cross hub"),
/// one sample per (change, client of its board) as for `visibility`. Only
/// kept when the bench was given several hubs.
struct HubSplit {
    private(set) var sameHub = Histogram<UInt64>(highestTrackableValue: 120_000_000_000)
    private(set) var crossHub = Histogram<UInt64>(highestTrackableValue: 120_000_000_000)

    /// One sample: `latency` nanoseconds from the send (to hub `sender`)
    /// to the state frame at a client of hub `receiver`.
    mutating func record(_ latency: UInt64, sender: Int, receiver: Int) {
        if sender == receiver {
            _ = sameHub.record(max(1, latency))
        } else {
            _ = crossHub.record(max(1, latency))
        }
    }

    var sameHubMillis: BenchReport.Percentiles { .init(sameHub) }
    var crossHubMillis: BenchReport.Percentiles { .init(crossHub) }
}

extension BenchReport {
    /// The lines a run against several hubs adds after "at every client":
    /// the hubs, then visibility at clients of the sender's hub and of the
    /// other hubs (p99 of the latter against the former). None with one hub.
    func hubSplitLines(_ p: (Percentiles) -> String) -> [String] {
        guard let hubs, let same = visibilitySameHubMillis, let cross = visibilityCrossHubMillis else { return [] }
        let ratio = same.p99 > 0 && cross.count > 0 ? String(format: "; p99 %.2fx same hub", cross.p99 / same.p99) : ""
        return [
            "hubs           \(hubs.count), each board's clients round-robin: \(hubs.joined(separator: ", "))",
            "same hub       \(p(same))",
            "cross hub      \(p(cross))\(ratio)",
        ]
    }

    /// The hub's (or, with several `--hub-pid`, the hubs' summed) RSS and CPU, when sampled.
    func hubUsageLine() -> String? {
        guard let hubRSSMiB, let hubCPUPercent else { return nil }
        let summed = (hubProcesses ?? 1) > 1 ? " (sum of \(hubProcesses ?? 1) processes)" : ""
        return "hub            RSS \(String(format: "%.1f", hubRSSMiB)) MiB (+\(String(format: "%.1f", hubRSSDeltaMiB ?? 0))), " +
               "CPU \(Int(hubCPUPercent))%\(summed)"
    }
}
