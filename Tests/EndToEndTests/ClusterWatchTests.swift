import Foundation
import Testing

/// `syncclient watch` on a cluster (docs/CLUSTER.md R2, R7): two hubs share
/// one port (--reuse-port) on one Redis; the hub the watch is on is killed
/// with -9, and the watch goes on through the other with its picks.
@Suite(.serialized) struct ClusterWatchTests {
    @Test func watchSurvivesTheKillOfItsHubWhenTwoHubsShareThePort() throws {
        let redis = try RedisProcess()
        let port = freePort()
        let first = try HubProcess(port: port, arguments: ["--reuse-port", "--hub-id", "first"], redis: redis.url)
        let second = try HubProcess(port: port, arguments: ["--reuse-port", "--hub-id", "second"], redis: redis.url)
        let url = "ws://127.0.0.1:\(port)/boards/shared"
        let watch = try watchInTmux(url)
        watch.waitFor("live") { $0.isLive }
        watch.type("A")
        watch.type("B")
        var seen: String?
        #expect(eventually(timeout: 30) { seen = HubBoard(url)?.order; return seen == "AB" }, "hub shows \(seen ?? "nil")")
        // Which hub holds the watch is the kernel's choice: kill whichever
        // has a client on the board now (the watch), by its metrics.
        let holder = [first, second].first { Self.connections(on: $0) > 0 }
        let victim = try #require(holder, "neither hub holds the watch's connection")
        let survivor = victim === first ? second : first
        _ = victim.stop(signal: SIGKILL)
        watch.type("C")
        watch.waitFor("C shown") { $0.topOrder == "ABC" }
        // Its connection moved to the surviving hub (the kernel hands the shared port to it alone now).
        #expect(eventually(timeout: 40) { Self.connections(on: survivor) > 0 }, "the watch is not on the surviving hub")
        watch.waitFor("live again on the other hub", timeout: 40) { $0.isLive }
        #expect(eventually(timeout: 30) { seen = HubBoard(url)?.order; return seen == "ABC" }, "hub shows \(seen ?? "nil")")
        watch.waitFor("still ABC, acknowledged") { $0.topOrder == "ABC" && $0.isLive }
        #expect(survivor.process.isRunning)
        _ = survivor.stop()
    }

    /// Established connections to the shared port held by `hub`'s process
    /// (`ss` names the owning pid; HTTP on the shared port would reach
    /// whichever hub the kernel picks).
    private static func connections(on hub: HubProcess) -> Int {
        let ss = Process()
        ss.executableURL = URL(fileURLWithPath: "/usr/bin/ss")
        ss.arguments = ["-Htnp", "state", "established", "( sport = :\(hub.port) )"]
        let pipe = Pipe()
        ss.standardOutput = pipe
        guard (try? ss.run()) != nil else { return 0 }
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        ss.waitUntilExit()
        return text.split(separator: "\n").filter { $0.contains("pid=\(hub.process.processIdentifier),") }.count
    }
}
