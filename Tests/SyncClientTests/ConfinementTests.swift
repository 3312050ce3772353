import Foundation
import Synchronization
import Testing
import WebSocketLoop
@testable import syncclient

/// Issue 30 on the client's side: the delegates of a client loop (one-shot
/// requests, links, watch sessions, bench workers) check the loop's owner,
/// `WebSocketClient.owner`, which the thread running the loop holds; the
/// terminal is its making thread's.
@Suite(.serialized)
struct ConfinementTests {
    /// A one-shot request to a port nobody listens on: its callbacks run on
    /// the loop's thread, pass their checks, and it ends with the failure.
    @Test func aRequestsCallbacksPassTheirChecksOnTheLoopsThread() throws {
        let url = try #require(WebSocketURL("ws://127.0.0.1:1/boards/nobody"))
        let outcome = ThinRequest(url: url, intentMembers: nil, timeoutSeconds: 5, access: HubAccess()).run()
        guard case let .failed(reason) = outcome else {
            Issue.record("expected a failure, got \(outcome)")
            return
        }
        #expect(reason.contains("cannot reach"))
    }

    @Test func theTerminalIsItsMakingThreads() {
        let terminal = Terminal()
        #expect(terminal.owner.isOwnedHere)
        let elsewhere = Mutex<Bool?>(nil)
        Thread.detachNewThread { elsewhere.withLock { $0 = terminal.owner.isOwnedHere } }
        let deadline = Date().addingTimeInterval(10)
        while elsewhere.withLock({ $0 }) == nil, Date() < deadline { usleep(1_000) }
        #expect(elsewhere.withLock { $0 } == false)
    }

    /// A delegate's callback from a thread that is not its loop's traps.
    @Test func aRequestCalledOffItsLoopTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let url = WebSocketURL(host: "127.0.0.1", port: 1, path: "/boards/nobody")
            ThinRequest(url: url, intentMembers: nil, timeoutSeconds: 5, access: HubAccess()).serviceLoopDidRun()
        }
        let said = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(said.contains("WebSocketClient used off the thread that owns it"))
    }
}
