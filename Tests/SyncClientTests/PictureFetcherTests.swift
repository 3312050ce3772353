import Foundation
import Synchronization
import Testing
import WebSocketLoop
@testable import syncclient

/// `PictureFetcher` against a real HTTP server on a loopback socket (made
/// here, answering each path as the test says): statuses and retries, the
/// size limit applied while the body arrives, names that would leave their
/// path segment, and TLS options URLSession cannot honour.
@Suite(.serialized) struct PictureFetcherTests {
    /// The answer, and how many bytes the server had written when it came.
    private func fetch(_ name: String, from server: CannedHTTPServer, tls: ClientTLS? = nil) throws -> (PictureState, Bool) {
        try fetchCounting(name, from: server, tls: tls).answer
    }

    private func fetchCounting(_ name: String, from server: CannedHTTPServer,
                               tls: ClientTLS? = nil) throws -> (answer: (PictureState, Bool), written: Int) {
        let url = try #require(WebSocketURL("ws://127.0.0.1:\(server.port)/shop/demo"))
        let fetcher = PictureFetcher(url: url, tls: tls)
        defer { fetcher.close() }
        let result = Mutex<(PictureState, Bool)?>(nil)
        let done = DispatchSemaphore(value: 0)
        let written = Mutex(0)
        fetcher.fetch(name) { state, retry in
            written.withLock { $0 = server.bytesWritten }
            result.withLock { $0 = (state, retry) }
            done.signal()
        }
        // Never the fetch's own 30 s here: each answer below is judged from the head or the first megabyte.
        #expect(done.wait(timeout: .now() + 20) == .success, "an answer, not a transfer that goes on")
        return (try #require(result.withLock { $0 }), written.withLock { $0 })
    }

    @Test func aPictureIsFetchedAndDecoded() throws {
        let server = try CannedHTTPServer { path in
            path == "/shop/demo/images/px.png" ? .answer(200, type: "image/png",
                                                         body: PictureTests.png) : .answer(404, type: "text/plain", body: [])
        }
        defer { server.stop() }
        let (state, retry) = try fetch("px.png", from: server)
        guard case let .ready(picture) = state else { Issue.record("\(state)"); return }
        #expect(picture.width == 4 && picture.height == 2 && !retry)
    }

    @Test func aMissingPictureIsNotAskedForAgainAFailingHubIs() throws {
        let server = try CannedHTTPServer { path in
            path.hasSuffix("gone.png") ? .answer(404, type: "text/plain",
                                                 body: Array("no".utf8)) : .answer(503, type: "text/plain", body: [])
        }
        defer { server.stop() }
        let missing = try fetch("gone.png", from: server)
        #expect(missing.0 == .failed("gone.png: HTTP 404") && !missing.1)
        let failing = try fetch("busy.png", from: server)
        #expect(failing.0 == .failed("busy.png: HTTP 503") && failing.1)
    }

    @Test func aRedirectIsNotFollowed() throws {
        let server = try CannedHTTPServer { path in
            path.hasSuffix("moved.png") ? .answer(302, type: "text/plain",
                                                  body: []) : .answer(200, type: "image/png", body: PictureTests.png)
        }
        defer { server.stop() }
        #expect(try fetch("moved.png", from: server) == (.failed("moved.png: HTTP 302"), false))
        #expect(server.requests == 1, "the new address was not asked")
    }

    /// Each of these bodies never ends: an answer at all means the transfer
    /// was judged and cut off, and the server sees its client go.
    @Test(arguments: [("announced.png", CannedHTTPServer.Response.endless(200, type: "image/png", length: PictureFetcher.maxBytes * 4),
                       PictureState.failed("announced.png: larger than a shop's pictures may be")),
                      ("growing.png", .endless(200, type: "image/png", length: nil),
                       .failed("growing.png: larger than a shop's pictures may be")),
                      ("missing.png", .endless(404, type: "text/html", length: nil), .failed("missing.png: HTTP 404"))])
    func aTransferIsCutOffOnceJudged(name: String, response: CannedHTTPServer.Response, expected: PictureState) throws {
        let server = try CannedHTTPServer { _ in response }
        defer { server.stop() }
        let (answer, _) = try fetchCounting(name, from: server)
        #expect(answer == (expected, false))
        #expect(eventually { server.clientLeft }, "the client closed the connection")
        // The client read at most a megabyte and closed: the server's writes
        // stopped once the kernel's buffers filled (a few MiB), however long it ran.
        #expect(server.bytesWritten < 32 * PictureFetcher.maxBytes, "\(server.bytesWritten) bytes written")
    }

    @Test func namesThatLeaveTheirPathAndUnusableTLSAreRefusedWithoutAsking() throws {
        let server = try CannedHTTPServer { _ in .answer(200, type: "image/png", body: PictureTests.png) }
        defer { server.stop() }
        for name in ["../secret", "a?b=1", "x#y", ".hidden", ""] {
            let (state, retry) = try fetch(name, from: server)
            #expect(state == .failed("not a picture's name: \(name)") && !retry)
        }
        let url = try #require(WebSocketURL("wss://127.0.0.1:\(server.port)/shop/demo"))
        let fetcher = PictureFetcher(url: url, tls: ClientTLS(caFile: "/tmp/ca.pem"))
        let told = Mutex<PictureState?>(nil)
        fetcher.fetch("px.png") { state, _ in told.withLock { $0 = state } }
        #expect(told.withLock { $0 } == .failed("pictures are fetched with the system's CAs (not --ca-file or --insecure)"))
        #expect(server.requests == 0, "nothing was asked of the hub")
    }
}

/// `PlainHTTP` against answers a broken or hostile server could give: each
/// is refused with a reason or read exactly, never a crash or a hang.
@Suite(.serialized) struct PlainHTTPTests {
    private func get(_ answer: String, hold: Bool = false) throws -> PlainHTTP.Answer {
        let server = try CannedHTTPServer { _ in hold ? .rawThenHold(Array(answer.utf8)) : .raw(Array(answer.utf8)) }
        defer { server.stop() }
        return PlainHTTP.get(host: "127.0.0.1", port: server.port, path: "/shop/demo/images/x.png", maxBytes: 1_000, seconds: 20)
    }

    @Test func wellFormedBodiesAreReadExactly() throws {
        #expect(try get("HTTP/1.1 200 OK\r\nContent-Type: image/png; x=1\r\nContent-Length: 5\r\n\r\nhello") == .body(type: "image/png",
            bytes: Array("hello".utf8)))
        #expect(try get("HTTP/1.1 200 OK\r\nContent-Type: image/svg+xml\r\nTransfer-Encoding: " +
                        "chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n")
                == .body(type: "image/svg+xml", bytes: Array("abcde".utf8)))
        #expect(try get("HTTP/1.0 200 OK\r\nContent-Type: image/webp\r\n\r\nto the end") == .body(type: "image/webp",
                                                                                                  bytes: Array("to the end".utf8)))
        #expect(try get("HTTP/1.1 404 Not Found\r\nContent-Length: 99999999\r\n\r\n") == .status(404))
        #expect(try get("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                == .body(type: "", bytes: Array("ok".utf8)))
    }

    /// The server keeps the connection open after the body: only the
    /// framing (a length, the last chunk) can end it.
    @Test func theFramingEndsTheBodyNotTheConnection() throws {
        #expect(try get("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", hold: true) == .body(type: "", bytes: Array("hello".utf8)))
        #expect(try get("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", hold: true)
                == .body(type: "", bytes: Array("ok".utf8)))
    }

    @Test func hostileAnswersAreRefusedWithAReason() throws {
        #expect(try get("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\nabc") == .tooLarge,
                "a chunk size near Int.max")
        #expect(try get("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n7ffffffffffffffe\r\n") == .tooLarge,
                "its sum would overflow")
        #expect(try get("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n") == .malformed("a broken chunk"))
        #expect(try get("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n") == .malformed("a broken chunk"))
        #expect(try get("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n;a\r\n0123456789\r\n0\r\n\r\n")
                == .malformed("a broken chunk"))
        #expect(try get("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+3\r\nabc\r\n0\r\n\r\n") == .malformed("a broken chunk"))
        #expect(try get("HTTP/1.1 200 OK\r\nContent-Length: 1001\r\n\r\n") == .tooLarge)
        #expect(try get("HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n") == .malformed("a bad Content-Length"))
        #expect(try get("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort") == .failed("the body broke off"))
        #expect(try get("HTTP/1.0 200 OK\r\n\r\n" + String(repeating: "x", count: 1_001)) == .tooLarge, "to the end, past the limit")
        #expect(try get("hello\r\n\r\n") == .malformed("not an HTTP answer"))
        #expect(try get("HTTP/1.1 200 OK\r\nX: " + String(repeating: "y",
                                                          count: 20_000) + "\r\n\r\n") == .malformed("an answer's head past 16 KiB"))
        #expect(try get("HTTP/1.1 200 OK\r\nContent-") == .failed("the answer broke off"))
        #expect(PlainHTTP.get(host: "127.0.0.1", port: 1, path: "/", maxBytes: 10, seconds: 5) == .failed("cannot connect to 127.0.0.1:1"))
    }
}

private func == (lhs: (PictureState, Bool), rhs: (PictureState, Bool)) -> Bool { lhs.0 == rhs.0 && lhs.1 == rhs.1 }

/// Waits until `condition` holds (at most 30 s).
private func eventually(_ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(30)
    while !condition() {
        guard Date() < deadline else { return false }
        usleep(5_000)
    }
    return true
}

/// A loopback HTTP/1.1 server answering every request from `respond(path)`,
/// one connection at a time, then closing it; `stop()` ends its thread.
final class CannedHTTPServer: Sendable {
    enum Response {
        case answer(Int, type: String, body: [UInt8])
        /// A head (`length`: its Content-Length, nil: chunked), then a body of
        /// 64 KiB pieces that never ends until the client goes away.
        case endless(Int, type: String, length: Int?)
        /// These bytes exactly, then the connection closes.
        case raw([UInt8])
        /// These bytes, then the connection stays open until the client closes it.
        case rawThenHold([UInt8])
    }

    /// What the server saw, shared with its thread.
    final class Counters: Sendable {
        let requests = Mutex(0)
        let bytesWritten = Mutex(0)
        /// An endless answer's client went away.
        let clientLeft = Mutex(false)
    }

    let port: Int
    let counters = Counters()
    var requests: Int { counters.requests.withLock { $0 } }
    var bytesWritten: Int { counters.bytesWritten.withLock { $0 } }
    var clientLeft: Bool { counters.clientLeft.withLock { $0 } }
    private let listener: Int32

    init(_ respond: @escaping @Sendable (String) -> Response) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
        guard bound == 0, listen(listener, 16) == 0 else { throw POSIXError(.EADDRNOTAVAIL) }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self,
                                                                          capacity: 1) { getsockname(listener, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
        let counters = counters
        Thread.detachNewThread {
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else {
                    close(listener)
                    return
                }
                Self.serve(client, respond, counters)
                close(client)
            }
        }
    }

    /// Wakes the thread out of `accept`; the thread closes the listener, so
    /// its descriptor number is never reused while the thread may still use it.
    func stop() { shutdown(listener, Int32(SHUT_RDWR)) }

    private static func serve(_ client: Int32, _ respond: (String) -> Response, _ counters: Counters) {
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !(request.count >= 4 && Array(request.suffix(4)) == Array("\r\n\r\n".utf8)) {
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return }
            request += buffer[0..<count]
        }
        counters.requests.withLock { $0 += 1 }
        let path = String(decoding: request, as: UTF8.self).split(separator: " ").dropFirst().first.map(String.init) ?? "/"
        func write(_ bytes: [UInt8]) -> Bool {
            var sent = 0
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard count > 0 else { return false }
                sent += count
                counters.bytesWritten.withLock { $0 += count }
            }
            return true
        }
        switch respond(path) {
        case let .answer(status, type, body):
            let head = "HTTP/1.1 \(status) X\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\n"
                + (status == 302 ? "Location: /elsewhere.png\r\n" : "") + "Connection: close\r\n\r\n"
            _ = write(Array(head.utf8) + body)
        case let .raw(bytes):
            _ = write(bytes)
        case let .rawThenHold(bytes):
            guard write(bytes) else { return }
            while read(client, &buffer, buffer.count) > 0 {}
            counters.clientLeft.withLock { $0 = true }
        case let .endless(status, type, length):
            let framing = length.map { "Content-Length: \($0)" } ?? "Transfer-Encoding: chunked"
            guard write(Array("HTTP/1.1 \(status) X\r\nContent-Type: \(type)\r\n\(framing)\r\nConnection: close\r\n\r\n".utf8)) else {
                return
            }
            let piece = [UInt8](repeating: 0x42, count: 0x10000)
            let chunk = length == nil ? Array("10000\r\n".utf8) + piece + Array("\r\n".utf8) : piece
            while write(chunk) {}
            counters.clientLeft.withLock { $0 = true }
        }
    }
}
