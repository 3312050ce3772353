import Foundation

/// One `GET` over plain HTTP/1.1 on a socket of its own, for a picture: the
/// answer's head is read first (`HTTPReader`), a status other than 200
/// ends it there, and the body is read only up to `maxBytes` and within the
/// deadline, then the connection is closed. Nothing is buffered past the
/// limit (URLSession on Linux keeps reading until a cancel lands, however
/// much arrives meanwhile). Redirects are not followed.
enum PlainHTTP {
    enum Answer: Equatable, Sendable {
        case body(type: String, bytes: [UInt8])
        /// A status other than 200 (its body unread).
        case status(Int)
        case tooLarge
        /// Not reached, broken off or out of time: worth another try later.
        case failed(String)
        /// Not an HTTP answer this client reads: asking again would not help.
        case malformed(String)
    }

    static func get(host: String, port: Int, path: String, maxBytes: Int, seconds: Double) -> Answer {
        let deadline = Date().addingTimeInterval(seconds)
        guard let socket = PlainStream.connect(host: host, port: port, deadline: deadline) else {
            return .failed("cannot connect to \(host):\(port)")
        }
        let request = HTTPRequest(method: "GET", path: path, accept: "image/*").bytes(host: host, port: port, token: nil)
        guard socket.write(request, until: deadline) else { return .failed("cannot send the request") }
        var reader = HTTPReader(stream: socket, deadline: deadline)
        switch reader.answer(maxBytes: maxBytes, readsBody: { $0 == 200 }) {
        case let .answered(200, type, bytes): return .body(type: type, bytes: bytes ?? [])
        case let .answered(status, _, _): return .status(status)
        case .tooLarge: return .tooLarge
        case let .failed(why): return .failed(why)
        case let .malformed(why): return .malformed(why)
        }
    }
}
