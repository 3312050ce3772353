import BoardCRDT
import Foundation
import Synchronization
import Testing
@testable import SyncHub
@testable import WebSocketLoop

/// Issue 30, "Confinement checked, not commented": a class whose state is
/// confined to a thread says so with a `ThreadOwner` that the thread running
/// its loop claims, and checks it where the state is used. A failed check
/// traps (debug builds), which no in-process test can watch: these tests
/// show the owners are claimed by the right threads, at the right times,
/// and the exit tests show that a use off the thread really traps.
@Suite(.serialized)
struct ConfinementTests {
    // MARK: ThreadOwner

    @Test func anOwnerIsOwnedOnlyOnTheThreadThatClaimedIt() {
        let owner = ThreadOwner("test")
        #expect(!owner.isOwnedHere, "nobody claimed it yet")
        owner.claim()
        #expect(owner.isOwnedHere)
        #expect(!onAnotherThread { owner.isOwnedHere })
        owner.release()
        #expect(!owner.isOwnedHere, "released: nobody owns it")
    }

    @Test func anotherThreadsClaimTakesTheOwnerOver() {
        let owner = ThreadOwner("test")
        owner.claim()
        #expect(onAnotherThread {
            owner.claim()
            return owner.isOwnedHere
        })
        #expect(!owner.isOwnedHere)
    }

    // MARK: WebSocketServer

    /// Before `run` nobody owns the server (the old check passed then);
    /// inside `run` the service thread does, in `listening`, in posted work
    /// and in the delegate's callbacks; after `run` nobody does again.
    @Test func theServerIsOwnedByTheThreadOfRunWhileItRuns() throws {
        var options = ServerOptions()
        options.port = 0
        let server = WebSocketServer(options: options)
        let delegate = OwnerProbe(server: server)
        server.delegate = delegate
        #expect(!server.isOnServiceThread, "before run")
        let seen = Seen()
        let port = Atomic<Int>(0)
        Thread.detachNewThread {
            try? server.run { bound in
                seen.note("listening", server.isOnServiceThread)
                port.store(bound, ordering: .releasing)
            }
            seen.note("after run", server.isOnServiceThread)
        }
        try #require(eventually { port.load(ordering: .acquiring) > 0 })
        #expect(!server.isOnServiceThread, "the test's thread, while run runs")
        server.post { seen.note("posted", server.isOnServiceThread) }
        #expect(eventually { seen.has("posted") })
        #expect(eventually { delegate.ticks.load(ordering: .acquiring) > 0 }, "tick comes about four times a second")
        server.stop()
        #expect(eventually { seen.has("after run") })
        #expect(seen.value("listening") == true)
        #expect(seen.value("posted") == true)
        #expect(delegate.offThread.load(ordering: .acquiring) == 0, "a delegate call came off the service thread")
        #expect(seen.value("after run") == false, "run released the thread when it returned")
    }

    /// Connections carry their server's owner; a connection's state is the
    /// service thread's.
    @Test func serverAndClientConnectionsCarryTheirLoopsOwner() throws {
        var options = ServerOptions()
        options.port = 0
        let server = WebSocketServer(options: options)
        let delegate = OwnerProbe(server: server)
        server.delegate = delegate
        let port = Atomic<Int>(0)
        Thread.detachNewThread { try? server.run { port.store($0, ordering: .releasing) } }
        try #require(eventually { port.load(ordering: .acquiring) > 0 })
        defer { server.stop() }

        let client = WebSocketClient(fdLimit: 64, tickMicros: 10_000)
        let recorder = ClientProbe(client: client)
        client.delegate = recorder
        try #require(client.start())
        #expect(!client.isOnLoopThread, "start hands the loop over: nobody owns it until run")
        let seen = Seen()
        Thread.detachNewThread {
            client.run()
            seen.note("after run", client.isOnLoopThread)
        }
        let url = try #require(WebSocketURL("ws://127.0.0.1:\(port.load(ordering: .acquiring))/confined"))
        client.post {
            let connection = client.connect(to: url)
            seen.note("connect", client.isOnLoopThread && connection.owner === client.owner)
        }
        #expect(eventually { recorder.connected.load(ordering: .acquiring) })
        #expect(eventually { delegate.opened.withLock { $0 } != nil })
        let opened = try #require(delegate.opened.withLock { $0 })
        #expect(opened.owner === server.owner)
        #expect(!client.isOnLoopThread, "the test's thread, while run runs")
        client.stop()
        #expect(eventually { seen.has("after run") })
        #expect(seen.value("connect") == true)
        #expect(seen.value("after run") == false)
        #expect(recorder.offThread.load(ordering: .acquiring) == 0, "a client delegate call came off the loop's thread")
        #expect(delegate.offThread.load(ordering: .acquiring) == 0, "a server delegate call came off the service thread")
    }

    // MARK: Store threads

    @Test func theStoreWriterOwnsItsStoreOnItsThread() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("confined-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let writer = GroupCommitWriter(store: try BoardStore(directory: directory))
        let seen = Seen()
        writer.onCommitted = { [writer] _ in seen.note("committed", writer.owner.isOwnedHere) }
        writer.start()
        writer.submit([DurableRecord(board: "k", kind: "letters", hubReplica: ReplicaID(1), operations: [], version: 1, replies: [],
                                     author: nil, checkpoint: nil, keyed: nil)])
        #expect(eventually { seen.has("committed") })
        #expect(!writer.owner.isOwnedHere)
        writer.stopAndFlush()
        #expect(seen.value("committed") == true)
    }

    @Test func theCheckpointerOwnsItsDatabaseOnItsThread() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("confined-\(UUID().uuidString)").path
        try Data(String(repeating: "not a database\n", count: 64).utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let checkpointer = try WALCheckpointer(path: path, interval: 0.01)
        let seen = Seen()
        checkpointer.onFailure = { [checkpointer] _ in seen.note("failed", checkpointer.owner.isOwnedHere) }
        checkpointer.start()
        #expect(eventually { seen.has("failed") })
        #expect(!checkpointer.owner.isOwnedHere)
        checkpointer.stop()
        #expect(seen.value("failed") == true)
    }

    // MARK: Traps (exit tests)

    /// The old check passed here: no service thread was known before `run`.
    @Test func aServerUsedBeforeRunTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let server = WebSocketServer(options: ServerOptions())
            _ = server.connections
        }
        #expect(said(result, "WebSocketServer used off the thread that owns it"))
    }

    @Test func aServerUsedOffItsThreadWhileRunningTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var options = ServerOptions()
            options.port = 0
            let server = WebSocketServer(options: options)
            let port = Atomic<Int>(0)
            Thread.detachNewThread { try? server.run { port.store($0, ordering: .releasing) } }
            while port.load(ordering: .acquiring) == 0 { usleep(1_000) }
            _ = server.stats
        }
        #expect(said(result, "WebSocketServer used off the thread that owns it"))
    }

    @Test func aServerUsedAfterRunTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var options = ServerOptions()
            options.port = 0
            let server = WebSocketServer(options: options)
            try? server.run { _ in server.stop() }
            // The thread that ran it, once `run` returned: nobody owns the server now.
            _ = server.connections
        }
        #expect(said(result, "WebSocketServer used off the thread that owns it"))
    }

    @Test func aClientConnectingBeforeItsLoopRunsTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let client = WebSocketClient(fdLimit: 64)
            _ = client.start()
            _ = client.connect(to: WebSocketURL(host: "127.0.0.1", port: 1, path: "/"))
        }
        #expect(said(result, "WebSocketClient used off the thread that owns it"))
    }

    /// The control: the same set-up, used as it should be, exits cleanly.
    @Test func setUpBeforeRunIsAllowed() async {
        await #expect(processExitsWith: .success) {
            var options = ServerOptions()
            options.port = 0
            let server = WebSocketServer(options: options)
            let delegate = OwnerProbe(server: server)
            server.delegate = delegate
            server.post {}
            server.wake()
            let client = WebSocketClient(fdLimit: 64)
            client.maxMessageBytes = 1 << 20
            guard client.start() else { exit(1) }
            client.post {}
            client.stop()
            client.run()
            exit(0)
        }
    }
}

/// Whether the exit test's process wrote `words` to standard error (the
/// trap's message: it trapped on the check, not on something else).
private func said(_ result: ExitTest.Result?, _ words: String) -> Bool {
    guard let result else { return false }
    return String(decoding: result.standardErrorContent, as: UTF8.self).contains(words)
}

/// Runs `body` on a new thread and returns its answer.
private func onAnotherThread(_ body: @escaping @Sendable () -> Bool) -> Bool {
    let answer = Mutex<Bool?>(nil)
    Thread.detachNewThread { answer.withLock { $0 = body() } }
    _ = eventually { answer.withLock { $0 } != nil }
    return answer.withLock { $0 } ?? false
}

/// Named answers given on other threads.
private final class Seen: Sendable {
    private let answers = Mutex<[String: Bool]>([:])
    func note(_ name: String, _ value: Bool) { answers.withLock { $0[name] = value } }
    func has(_ name: String) -> Bool { answers.withLock { $0[name] != nil } }
    func value(_ name: String) -> Bool? { answers.withLock { $0[name] } }
}

/// A server delegate that counts the calls that came off the service thread.
private final class OwnerProbe: ServerDelegate, @unchecked Sendable {
    // Sendable: Mutexes and atomics; `server` is a `let` of a Sendable type.
    let server: WebSocketServer
    let offThread = Atomic<Int>(0)
    let ticks = Atomic<Int>(0)
    let opened = Mutex<ServerConnection?>(nil)
    init(server: WebSocketServer) { self.server = server }
    private func on() { if !server.isOnServiceThread { offThread.add(1, ordering: .releasing) } }
    func admit(upgrade request: RequestHead) -> Result<Admission, HTTPRefusal> {
        on()
        return .success(Admission(route: .board("confined")))
    }
    func opened(_ connection: ServerConnection) {
        on()
        // Its state is the service thread's: read here, it passes the check.
        _ = connection.heldState + UInt64(connection.queuedReplies)
        opened.withLock { $0 = connection }
    }
    func received(_ connection: ServerConnection, message: UnsafeRawBufferPointer, isText: Bool) { on() }
    func closed(_ connection: ServerConnection) { on() }
    func respond(to request: RequestHead, body: [UInt8], exchange: UInt64) -> HTTPResponse? {
        on()
        return .text(404, "no")
    }
    var maxRequestBodyBytes: Int { 0 }
    func admitBody(of request: RequestHead) -> HTTPResponse? { .text(405, "no") }
    func tick(nowNanos: UInt64) {
        on()
        _ = server.connections.count + Int(server.stats.writes)
        ticks.add(1, ordering: .releasing)
    }
    func serviceLoopDidRun() { on() }
}

/// A client delegate that counts the calls that came off the loop's thread.
private final class ClientProbe: ClientDelegate, @unchecked Sendable {
    // Sendable: atomics; `client` is a `let` of a Sendable type.
    let client: WebSocketClient
    let offThread = Atomic<Int>(0)
    let connected = Atomic<Bool>(false)
    init(client: WebSocketClient) { self.client = client }
    private func on() { if !client.isOnLoopThread { offThread.add(1, ordering: .releasing) } }
    func connected(_ connection: ClientConnection) {
        on()
        _ = connection.isOpen
        connected.store(true, ordering: .releasing)
    }
    func received(_ connection: ClientConnection, message: UnsafeRawBufferPointer, isText: Bool) { on() }
    func disconnected(_ connection: ClientConnection, reason: String) { on() }
    func serviceLoopDidRun() { on() }
}
