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

    private func fetchCounting(_ name: String, from server: CannedHTTPServer, tls: ClientTLS? = nil) throws -> (answer: (PictureState, Bool), written: Int) {
        let url = try #require(WebSocketURL("ws://127.0.0.1:\(server.port)/shop/demo"))
        let fetcher = PictureFetcher(url: url, tls: tls)
        let result = Mutex<(PictureState, Bool)?>(nil)
        let done = DispatchSemaphore(value: 0)
        let written = Mutex(0)
        fetcher.fetch(name) { state, retry in
            written.withLock { $0 = server.bytesWritten.withLock { $0 } }
            result.withLock { $0 = (state, retry) }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 60) == .success, "an answer within the fetch's own 30 s")
        return (try #require(result.withLock { $0 }), written.withLock { $0 })
    }

    @Test func aPictureIsFetchedAndDecoded() throws {
        let server = try CannedHTTPServer { path in
            path == "/shop/demo/images/px.png" ? .answer(200, type: "image/png", body: PictureTests.png) : .answer(404, type: "text/plain", body: [])
        }
        let (state, retry) = try fetch("px.png", from: server)
        guard case let .ready(picture) = state else { Issue.record("\(state)"); return }
        #expect(picture.width == 4 && picture.height == 2 && !retry)
    }

    @Test func aMissingPictureIsNotAskedForAgainAFailingHubIs() throws {
        let server = try CannedHTTPServer { path in
            path.hasSuffix("gone.png") ? .answer(404, type: "text/plain", body: Array("no".utf8)) : .answer(503, type: "text/plain", body: [])
        }
        let missing = try fetch("gone.png", from: server)
        #expect(missing.0 == .failed("gone.png: HTTP 404") && !missing.1)
        let failing = try fetch("busy.png", from: server)
        #expect(failing.0 == .failed("busy.png: HTTP 503") && failing.1)
    }

    @Test func aBodyPastTheLimitIsCutOffWhileItArrives() throws {
        // Announced too large: refused from the head.
        let announced = try CannedHTTPServer { _ in .answer(200, type: "image/png", body: Array(repeating: 0, count: PictureFetcher.maxBytes + 1)) }
        #expect(try fetch("big.png", from: announced) == (.failed("big.png: larger than a shop's pictures may be"), false))
        // Chunked with no length, endless: cut off once past the limit.
        let endless = try CannedHTTPServer { _ in .endless(type: "image/png") }
        // The body never ends: an answer at all means the transfer was cut off.
        let (answer, _) = try fetchCounting("endless.png", from: endless)
        #expect(answer == (.failed("endless.png: larger than a shop's pictures may be"), false))
        let deadline = Date().addingTimeInterval(30)
        while !endless.clientLeft.withLock({ $0 }), Date() < deadline { usleep(10_000) }
        #expect(endless.clientLeft.withLock { $0 }, "the client closed the connection")
    }

    @Test func namesThatLeaveTheirPathAndUnusableTLSAreRefusedWithoutAsking() throws {
        let server = try CannedHTTPServer { _ in .answer(200, type: "image/png", body: PictureTests.png) }
        for name in ["../secret", "a?b=1", "x#y", ".hidden", ""] {
            let (state, retry) = try fetch(name, from: server)
            #expect(state == .failed("not a picture's name: \(name)") && !retry)
        }
        let url = try #require(WebSocketURL("wss://127.0.0.1:\(server.port)/shop/demo"))
        let fetcher = PictureFetcher(url: url, tls: ClientTLS(caFile: "/tmp/ca.pem"))
        let told = Mutex<PictureState?>(nil)
        fetcher.fetch("px.png") { state, _ in told.withLock { $0 = state } }
        #expect(told.withLock { $0 } == .failed("pictures are fetched with the system's CAs (not --ca-file or --insecure)"))
        #expect(server.requests.withLock { $0 } == 0, "nothing was asked of the hub")
    }
}

private func == (lhs: (PictureState, Bool), rhs: (PictureState, Bool)) -> Bool { lhs.0 == rhs.0 && lhs.1 == rhs.1 }

/// A loopback HTTP/1.1 server answering every request from `respond(path)`,
/// one connection at a time, then closing it.
final class CannedHTTPServer: @unchecked Sendable {
    // @unchecked: `listener` is set once in init; the counters are Mutexes.
    enum Response {
        case answer(Int, type: String, body: [UInt8])
        /// 200, chunked, 64 KiB chunks until the client goes away.
        case endless(type: String)
    }

    let port: Int
    let requests = Mutex(0)
    let bytesWritten = Mutex(0)
    /// An endless answer's client went away.
    let clientLeft = Mutex(false)
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
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                serve(client, respond)
                close(client)
            }
        }
    }

    deinit { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }

    private func serve(_ client: Int32, _ respond: (String) -> Response) {
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.lastFour(equal: Array("\r\n\r\n".utf8)) {
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return }
            request += buffer[0..<count]
        }
        requests.withLock { $0 += 1 }
        let path = String(decoding: request, as: UTF8.self).split(separator: " ").dropFirst().first.map(String.init) ?? "/"
        switch respond(path) {
        case let .answer(status, type, body):
            let head = "HTTP/1.1 \(status) X\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
            _ = write(client, Array(head.utf8) + body)
        case let .endless(type):
            guard write(client, Array("HTTP/1.1 200 OK\r\nContent-Type: \(type)\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".utf8)) else { return }
            let chunk = Array("10000\r\n".utf8) + [UInt8](repeating: 0x42, count: 0x10000) + Array("\r\n".utf8)
            while write(client, chunk) {}
            clientLeft.withLock { $0 = true }
        }
    }

    /// Writes everything, or false once the client has gone.
    private func write(_ client: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return false }
            sent += count
            bytesWritten.withLock { $0 += count }
        }
        return true
    }
}

private extension Array where Element == UInt8 {
    func lastFour(equal tail: [UInt8]) -> Bool { count >= 4 && Array(self[(count - 4)...]) == tail }
}
