import Foundation
import Synchronization
import Testing
import WebSocketLoop

/// Other threads (the store writer posting acks, the signal thread calling
/// `stop`, the ticker) wake a loop while its own thread ends `run` and
/// destroys the libwebsockets context.
///
/// Before the fix, `post`, `wake`, `stop` and the tickers read the context
/// pointer without a lock and called `lws_cancel_service` on it while `run`
/// was in or past `lws_context_destroy`. These tests then crashed the test
/// runner (SIGSEGV inside libwebsockets, under `post`) in most runs: a
/// use-after-free shows up as a crash, not as a failed expectation. After
/// the fix the context is woken only under the lock that `run` takes to
/// clear it before destroying the context, and every round ends cleanly.
/// (The thread sanitizer is no help here: it cannot see the futex-based
/// `Mutex` of Synchronization on Linux and reports every guarded access.)
@Suite(.serialized)
struct LoopShutdownTests {
    /// A server round lasts about a ticker period (250 ms); a client round a few ms.
    static let serverRounds = 12
    static let clientRounds = 60
    static let posters = 3

    @Test(arguments: EventLoopKind.allCases)
    func serverTakesPostsWhileItStops(eventLoop: EventLoopKind) throws {
        for _ in 0..<Self.serverRounds {
            var options = ServerOptions()
            options.port = 0
            options.eventLoop = eventLoop
            let server = WebSocketServer(options: options)
            let loop = LoopThread { ended in
                do throws(HTTPRefusal) {
                    try server.run { _ in ended.listening.store(true, ordering: .releasing) }
                } catch {
                    ended.refusal.withLock { $0 = error.message }
                }
            }
            #expect(eventually { loop.listening.load(ordering: .acquiring) || loop.hasReturned })
            try #require(loop.refusal.withLock { $0 } == nil)
            let storm = PostStorm(posters: Self.posters, until: loop) { index in
                server.post {}
                server.wake()
                if index == 500 { server.stop() }
            }
            #expect(eventually { loop.hasReturned }, "run did not return after stop")
            #expect(eventually { storm.isOver }, "posting threads did not finish")
        }
    }

    @Test(arguments: EventLoopKind.allCases)
    func clientTakesPostsWhileItStops(eventLoop: EventLoopKind) throws {
        for _ in 0..<Self.clientRounds {
            let client = WebSocketClient(fdLimit: 64, tickMicros: 1000, eventLoop: eventLoop)
            try #require(client.start())
            let loop = LoopThread { ended in
                ended.listening.store(true, ordering: .releasing)
                client.run()
            }
            let storm = PostStorm(posters: Self.posters, until: loop) { index in
                client.post {}
                if index == 500 { client.stop() }
            }
            #expect(eventually { loop.hasReturned }, "run did not return after stop")
            #expect(eventually { storm.isOver }, "posting threads did not finish")
        }
    }
}

/// Runs a loop on its own thread and says when it has returned.
private final class LoopThread: Sendable {
    let listening = Atomic<Bool>(false)
    let refusal = Mutex<String?>(nil)
    private let returned = Atomic<Bool>(false)

    init(_ body: @escaping @Sendable (LoopThread) -> Void) {
        let thread = Thread { [self] in
            body(self)
            returned.store(true, ordering: .releasing)
        }
        thread.name = "loop-under-test"
        thread.start()
    }

    var hasReturned: Bool { returned.load(ordering: .acquiring) }
}

/// Threads that call `post` as fast as they can until the loop has returned,
/// and a few thousand times after, so posts land before, during and after
/// the context's destruction.
private final class PostStorm: Sendable {
    private let finished = Atomic<Int>(0)
    private let posters: Int

    init(posters: Int, until loop: LoopThread, _ post: @escaping @Sendable (Int) -> Void) {
        self.posters = posters
        for poster in 0..<posters {
            let thread = Thread { [self] in
                var index = 0
                var after = 0
                while after < 2000 {
                    // One poster asks for the stop; every poster keeps posting.
                    post(poster == 0 ? index : -1)
                    index += 1
                    if loop.hasReturned { after += 1 }
                }
                finished.add(1, ordering: .releasing)
            }
            thread.name = "poster-\(poster)"
            thread.start()
        }
    }

    var isOver: Bool { finished.load(ordering: .acquiring) == posters }
}
