import BoardCRDT
import Foundation
import Logging
import Synchronization
import WebSocketLoop
@testable import SyncHub

/// A hub's core on a real store, driven as the shell drives it but with no
/// socket: the core's store actions go to the `BoardLog`, its answers come
/// back as events (each batch followed by the end of a turn, as posted work
/// is), and what the core says to connections is kept for the test to read.
final class StoreDrivenHub {
    var core: HubCore
    let log: BoardLog
    private let inbox = AnswerInbox()
    /// What the core said to connections and HTTP requests, in order.
    private(set) var said: [HubAction] = []

    init(core: HubCore, log: BoardLog) {
        self.core = core
        self.log = log
        let inbox = inbox
        log.start { inbox.put($0) }
    }

    func stop() { _ = log.stop() }

    func handle(_ event: HubEvent) {
        for action in core.handle(event, at: HubClock(nanos: WebSocketServer.nowNanos(), wall: Date())) {
            if case let .store(request) = action { log.carry(request) } else { said.append(action) }
        }
    }

    func join(_ connection: UInt64, _ board: String) {
        handle(.upgraded(connection: connection, board: BoardAddress(key: board)))
        handle(.turnEnded)
    }

    func send(_ connection: UInt64, _ text: String) {
        var text = text
        text.withUTF8 { handle(.frame(connection: connection, UnsafeRawBufferPointer($0))) }
        handle(.turnEnded)
    }

    /// Feeds the store's answers in (and ticks) until `done` holds; false
    /// when `seconds` pass first.
    @discardableResult
    func wait(seconds: Double = 10, until done: (StoreDrivenHub) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !done(self) {
            guard Date() < deadline else { return false }
            for answer in inbox.take(waiting: 0.05) {
                if case let .loaded(ticket, _, result) = answer, ticket >= Self.rawTickets {
                    rawAnswers[ticket] = (try? result.get()) ?? nil
                } else {
                    handle(.store(answer))
                }
            }
            handle(.turnEnded)
            handle(.tick)
        }
        return true
    }

    /// Loads the test asks of the store itself (`rawLoad`), apart from the core's.
    private static let rawTickets: UInt64 = 1 << 60
    private var rawTicket = rawTickets
    private var rawPending: UInt64?
    private var rawAnswers: [UInt64: StoredBoard?] = [:]

    /// The board as the store answers a load now, read by the test, not
    /// the core: nil until the answer came (call it again from `wait`).
    func rawLoad(_ board: String) -> StoredBoard? {
        guard let pending = rawPending else {
            rawTicket += 1
            rawPending = rawTicket
            log.carry(.load(ticket: rawTicket, board: BoardAddress(key: board), after: 0, deadline: .max))
            return nil
        }
        guard let answer = rawAnswers.removeValue(forKey: pending) else { return nil }
        rawPending = nil
        return answer
    }

    /// Store answers the core does not take (images), kept apart.
    var images: [StoreAnswer] { inbox.images.withLock { $0 } }

    /// The frames sent to `connection` so far, as JSON.
    func frames(to connection: UInt64) -> [[String: Any]] {
        HubCoreHarness.frames(said, to: connection)
    }

    /// The answers (`ack`, `rejected`) with `ref`.
    func answer(_ ref: String, to connection: UInt64) -> [String: Any]? {
        frames(to: connection).first { $0["ref"] as? String == ref }
    }

    func closes(of connection: UInt64) -> [UInt16] {
        said.compactMap { if case let .close(id, code, _) = $0, id == connection { code } else { nil } }
    }

    /// The board's durable state frame as the core would publish it.
    func state(_ board: String) -> [String: Any]? {
        guard let frame = core.boards[board]?.stateShape().json else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(frame.utf8)) as? [String: Any]
    }
}

/// Store answers handed over by the store's threads.
final class AnswerInbox: Sendable {
    private let answers = Mutex<[StoreAnswer]>([])
    let images = Mutex<[StoreAnswer]>([])

    func put(_ new: [StoreAnswer]) {
        for answer in new {
            switch answer {
            case .imageRead, .imageStored: images.withLock { $0.append(answer) }
            default: answers.withLock { $0.append(answer) }
            }
        }
    }

    /// What arrived, waiting up to `seconds` for something.
    func take(waiting seconds: Double) -> [StoreAnswer] {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let taken = answers.withLock { current in
                defer { current = [] }
                return current
            }
            if !taken.isEmpty || Date() >= deadline { return taken }
            usleep(2_000)
        }
    }
}

/// A real `redis-server` of the test's own, on a port of its own, with no
/// persistence; stopped by `stop()`.
final class RedisProcess {
    let port: Int
    private let process: Process
    private let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("synchub-redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Below the ephemeral range (an outgoing connection never takes
        // one); a port in use makes redis-server exit, and another is tried.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<40 {
            let port = Int.random(in: 12_000..<30_000, using: &generator)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-server")
            process.arguments = ["--port", String(port), "--bind", "127.0.0.1", "--dir", directory.path, "--save", "",
                                 "--appendonly", "no", "--loglevel", "warning"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning, Date() < deadline {
                if Self.answers(port: port) {
                    self.port = port
                    self.process = process
                    return
                }
                usleep(10_000)
            }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        throw StoreError(description: "could not start redis-server on a free port")
    }

    var url: String { "redis://127.0.0.1:\(port)/0" }

    static func answers(port: Int) -> Bool {
        guard let address = try? RedisServerAddress.parse("redis://127.0.0.1:\(port)/0") else { return false }
        let connection = RedisConnection(server: address, timeoutMilliseconds: 200)
        defer { connection.close() }
        guard (try? connection.connect(name: "probe")) != nil else { return false }
        return (try? connection.command(["PING"]))?.text == "PONG"
    }

    /// SIGSTOP / SIGCONT: a server that stops answering, and comes back.
    func pause() { kill(process.processIdentifier, SIGSTOP) }
    func resume() { kill(process.processIdentifier, SIGCONT) }

    /// SIGKILL: the server inherits the test process's blocked signals
    /// (Swift's threads block SIGTERM), so it would not hear a SIGTERM.
    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}
