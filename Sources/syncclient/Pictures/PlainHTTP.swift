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
        /// Not reached, broken off, not HTTP, or out of time: worth another try later.
        case failed(String)
    }

    static func get(host: String, port: Int, path: String, maxBytes: Int, seconds: Double) -> Answer {
        let deadline = Date().addingTimeInterval(seconds)
        guard let socket = connect(host: host, port: port, deadline: deadline) else { return .failed("cannot connect to \(host):\(port)") }
        defer { close(socket) }
        var reader = Reader(socket: socket, deadline: deadline)
        let request = "GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nAccept: image/*\r\nConnection: close\r\n\r\n"
        guard reader.write(Array(request.utf8)) else { return .failed("cannot send the request") }
        guard let head = reader.head(limit: 16_384) else { return .failed(reader.why ?? "no answer") }
        let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else { return .failed("not an HTTP answer") }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        guard status == 200 else { return .status(status) }
        let type = (fields["content-type"] ?? "").split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        if fields["transfer-encoding"]?.lowercased().contains("chunked") == true {
            var body: [UInt8] = []
            while true {
                guard let sizeLine = reader.line(limit: 1_024), let size = Int(sizeLine.split(separator: ";").first.map(String.init) ?? "", radix: 16), size >= 0 else {
                    return .failed(reader.why ?? "a broken chunk")
                }
                if size == 0 { return .body(type: type, bytes: body) }
                guard size <= maxBytes - body.count else { return .tooLarge }  // (no sum that could overflow)
                guard let chunk = reader.bytes(size), reader.line(limit: 2) == "" else { return .failed(reader.why ?? "a broken chunk") }
                body += chunk
            }
        }
        if let declared = fields["content-length"] {
            guard let length = Int(declared), length >= 0 else { return .failed("a bad Content-Length") }
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
            let fd = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if Glibc.connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 || errno == EINPROGRESS,
               Reader.wait(fd, for: Int16(POLLOUT), until: deadline) {
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
            var chunk = [UInt8](repeating: 0, count: max(1, min(65_536, limit)))
            let count = recv(socket, &chunk, chunk.count, 0)
            if count < 0, errno == EAGAIN || errno == EINTR { return true }
            if count < 0 { why = "the connection broke"; return false }
            if count == 0 { return false }
            buffer += chunk[0..<count]
            return true
        }

        mutating func head(limit: Int) -> [UInt8]? {
            while true {
                if let end = Self.find([13, 10, 13, 10], in: buffer) {
                    let head = Array(buffer[..<end])
                    buffer.removeFirst(end + 4)
                    return head
                }
                guard buffer.count < limit, fill(limit: limit - buffer.count) else {
                    if why == nil { why = buffer.count >= limit ? "an answer's head past 16 KiB" : "the answer broke off" }
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
                guard buffer.count < limit, fill(limit: limit) else {
                    if why == nil { why = "a broken chunk" }
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
