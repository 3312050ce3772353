import Foundation
import Testing
import WebSocketLoop
@testable import syncclient

/// `syncclient bench` with several hubs (R12): how clients are spread over
/// them, and the same-hub / cross-hub split of visibility in the summary.
struct BenchSpreadTests {
    private func plan(hubs: [String], clients: Int) throws -> BenchPlan {
        let urls = try hubs.map { try #require(WebSocketURL($0)) }
        let first = try #require(urls.first)
        return BenchPlan(hub: first, moreHubs: Array(urls.dropFirst()), boardNames: ["bench-0", "bench-1"],
                         clientsPerBoard: clients, sendersPerBoard: clients, threads: 1, sources: 1,
                         connectionsPerSecond: 1000, rate: 10, inFlightPerBoard: 1, warmupNanos: 0, durationNanos: 1)
    }

    @Test func eachBoardsClientsGoRoundRobinOverTheHubs() throws {
        let two = try plan(hubs: ["ws://127.0.0.1:9001", "ws://127.0.0.1:9002"], clients: 5)
        #expect((0..<5).map(two.hubIndex(slot:)) == [0, 1, 0, 1, 0])
        #expect(two.url(board: 1, hub: 1) == WebSocketURL("ws://127.0.0.1:9002/boards/bench-1"))
        #expect(two.url(board: 0, hub: 0) == WebSocketURL("ws://127.0.0.1:9001/boards/bench-0"))
        // Every worker's peers, whichever thread: the board's slot decides the hub.
        let worker = BenchWorker<LettersBench>(index: 0, plan: two)
        #expect(worker.peers.filter { $0.board == 1 }.map(\.hub) == [0, 1, 0, 1, 0])
    }

    @Test func oneHubIsAsBefore() throws {
        let one = try plan(hubs: ["ws://127.0.0.1:9001"], clients: 3)
        #expect(one.hubCount == 1 && (0..<3).allSatisfy { one.hubIndex(slot: $0) == 0 })
        #expect(one.url(board: 1) == WebSocketURL("ws://127.0.0.1:9001/boards/bench-1"))
    }

    @Test func samplesSplitByTheReceiversHub() {
        var split = HubSplit()
        split.record(2_000_000, sender: 0, receiver: 0)
        split.record(4_000_000, sender: 1, receiver: 1)
        split.record(9_000_000, sender: 0, receiver: 1)
        #expect(split.sameHubMillis.count == 2 && split.crossHubMillis.count == 1)
        #expect(abs(split.crossHubMillis.max - 9) < 0.1 && abs(split.sameHubMillis.max - 4) < 0.1)
    }

    @Test func theSummaryAddsTheSplitLinesOnlyWithSeveralHubs() throws {
        let percentiles: [String: Any] = ["count": 10, "p50": 1.0, "p90": 2.0, "p99": 3.0, "p999": 4.0, "max": 5.0]
        var fields: [String: Any] = [
            "boards": 1, "clientsPerBoard": 4, "sendersPerBoard": 4, "mode": "paced", "targetRate": 60.0, "seconds": 2.0,
            "connected": 4, "connectFailures": 0, "connectMillis": percentiles, "operationsAcknowledged": 10,
            "operationsRejected": 0, "errors": 0, "disconnects": 0, "acknowledgedPerSecond": 5.0, "changesPerSecond": 5.0,
            "statesDeliveredPerSecond": 20.0, "framesDeliveredPerSecond": 25.0, "visibilityMillis": percentiles,
            "visibilityAtEveryClientMillis": percentiles, "ackMillis": percentiles, "unseen": 0, "converged": true,
            "divergentBoards": [String](),
        ]
        let decoder = JSONDecoder()
        let single = try decoder.decode(BenchReport.self, from: JSONSerialization.data(withJSONObject: fields))
        #expect(!single.text().contains("same hub") && !single.text().contains("cross hub"))
        fields["hubs"] = ["ws://127.0.0.1:9001", "ws://127.0.0.1:9002"]
        fields["visibilitySameHubMillis"] = percentiles
        var cross = percentiles
        cross["p99"] = 6.0
        fields["visibilityCrossHubMillis"] = cross
        let several = try decoder.decode(BenchReport.self, from: JSONSerialization.data(withJSONObject: fields))
        let lines = several.text().split(separator: "\n").map(String.init)
        let every = try #require(lines.firstIndex { $0.hasPrefix("at every client") })
        #expect(lines[every + 1].hasPrefix("hubs           2, each board's clients round-robin: ws://127.0.0.1:9001, ws://127.0.0.1:9002"))
        #expect(lines[every + 2].hasPrefix("same hub       p50 1.0 / p90 2.0 / p99 3.0"))
        #expect(lines[every + 3].hasPrefix("cross hub      p50 1.0 / p90 2.0 / p99 6.0")
            && lines[every + 3].hasSuffix("; p99 2.00x same hub"))
        #expect(lines[every + 4].hasPrefix("ack latency"))
    }
}
