import Foundation
import Testing

/// `syncclient watch` as the operator's console sees it (docs/ADMIN.md):
/// listed as a `watch` (O4), and put out by a disconnect (O5, 4409), which
/// its status line says. Real hub, real watch in tmux, the console through
/// `syncclient admin` (an open hub answers its console on loopback).
@Suite(.serialized) struct AdminWatchTests {
    private func connections(_ hub: HubProcess, _ board: String) -> [[String: Any]] {
        guard let result = try? syncclient(["admin", "board", "http://127.0.0.1:\(hub.port)", "--json", board]), result.status == 0,
              let object = jsonObject(result.output) else { return [] }
        return object["connections"] as? [[String: Any]] ?? []
    }

    @Test func theConsoleListsAWatchAsAWatchAndADisconnectPutsItOutAndSaysSo() throws {
        let hub = try HubProcess()
        let watch = try watchInTmux(hub.board("wall"), extra: ["--name", "wall"])
        watch.waitFor("live") { $0.isLive }
        var listed: [[String: Any]] = []
        #expect(eventually(timeout: 20) {
            listed = connections(hub, "boards/wall")
            return listed.count == 1
        }, "\(listed)")
        #expect(listed.first?["client"] as? String == "watch", "\(listed)")
        let id = try #require(listed.first?["id"] as? String)
        let result = try syncclient(["admin", "disconnect", "http://127.0.0.1:\(hub.port)", "--connection", id])
        #expect(result.status == 0, "\(result.errors)")
        watch.waitFor("the status line says an operator put it out") { $0.statusText?.contains("Put out by an operator") == true }
        // It stays away (30 s; an ordinary loss comes back within 0.25 s): checked for 3 s.
        let until = Date().addingTimeInterval(3)
        while Date() < until {
            #expect(connections(hub, "boards/wall").isEmpty, "it came back before its 30 s")
            Thread.sleep(forTimeInterval: 0.25)
        }
    }
}
