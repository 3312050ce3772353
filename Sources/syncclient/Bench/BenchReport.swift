import Foundation
import Histogram

/// The figures of one bench run (printed, and with `--json` as one object).
struct BenchReport: Codable {
    struct Percentiles: Codable {
        var count: UInt64
        var p50: Double
        var p90: Double
        var p99: Double
        var p999: Double
        var max: Double

        init(_ histogram: Histogram<UInt64>) {
            func ms(_ nanos: UInt64) -> Double { (Double(nanos) / 1e6 * 1000).rounded() / 1000 }
            count = histogram.totalCount
            p50 = ms(histogram.valueAtPercentile(50))
            p90 = ms(histogram.valueAtPercentile(90))
            p99 = ms(histogram.valueAtPercentile(99))
            p999 = ms(histogram.valueAtPercentile(99.9))
            max = ms(histogram.maxRecorded)
        }
    }

    var boards: Int
    var clientsPerBoard: Int
    var sendersPerBoard: Int
    var mode: String
    var targetRate: Double
    var seconds: Double
    var connected: Int
    var connectFailures: Int
    var connectMillis: Percentiles
    var operationsAcknowledged: Int
    var operationsRejected: Int
    /// `error` frames from the hub (rate_limited means its --rate is below the load).
    var errors: Int
    var disconnects: Int
    var acknowledgedPerSecond: Double
    /// Board changes (distinct versions) a second, summed over boards.
    var changesPerSecond: Double
    var statesDeliveredPerSecond: Double
    var framesDeliveredPerSecond: Double
    /// Mean size of a frame read in the window, in bytes (payload, without
    /// the WebSocket header): what a raw run's `--raw-bytes` matches.
    var meanFrameBytes: Double?
    /// How the clients read their frames (`--reader`); nil in reports older than the option.
    var reader: BenchReader?
    /// Send to first sight, one sample per (operation, client of its board).
    var visibilityMillis: Percentiles
    /// Send to the moment the last client of its board saw it, one sample per operation.
    var visibilityAtEveryClientMillis: Percentiles
    /// Send to the sender's ack: merge plus, with a store, the durable commit.
    var ackMillis: Percentiles
    var unseen: Int
    var converged: Bool
    var divergentBoards: [String]
    var hubRSSMiB: Double?
    var hubRSSDeltaMiB: Double?
    var hubCPUPercent: Double?
    var benchCPUPercent: Double?
    // Kinds whose clients send intents only (absent for letter boards, whose report is unchanged):
    /// The kind's name (`--kind`).
    var kind: String?
    /// Answers (acks and refusals) to intents sent in the window, a second.
    var answersPerSecond: Double?
    var refusalsPerSecond: Double?
    /// Refusals of intents sent in the window, by code (`taken`, `deck_empty`, ...).
    var refusals: [String: Int]?
    /// Intents sent in the window, by type (`choose`, `deal`, `make`, ...).
    var intentsSent: [String: Int]?
    /// `--kind set` only: sets taken and mismatches settled in the window,
    /// from the players' own scores and misses in their state frames.
    var matches: Int?
    var mismatches: Int?
    /// `--kind stock` only: the count invariant, juices made, conservation per bar.
    var stock: StockSummary?
    /// `--kind shop` only: stock never below zero, orders, conservation per shop.
    var shop: ShopSummary?
    /// `--kind todo` only: list sizes and notices.
    var todo: TodoSummary?
    // Several hubs only (absent with one hub, whose report is unchanged), R12:
    /// The hubs in the order given; each board's client slot i is on hub i mod their count.
    var hubs: [String]?
    /// `visibilityMillis` at the clients on the hub the change was sent to.
    var visibilitySameHubMillis: Percentiles?
    /// `visibilityMillis` at the clients on the other hubs.
    var visibilityCrossHubMillis: Percentiles?
    /// `--histogram` only: `visibilityMillis`'s samples as [nanoseconds, count]
    /// pairs, one per recorded bucket (the bucket's highest value), so that
    /// several runs pool into one distribution.
    var visibilityHistogram: [[UInt64]]?
    /// How many `--hub-pid` processes `hubRSSMiB` and `hubCPUPercent` sum (only when more than one).
    var hubProcesses: Int?

    func text() -> String {
        func p(_ x: Percentiles) -> String {
            "p50 \(x.p50) / p90 \(x.p90) / p99 \(x.p99) / p99.9 \(x.p999) / max \(x.max) ms (n=\(x.count))"
        }
        if let text = kind.flatMap(BenchKind.init(named:)).flatMap({ $0.driver.text(self, p) }) { return text }
        var lines = [
            "boards \(boards) x clients \(clientsPerBoard) (\(sendersPerBoard) sending), " +
            "\(mode)\(targetRate > 0 ? " \(Int(targetRate)) ops/s" : ""), \(String(format: "%.1f", seconds)) s measured",
            "connected      \(connected) (failures \(connectFailures)); connect \(p(connectMillis))",
            "acknowledged   \(operationsAcknowledged) ops (\(Int(acknowledgedPerSecond))/s), rejected \(operationsRejected), " +
            "board changes \(Int(changesPerSecond))/s",
            "errors         \(errors) error frames, \(disconnects) connections lost during the run",
            "delivered      \(Int(statesDeliveredPerSecond)) states/s, \(Int(framesDeliveredPerSecond)) " +
            "frames/s\(meanFrameBytes.map { " of \(Int($0.rounded())) bytes on average" } ?? "")",
            "visibility     \(p(visibilityMillis))",
            "at every client \(p(visibilityAtEveryClientMillis))",
            "ack latency    \(p(ackMillis))",
        ]
        lines.insert(contentsOf: hubSplitLines(p), at: lines.count - 1)
        if let usage = hubUsageLine() { lines.append(usage) }
        if let benchCPUPercent { lines.append("bench itself   CPU \(Int(benchCPUPercent))%") }
        lines.append(converged ? "converged      yes: every client of every board shows the same order"
                               : "converged      NO: \(divergentBoards.joined(separator: ", "))")
        if unseen > 0 { lines.append("unseen         \(unseen) (operation, client) pairs never saw the change") }
        return lines.joined(separator: "\n")
    }
}

extension BenchReport {
    /// Counts by name for a summary line, `choose 12, deal 3`, or "none".
    static func counts(_ values: [String: Int]?) -> String {
        let text = (values ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return text.isEmpty ? "none" : text
    }

    /// Answers and refusals of a kind whose clients send intents (every kind but the letters), a second.
    mutating func countAnswers<Driver>(_ workers: [BenchWorker<Driver>], plan: BenchPlan, seconds: Double, sent: [[String: Int]]) {
        let refused = workers.reduce(0) { $0 + $1.rejectedInWindow }
        kind = plan.kind.name
        answersPerSecond = Double(operationsAcknowledged + refused) / seconds
        refusalsPerSecond = Double(refused) / seconds
        refusals = workers.reduce(into: [:]) { all, worker in all.merge(worker.refusalCodes, uniquingKeysWith: +) }
        intentsSent = sent.reduce(into: [:]) { all, counts in all.merge(counts, uniquingKeysWith: +) }
    }

    /// The first lines of an intent-sending kind's summary: who, answers (`answered`: the kind's own rate), delivery, latencies.
    func intentLines(_ p: (Percentiles) -> String, boardsAre: String, clientsAre: String, answered: String,
                     extra: String = "") -> [String] {
        return [
            "\(boardsAre) \(boards) x \(clientsAre) \(clientsPerBoard) (\(sendersPerBoard) sending), " +
            "\(mode)\(targetRate > 0 ? " \(Int(targetRate)) intents/s" : ""), \(String(format: "%.1f", seconds)) s measured",
            "connected      \(connected) (failures \(connectFailures)); connect \(p(connectMillis))",
            "answers        \(Int(answersPerSecond ?? 0))/s: acknowledged \(operationsAcknowledged) (\(Int(acknowledgedPerSecond))/s; " +
            "\(answered)), refused \(Int(refusalsPerSecond ?? 0))/s\(extra)",
            "sent           \(Self.counts(intentsSent))",
            "refusals       \(Self.counts(refusals))",
            "errors         \(errors) error frames, \(disconnects) connections lost during the run",
            "delivered      \(Int(statesDeliveredPerSecond)) states/s, \(Int(framesDeliveredPerSecond)) frames/s",
            "visibility     \(p(visibilityMillis))",
            "at every client \(p(visibilityAtEveryClientMillis))",
            "ack latency    \(p(ackMillis))",
        ]
    }
}
