import Foundation

/// The bytes of one HTTP exchange with a hub: a plain socket (`PlainStream`)
/// or TLS over one (`TLSStream`). Every wait is bounded by a deadline.
protocol ByteStream {
    /// Sends all of `bytes`; false when the connection broke or the deadline passed.
    func write(_ bytes: [UInt8], until deadline: Date) -> Bool
    /// Reads at most `buffer.count` bytes into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer, until deadline: Date) -> StreamRead
}

/// What one read gave.
enum StreamRead: Equatable {
    case bytes(Int)
    /// The other side closed its end cleanly.
    case end
    /// Broken or out of time: why, for a person.
    case failed(String)
}

/// A connected TCP socket, non-blocking, closed when this object goes.
final class PlainStream: ByteStream {
    let socket: Int32

    private init(socket: Int32) {
        self.socket = socket
    }

    deinit { close(socket) }

    /// A connection to `host` (a name or an address; `[::1]` as a URL writes
    /// it) and `port`, trying each address the resolver gives; nil when none
    /// answers before the deadline.
    static func connect(host: String, port: Int, deadline: Date) -> PlainStream? {
        let bare = bareHost(host)
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(bare, String(port), &hints, &found) == 0, let first = found else { return nil }
        defer { freeaddrinfo(first) }
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let address = next {
            next = address.pointee.ai_next
            let fd = Glibc.socket(address.pointee.ai_family, address.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue),
                                  address.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            // Each address gets at most 10 s, so one that never answers leaves time for the next.
            if Glibc.connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 || errno == EINPROGRESS,
               wait(fd, for: Int16(POLLOUT), until: min(deadline, Date().addingTimeInterval(10))) {
                var error: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                if getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0, error == 0 { return PlainStream(socket: fd) }
            }
            close(fd)
        }
        return nil
    }

    /// `host` as the resolver and TLS want it: an IPv6 address without its brackets.
    static func bareHost(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    /// Waits until `fd` is ready for `events`; false at the deadline or on an error.
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

    func write(_ bytes: [UInt8], until deadline: Date) -> Bool {
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

    func read(into buffer: UnsafeMutableRawBufferPointer, until deadline: Date) -> StreamRead {
        while true {
            guard Self.wait(socket, for: Int16(POLLIN), until: deadline) else { return .failed("no answer in time") }
            let count = recv(socket, buffer.baseAddress, buffer.count, 0)
            if count < 0, errno == EAGAIN || errno == EINTR { continue }
            if count < 0 { return .failed("the connection broke") }
            return count == 0 ? .end : .bytes(count)
        }
    }
}
