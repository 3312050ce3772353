import Foundation
import Synchronization
import Testing
import WebSocketLoop

/// Replies held while a turn's work runs (`WebSocketServer.holdingWrites`),
/// through a real server and client on loopback: they leave before a close
/// made in the same turn, and before the state that follows them.
@Suite(.serialized)
struct HeldRepliesTests {
    @Test func aReplyHeldThisTurnLeavesBeforeACloseInTheSameTurn() throws {
        let pair = try LoopbackPair()
        defer { pair.stop() }
        let connection = try #require(pair.serverConnection())
        pair.server.post {
            pair.server.send(OutgoingFrame(text: "last words"), to: connection)
            pair.server.close(connection, code: 4000, reason: "bye")
        }
        #expect(eventually { pair.client.closedReason.withLock { $0 } != nil })
        #expect(pair.client.texts.withLock { $0 } == ["last words"])
    }

    @Test func repliesHeldThisTurnGoBeforeTheStateThatFollowsThem() throws {
        let pair = try LoopbackPair()
        defer { pair.stop() }
        let connection = try #require(pair.serverConnection())
        // The last frame written is a reply, so the lanes alone would put the state first.
        pair.server.post { pair.server.send(OutgoingFrame(text: "r0"), to: connection) }
        #expect(eventually { pair.client.texts.withLock { $0 } == ["r0"] })
        pair.server.post {
            pair.server.send(OutgoingFrame(text: "a1"), to: connection)
            pair.server.send(OutgoingFrame(text: "a2"), to: connection)
            pair.server.sendLatest(OutgoingFrame(text: "s"), to: connection)
        }
        #expect(eventually { pair.client.texts.withLock { $0 }.count == 4 })
        #expect(pair.client.texts.withLock { $0 } == ["r0", "a1", "a2", "s"])
        let writes = Mutex<UInt64?>(nil)
        pair.server.post { writes.withLock { $0 = pair.server.stats.writes } }
        #expect(eventually { writes.withLock { $0 } != nil })
        #expect(writes.withLock { $0 } == 2, "the acks and the state leave in one write")
    }
}

/// A server on a loopback port with one client connected to it, each on its thread.
private final class LoopbackPair: @unchecked Sendable {
    // Sendable: the delegates' state is behind Mutexes; the loops are thread-safe through `post`.
    let server: WebSocketServer
    let hub = OneBoardDelegate()
    let client = RecordingClient()
    let loop: WebSocketClient

    init() throws {
        var options = ServerOptions()
        options.port = 0
        server = WebSocketServer(options: options)
        server.delegate = hub
        let port = Atomic<Int>(0)
        Thread.detachNewThread { [server] in
            try? server.run { port.store($0, ordering: .releasing) }
        }
        try #require(eventually { port.load(ordering: .acquiring) > 0 })
        loop = WebSocketClient(fdLimit: 64, tickMicros: 10_000)
        loop.delegate = client
        try #require(loop.start())
        Thread.detachNewThread { [loop] in loop.run() }
        let url = try #require(WebSocketURL("ws://127.0.0.1:\(port.load(ordering: .acquiring))/held"))
        loop.post { [loop] in _ = loop.connect(to: url) }
    }

    func serverConnection() -> ServerConnection? {
        _ = eventually { hub.opened.withLock { $0 } != nil }
        return hub.opened.withLock { $0 }
    }

    func stop() {
        loop.stop()
        server.stop()
    }
}

private final class OneBoardDelegate: ServerDelegate, @unchecked Sendable {
    // Sendable: `opened` is a Mutex; the rest is called on the server's thread.
    let opened = Mutex<ServerConnection?>(nil)
    func admit(upgrade request: RequestHead) -> Result<Admission, HTTPRefusal> { .success(Admission(route: .board("held"))) }
    func opened(_ connection: ServerConnection) { opened.withLock { $0 = connection } }
    func received(_ connection: ServerConnection, message: UnsafeRawBufferPointer, isText: Bool) {}
    func closed(_ connection: ServerConnection) {}
    func respond(to request: RequestHead, body: [UInt8], exchange: UInt64) -> HTTPResponse? { .text(404, "no") }
    var maxRequestBodyBytes: Int { 0 }
    func admitBody(of request: RequestHead) -> HTTPResponse? { .text(405, "no") }
    func tick(nowNanos: UInt64) {}
    func serviceLoopDidRun() {}
}

private final class RecordingClient: ClientDelegate, @unchecked Sendable {
    // Sendable: what it records is behind Mutexes.
    let texts = Mutex<[String]>([])
    let closedReason = Mutex<String?>(nil)
    func connected(_ connection: ClientConnection) {}
    func received(_ connection: ClientConnection, message: UnsafeRawBufferPointer, isText: Bool) {
        let text = String(decoding: message, as: UTF8.self)
        texts.withLock { $0.append(text) }
    }
    func disconnected(_ connection: ClientConnection, reason: String) { closedReason.withLock { $0 = reason } }
    func serviceLoopDidRun() {}
}
