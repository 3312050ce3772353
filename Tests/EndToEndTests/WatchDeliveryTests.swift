import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `syncclient watch` as a replica client under loss: what the rate limiter
/// drops and what a killed hub never stored are sent again, so every pick
/// made on the screen reaches the hub (issue 9, "an ack is a promise").
@Suite(.serialized) struct WatchDeliveryTests {
    private func expectHub(_ url: String, order: String, sourceLocation: SourceLocation = #_sourceLocation) {
        var last: String?
        let ok = eventually(timeout: 30) {
            last = HubBoard(url)?.order
            return last == order
        }
        #expect(ok, "hub order \(last ?? "nil"), expected \(order)", sourceLocation: sourceLocation)
    }

    /// Six picks typed at once into a hub that takes two frames a second:
    /// the dropped frames are answered with `rate_limited` and what the hub
    /// holds, and watch sends them again until all six are in. (Before, the
    /// next ack made the client forget the dropped operations.)
    @Test func watchResendsWhatTheRateLimiterDropped() throws {
        let hub = try HubProcess(arguments: ["--rate", "2", "--burst", "2",
                                             "--bad-frames-per-second", "100", "--bad-frame-burst", "1000"])
        let url = hub.board("slow")
        let watch = try watchInTmux(url)
        watch.waitFor("live") { $0.isLive }
        for letter in "ABCDEF" { watch.type(String(letter)) }
        watch.waitFor("six picks shown") { $0.topOrder == "ABCDEF" }
        expectHub(url, order: "ABCDEF")
        watch.waitFor("all acknowledged, still ABCDEF") { $0.topOrder == "ABCDEF" && $0.isLive }
        // The limiter really dropped frames on the way.
        let metrics = (try? String(contentsOf: URL(string: "http://127.0.0.1:\(hub.port)/metrics")!, encoding: .utf8)) ?? ""
        let dropped = metrics.split(separator: "\n").first { $0.hasPrefix("synchub_rate_limited_total") }
            .flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
        #expect(dropped > 0, "no frame was dropped: \(metrics.prefix(200))")
    }

    /// Picks made while the hub is down (killed with -9) are queued, sent
    /// after the restart, and land next to those the hub had acknowledged.
    @Test func watchPicksSurviveAHubKilledWithSignal9() throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("watch-kill-\(UUID().uuidString)").path
        var hub = try HubProcess(dataDirectory: data)
        let port = hub.port
        let url = hub.board("kill")
        let watch = try watchInTmux(url)
        watch.waitFor("live") { $0.isLive }
        watch.type("A")
        watch.type("B")
        expectHub(url, order: "AB")
        _ = hub.stop(signal: SIGKILL)
        watch.waitFor("reconnecting") { !$0.isLive }
        watch.type("C")
        watch.waitFor("C shown while away") { $0.topOrder == "ABC" }
        hub = try HubProcess(dataDirectory: data, port: port)
        watch.waitFor("live again", timeout: 40) { $0.isLive }
        expectHub(url, order: "ABC")
        _ = hub.stop()
    }
}
