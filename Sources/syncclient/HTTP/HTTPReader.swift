import Foundation

/// A hub's answer to one HTTP/1.1 request, as `HTTPReader` read it.
enum HTTPAnswer: Equatable, Sendable {
    /// `type`: the media type, lowercased, without parameters ("" when absent);
    /// `body`: nil when it was left unread (`readsBody` said so).
    case answered(status: Int, type: String, body: [UInt8]?)
    /// The body is larger than the reader takes.
    case tooLarge
    /// Not reached, broken off or out of time: worth another try later.
    case failed(String)
    /// Not an HTTP answer this client reads: asking again would not help.
    case malformed(String)
}

/// Reads one HTTP/1.1 answer from a stream: its head first (at most 16 KiB,
/// informational 1xx heads skipped), then, if wanted, a body framed by
/// chunks, a `Content-Length` or the end of the connection, never more than
/// `maxBytes` of it and never past the deadline. Nothing is buffered past
/// the limit.
struct HTTPReader<Stream: ByteStream> {
    let stream: Stream
    let deadline: Date
    private var buffer: [UInt8] = []
    /// Why the last read failed (nil at a clean end).
    private var why: String?
    /// The head did not end within its limit.
    private var tooLong = false
    /// One receive buffer for every read.
    private var scratch = [UInt8](repeating: 0, count: 65_536)

    init(stream: Stream, deadline: Date) {
        self.stream = stream
        self.deadline = deadline
    }

    /// The answer; its body is read only when `readsBody(status)`.
    mutating func answer(maxBytes: Int, readsBody: (Int) -> Bool) -> HTTPAnswer {
        var lines: [String] = []
        var status = 0
        repeat {
            guard let head = head(limit: 16_384) else {
                return tooLong ? .malformed("an answer's head past 16 KiB") : .failed(why ?? "no answer")
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
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            fields[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let type = (fields["content-type"] ?? "").split(separator: ";").first
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard readsBody(status) else { return .answered(status: status, type: type, body: nil) }
        // These two never have a body, whatever their fields say (RFC 9112, 6.3).
        if status == 204 || status == 304 { return .answered(status: status, type: type, body: []) }
        return body(fields: fields, maxBytes: maxBytes) { .answered(status: status, type: type, body: $0) }
    }

    /// The body, framed as `fields` say, given to `answered`; or why it could not be read.
    private mutating func body(fields: [String: String], maxBytes: Int, answered: ([UInt8]) -> HTTPAnswer) -> HTTPAnswer {
        let codings = (fields["transfer-encoding"] ?? "").lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        if codings.last == "chunked" {
            var body: [UInt8] = []
            while true {
                guard let sizeLine = line(limit: 1_024) else { return why.map { .failed($0) } ?? .malformed("a broken chunk") }
                let digits = sizeLine.prefix { $0 != ";" }.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
                guard (1...16).contains(digits.count), digits.allSatisfy(\.isHexDigit), let size = Int(digits, radix: 16) else {
                    return .malformed("a broken chunk")
                }
                if size == 0 { return answered(body) }
                guard size <= maxBytes - body.count else { return .tooLarge }  // (no sum that could overflow)
                guard let chunk = bytes(size) else { return .failed(why ?? "the body broke off") }
                guard line(limit: 2) == "" else { return why.map { .failed($0) } ?? .malformed("a broken chunk") }
                body += chunk
            }
        }
        if let declared = fields["content-length"] {
            guard !declared.isEmpty, declared.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                return .malformed("a bad Content-Length")
            }
            guard let length = Int(declared), length <= maxBytes else { return .tooLarge }
            guard let body = bytes(length) else { return .failed(why ?? "the body broke off") }
            return answered(body)
        }
        // Neither: the body ends with the connection.
        var body: [UInt8] = []
        while let more = some(limit: maxBytes + 1 - body.count) {
            body += more
            if body.count > maxBytes { return .tooLarge }
        }
        if let why { return .failed(why) }
        return answered(body)
    }

    /// More bytes into `buffer`; false at the end, an error or the deadline (`why` says which, nil at a clean end).
    private mutating func fill(limit: Int) -> Bool {
        let wanted = max(1, min(scratch.count, limit))
        let (stream, deadline) = (stream, deadline)
        let read = scratch.withUnsafeMutableBytes { all in
            stream.read(into: UnsafeMutableRawBufferPointer(rebasing: all[..<wanted]), until: deadline)
        }
        switch read {
        case let .bytes(count):
            buffer += scratch[0..<count]
            return true
        case .end:
            return false
        case let .failed(text):
            why = text
            return false
        }
    }

    private mutating func head(limit: Int) -> [UInt8]? {
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

    private mutating func line(limit: Int) -> String? {
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

    private mutating func bytes(_ count: Int) -> [UInt8]? {
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
    private mutating func some(limit: Int) -> [UInt8]? {
        if buffer.isEmpty, !fill(limit: limit) { return nil }
        defer { buffer = [] }
        return buffer
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<start + needle.count]) == needle { return start }
        }
        return nil
    }
}
