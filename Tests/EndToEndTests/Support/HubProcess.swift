import Foundation
import Synchronization
import Testing

/// Paths of the built products and the repository, found from this file.
enum Build {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var binDirectory: URL {
        if let path = ProcessInfo.processInfo.environment["SYNCHUB_BIN_DIR"] { return URL(fileURLWithPath: path) }
        return repository.appendingPathComponent(".build/debug")
    }
    static var synchub: URL { binDirectory.appendingPathComponent("synchub") }
    static var syncclient: URL { binDirectory.appendingPathComponent("syncclient") }
}

/// Ports handed out so far, and where the next search starts.
private let portsHandedOut = Mutex<(next: Int, taken: Set<Int>)>((next: Int(getpid()) &* 7919, taken: []))

/// A port on 127.0.0.1 that nothing listens on and that no earlier call in
/// this process returned. Taken in turn from below the kernel's ephemeral
/// range (32768-60999 on Debian), each checked by a bind: `bind(port 0)` can
/// give the same port to two calls in a row (CI: a Redis port came back as
/// the hub's own), and an ephemeral port can be taken by an outgoing
/// connection before the server meant for it listens. The start depends on
/// the process id, so two test processes walk different stretches; the same
/// rule as `free_port` in Tests/python/hubprocess.py.
func freePort() -> Int {
    let ports = 10000..<ephemeralPortsStart()
    return portsHandedOut.withLock { state in
        for _ in 0..<ports.count {
            let port = ports.lowerBound + Int(UInt(bitPattern: state.next) % UInt(ports.count))
            state.next &+= 1
            if state.taken.contains(port) || !canListen(on: port) { continue }
            state.taken.insert(port)
            return port
        }
        fatalError("no free port left in \(ports)")
    }
}

/// The first port of the kernel's ephemeral range (32768 if it cannot be read).
private func ephemeralPortsStart() -> Int {
    let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
    let low = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first.flatMap { Int($0) } ?? 32768
    return max(low, 10001)
}

/// Whether a TCP socket can bind 127.0.0.1:`port` now (bound and released at once).
private func canListen(on port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}

/// The real `synchub` binary on a free port, stopped when the test is done.
final class HubProcess: @unchecked Sendable {
    // Sendable: used from one test at a time.
    let port: Int
    let process = Process()
    private let errors = Pipe()
    private(set) var output = ""
    let dataDirectory: String?

    var url: String { "ws://127.0.0.1:\(port)" }
    func board(_ name: String) -> String { "\(url)/boards/\(name)" }

    /// Starts the hub and waits for its `listening on ws://` line.
    /// `dataDirectory` nil runs `--in-memory`.
    /// `redis`: a cluster member on that Redis (no embedded store).
    init(dataDirectory: String? = nil, port: Int? = nil, arguments: [String] = [], redis: String? = nil) throws {
        self.port = port ?? freePort()
        self.dataDirectory = dataDirectory
        process.executableURL = Build.synchub
        var args = ["--port", "\(self.port)", "--log-level", "warning"]
        if let redis {
            args += ["--redis", redis]
        } else if let dataDirectory {
            args += ["--data", dataDirectory]
        } else {
            args.append("--in-memory")
        }
        process.arguments = args + arguments
        process.standardError = errors
        process.standardOutput = errors
        try process.run()
        let deadline = Date().addingTimeInterval(15)
        var seen = Data()
        while Date() < deadline {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen.append(chunk)
            if String(decoding: seen, as: UTF8.self).contains("listening on ws://") {
                output = String(decoding: seen, as: UTF8.self)
                drain()
                return
            }
        }
        process.terminate()
        throw HubError.didNotStart(String(decoding: seen, as: UTF8.self))
    }

    private func drain() {
        errors.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            if !data.isEmpty { self?.append(String(decoding: data, as: UTF8.self)) }
        }
    }

    private let lock = NSLock()
    private func append(_ text: String) {
        lock.lock()
        output += text
        lock.unlock()
    }

    var log: String {
        lock.lock()
        defer { lock.unlock() }
        return output
    }

    /// SIGTERM, then the exit status once it has exited.
    @discardableResult
    func stop(signal: Int32 = SIGTERM) -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        errors.fileHandleForReading.readabilityHandler = nil
        return process.terminationStatus
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() } }
}

enum HubError: Error { case didNotStart(String) }

/// Result of running a command to its end.
struct CommandResult {
    var status: Int32
    var output: String
    var errors: String
}

/// Runs `executable` with `arguments` and waits (at most `timeout` seconds).
func run(_ executable: URL, _ arguments: [String], timeout: TimeInterval = 30,
         environment: [String: String]? = nil) throws -> CommandResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let environment { process.environment = environment }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let outData = Data.collect(out), errData = Data.collect(err)
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning && Date() < deadline { usleep(10_000) }
    if process.isRunning { process.terminate() }
    process.waitUntilExit()
    return CommandResult(status: process.terminationStatus,
                         output: String(decoding: outData.value, as: UTF8.self),
                         errors: String(decoding: errData.value, as: UTF8.self))
}

/// Runs `syncclient` with `arguments`.
func syncclient(_ arguments: [String], timeout: TimeInterval = 30) throws -> CommandResult {
    try run(Build.syncclient, arguments, timeout: timeout)
}

/// Reads a pipe to its end on a background thread.
final class PipeCollector: @unchecked Sendable {
    // Sendable: `data` is written by one thread and read after `done`.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)
    init(_ pipe: Pipe) {
        Thread.detachNewThread { [self] in
            data = pipe.fileHandleForReading.readDataToEndOfFile()
            done.signal()
        }
    }
    var value: Data {
        done.wait()
        done.signal()
        return data
    }
}

extension Data {
    static func collect(_ pipe: Pipe) -> PipeCollector { PipeCollector(pipe) }
}

/// Parses one JSON object line.
func jsonObject(_ line: String) -> [String: Any]? {
    try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
}

/// Polls `condition` until true or `timeout`; returns whether it became true.
func eventually(timeout: TimeInterval = 10, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        usleep(50_000)
    }
    return try condition()
}
