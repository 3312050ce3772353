import Foundation

/// A private `redis-server` on a free port with AOF (`appendfsync always`),
/// never the system service; stopped when the test is done.
final class RedisProcess: @unchecked Sendable {
    // Sendable: used from one test at a time.
    let port: Int
    let directory: String
    let process = Process()
    var url: String { "redis://127.0.0.1:\(port)" }

    init() throws {
        port = freePort()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("redis-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-server")
        process.arguments = ["--port", "\(port)", "--dir", directory, "--appendonly", "yes", "--appendfsync", "always",
                             "--save", "", "--daemonize", "no", "--bind", "127.0.0.1"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let up = eventually(timeout: 15) { Self.answersPing(port: self.port) }
        if !up {
            process.terminate()
            throw HubError.didNotStart("redis-server did not answer PING on port \(port)")
        }
    }

    deinit {
        // SIGKILL, no wait: Foundation's waitUntilExit can hang in a deinit.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Whether a PING on `port` gets +PONG.
    static func answersPing(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return false }
        let ping = Array("PING\r\n".utf8)
        guard write(fd, ping, ping.count) == ping.count else { return false }
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = read(fd, &buffer, buffer.count)
        return count > 0 && String(decoding: buffer.prefix(count), as: UTF8.self).hasPrefix("+PONG")
    }
}
