import Foundation

/// One `GET` over plain HTTP/1.1 on a socket of its own, for a picture: the
/// answer's head is read first (at most 16 KiB), a status other than 200
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
        // `[::1]` as a URL writes it; the resolver wants it bare.
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        guard let socket = connect(host: bare, port: port, deadline: deadline) else { return .failed("cannot connect to \(host):\(port)") }
        defer { close(socket) }
        var reader = Reader(socket: socket, deadline: deadline)
        let hostField = bare.contains(":") ? "[\(bare)]" : bare
        let request = "GET \(path) HTTP/1.1\r\nHost: \(hostField):\(port)\r\nAccept: image/*\r\nConnection: close\r\n\r\n"
        guard reader.write(Array(request.utf8)) else { return .failed("cannot send the request") }
        var lines: [String] = []
        var status = 0
        repeat {
            // Informational heads (1xx) come before the answer's own.
            guard let head = reader.head(limit: 16_384) else {
                return reader.tooLong ? .malformed("an answer's head past 16 KiB") : .failed(reader.why ?? "no answer")
            }
            lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
            let statusParts = lines.first?.split(separator: " ") ?? []
            guard statusParts.count >= 2, statusParts[0] == "HTTP/1.1" || statusParts[0] == "HTTP/1.0",
                  statusParts[1].count == 3, statusParts[1].allSatisfy(\.isASCII), let code = Int(statusParts[1]), code >= 100 else {
                return .malformed("not an HTTP answer")
            }
            status = code
        } while (100..<200).contains(status)
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        guard status == 200 else { return .status(status) }
        let type = (fields["content-type"] ?? "").split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        let codings = (fields["transfer-encoding"] ?? "").lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        if codings.last == "chunked" {
            var body: [UInt8] = []
            while true {
                guard let sizeLine = reader.line(limit: 1_024) else { return reader.why.map { .failed($0) } ?? .malformed("a broken chunk") }
                let digits = sizeLine.prefix { $0 != ";" }.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
                guard (1...16).contains(digits.count), digits.allSatisfy(\.isHexDigit), let size = Int(digits, radix: 16) else {
                    return .malformed("a broken chunk")
                }
                if size == 0 { return .body(type: type, bytes: body) }
                guard size <= maxBytes - body.count else { return .tooLarge }  // (no sum that could overflow)
                guard let chunk = reader.bytes(size) else { return .failed(reader.why ?? "the body broke off") }
                guard reader.line(limit: 2) == "" else { return reader.why.map { .failed($0) } ?? .malformed("a broken chunk") }
                body += chunk
            }
        }
        if let declared = fields["content-length"] {
            guard !declared.isEmpty, declared.allSatisfy({ $0.isASCII && $0.isNumber }) else { return .malformed("a bad Content-Length") }
            guard let length = Int(declared) else { return .tooLarge }
            guard length <= maxBytes else { return .tooLarge }
            guard let body = reader.bytes(length) else { return .failed(reader.why ?? "the body broke off") }
            return .body(type: type, bytes: body)
        }
        // Neither: the body ends with the connection.
        var body: [UInt8] = []
        while let more = reader.some(limit: maxBytes + 1 - body.count) {
            body += more
            if body.count > maxBytes { return .tooLarge }
        }
        return reader.why == nil ? .body(type: type, bytes: body) : .failed(reader.why!)
    }

    private static func connect(host: String, port: Int, deadline: Date) -> Int32? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else { return nil }
        defer { freeaddrinfo(first) }
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let address = next {
            next = address.pointee.ai_next
            let fd = socket(address.pointee.ai_family, address.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            // Each address gets at most 10 s, so one that never answers leaves time for the next.
            if Glibc.connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 || errno == EINPROGRESS,
               Reader.wait(fd, for: Int16(POLLOUT), until: min(deadline, Date().addingTimeInterval(10))) {
                var error: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                if getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0, error == 0 { return fd }
            }
            close(fd)
        }
        return nil
    }

    /// Reads from a non-blocking socket, each wait bounded by the deadline.
    private struct Reader {
        let socket: Int32
        let deadline: Date
        var buffer: [UInt8] = []
        /// Why the last read failed.
        var why: String?
        /// The head did not end within its limit.
        var tooLong = false
        /// One receive buffer for every read.
        private var scratch = [UInt8](repeating: 0, count: 65_536)

        init(socket: Int32, deadline: Date) {
            self.socket = socket
            self.deadline = deadline
        }

        static func wait(_ fd: Int32, for events: Int16, until deadline: Date) -> Bool {
            var entry = pollfd(fd: fd, events: events, revents: 0)
            while true {
                let left = deadline.timeIntervalSinceNow
                guard left > 0 else { return false }
                let ready = poll(&entry, 1, Int32(min(left, 1) * 1_000) + 1)
                if ready > 0 { return true }
                if ready < 0, errno != EINTR { return false }
            }
        }

        mutating func write(_ bytes: [UInt8]) -> Bool {
            var sent = 0
            while sent < bytes.count {
                guard Self.wait(socket, for: Int16(POLLOUT), until: deadline) else { return false }
                let count = bytes[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if count < 0, errno == EAGAIN || errno == EINTR { continue }
                guard count > 0 else { return false }
                sent += count
            }
            return true
        }

        /// More bytes into `buffer`; false at the end, an error or the deadline (`why` says which, nil at a clean end).
        private mutating func fill(limit: Int) -> Bool {
            guard Self.wait(socket, for: Int16(POLLIN), until: deadline) else {
                why = "no answer in time"
                return false
            }
            let wanted = max(1, min(scratch.count, limit))
            let count = scratch.withUnsafeMutableBytes { recv(socket, $0.baseAddress, wanted, 0) }
            if count < 0, errno == EAGAIN || errno == EINTR { return true }
            if count < 0 { why = "the connection broke"; return false }
            if count == 0 { return false }
            buffer += scratch[0..<count]
            return true
        }

        mutating func head(limit: Int) -> [UInt8]? {
            while true {
                if let end = Self.find([13, 10, 13, 10], in: buffer) {
                    let head = Array(buffer[..<end])
                    buffer.removeFirst(end + 4)
                    return head
                }
                guard buffer.count < limit else {
                    tooLong = true
                    return nil
                }
                guard fill(limit: limit - buffer.count) else {
                    if why == nil { why = "the answer broke off" }
                    return nil
                }
            }
        }

        mutating func line(limit: Int) -> String? {
            while true {
                if let end = Self.find([13, 10], in: buffer) {
                    let text = String(decoding: buffer[..<end], as: UTF8.self)
                    buffer.removeFirst(end + 2)
                    return text
                }
                // Past `limit` without a line end: a broken chunk (`why` stays nil).
                guard buffer.count < limit, fill(limit: limit) else {
                    if why == nil, buffer.count < limit { why = "the body broke off" }
                    return nil
                }
            }
        }

        mutating func bytes(_ count: Int) -> [UInt8]? {
            while buffer.count < count {
                guard fill(limit: count - buffer.count) else {
                    if why == nil { why = "the body broke off" }
                    return nil
                }
            }
            let taken = Array(buffer[..<count])
            buffer.removeFirst(count)
            return taken
        }

        /// What is buffered, or the next read; nil at the end (or an error, in `why`).
        mutating func some(limit: Int) -> [UInt8]? {
            if buffer.isEmpty, !fill(limit: limit) { return nil }
            defer { buffer = [] }
            return buffer
        }

        static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
            guard haystack.count >= needle.count else { return nil }
            for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
                if Array(haystack[start..<start + needle.count]) == needle { return start }
            }
            return nil
        }
    }
}
