import Foundation
import Glibc
import Histogram
import Synchronization
import WebSocketLoop

/// `syncclient bench --connect-only`: opens and closes connections as fast
/// as the hub takes them, a few in flight at a time per thread, and reports
/// connections a second and the time to an open WebSocket (upgrade, TLS and
/// token check included) and to the board's first `state`. Run it with and
/// without `--token` (HS256 or EdDSA keys on the hub) or `wss://` to compare.
struct ConnectBench {
    let plan: BenchPlan
    /// Connections to make in all.
    let connections: Int
    /// Connections in flight at once, per thread.
    let concurrency: Int
    let progress: Bool

    func run() -> ConnectReport {
        let workers = (0..<plan.threads).map { index in
            ConnectWorker(plan: plan, count: connections / plan.threads + (index < connections % plan.threads ? 1 : 0),
                          concurrency: concurrency, index: index)
        }
        let started = workers.filter { $0.start() }
        if started.count < workers.count {
            FileHandle.standardError.write(Data("bench: could not start a network loop\n".utf8))
        }
        let begin = BenchClock.now()
        // Signalled once per loop when its `run` returns.
        let loopsEnded = DispatchSemaphore(value: 0)
        let threads = started.map { worker in
            let thread = Thread {
                worker.client.run()
                loopsEnded.signal()
            }
            thread.name = "connect-\(worker.index)"
            thread.start()
            return thread
        }
        _ = threads
        for worker in started { worker.client.post { worker.begin() } }
        let deadline = begin + UInt64((Double(connections) / 10 + 60) * 1e9)
        while BenchClock.now() < deadline, started.contains(where: { !$0.isDone.load(ordering: .acquiring) }) {
            if progress {
                let done = started.reduce(0) { $0 + $1.finished.load(ordering: .relaxed) }
                FileHandle.standardError.write(Data("\r\u{1B}[Kconnections \(done)/\(connections)".utf8))
            }
            usleep(20_000)
        }
        let seconds = Double(BenchClock.now() - begin) / 1e9
        if progress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        for worker in started { worker.client.stop() }
        // The workers' figures are their loops' until those have ended.
        let ended = started.allSatisfy { _ in loopsEnded.wait(timeout: .now() + 30) == .success }
        if !ended {
            FileHandle.standardError.write(Data("bench: a network loop did not end within 30 s; its figures may be incomplete\n".utf8))
        }
        var upgrade = Histogram<UInt64>(highestTrackableValue: 120_000_000_000)
        var firstState = Histogram<UInt64>(highestTrackableValue: 120_000_000_000)
        for worker in started {
            upgrade.add(worker.upgrade)
            firstState.add(worker.firstState)
        }
        let succeeded = Int(firstState.totalCount)
        return ConnectReport(
            hub: plan.hubs.map(\.description).joined(separator: " "), connections: connections, succeeded: succeeded,
            failed: started.reduce(0) { $0 + $1.failed }
                + workers.filter { worker in !started.contains { $0 === worker } }.reduce(0) { $0 + $1.count },
            firstFailure: started.compactMap(\.firstFailure).first, seconds: seconds,
            connectionsPerSecond: seconds > 0 ? Double(succeeded) / seconds : 0, concurrency: concurrency * started.count,
            token: plan.access.token != nil || !plan.tokens.isEmpty, tls: plan.hub.isSecure,
            reader: plan.hub.isSecure ? .libwebsockets : plan.reader,
            upgradeMillis: .init(upgrade), firstStateMillis: .init(firstState))
    }
}

/// The figures of `bench --connect-only`.
struct ConnectReport: Codable {
    var mode = "connect-only"
    var hub: String
    var connections: Int
    var succeeded: Int
    var failed: Int
    /// Why the first failed connection failed (e.g. "not allowed: token expired (401)").
    var firstFailure: String?
    var seconds: Double
    var connectionsPerSecond: Double
    /// Connections in flight at once, over all threads.
    var concurrency: Int
    var token: Bool
    var tls: Bool
    /// How the connections were made and read (`--reader`; `wss://` is always
    /// libwebsockets): compare TLS with plain under `--reader libwebsockets`.
    /// Nil in reports older than the option.
    var reader: BenchReader?
    /// Start to open WebSocket (TCP, TLS, upgrade with the token check).
    var upgradeMillis: BenchReport.Percentiles
    /// Start to the board's first `state` frame.
    var firstStateMillis: BenchReport.Percentiles

    func text() -> String {
        func line(_ name: String, _ p: BenchReport.Percentiles) -> String {
            "\(name): p50 \(p.p50) ms  p90 \(p.p90) ms  p99 \(p.p99) ms  max \(p.max) ms"
        }
        var lines = [
            "connect-only against \(hub) (\(tls ? "TLS" : "no TLS"), \(token ? "with token" : "no token"), " +
            "\(concurrency) in flight\(reader.map { ", \($0.rawValue) reader" } ?? ""))",
            "connections: \(succeeded) of \(connections) in \(String(format: "%.2f", seconds)) s = " +
            "\(String(format: "%.0f", connectionsPerSecond))/s, \(failed) failed",
            line("open WebSocket", upgradeMillis),
            line("first state   ", firstStateMillis),
        ]
        if let firstFailure { lines.append("first failure: \(firstFailure)") }
        return lines.joined(separator: "\n")
    }
}

/// One thread of `--connect-only`: keeps `concurrency` connections in
/// flight; each is closed as soon as its first `state` arrives.
final class ConnectWorker: ClientDelegate, @unchecked Sendable {
    // Sendable: atomics shared; the rest confined to `client`'s loop thread (checked by `client.owner`, debug builds)
    // until `run` reads it after the loop.
    let index: Int
    let plan: BenchPlan
    let client: WebSocketClient
    let finished = Atomic<Int>(0)
    let isDone = Atomic<Bool>(false)
    let count: Int
    private let concurrency: Int
    private var started = 0
    /// Connections to open at the end of this turn (not from inside an lws callback).
    private var wanted = 0
    private var starts: [UInt64: UInt64] = [:]
    private var stated: Set<UInt64> = []
    private(set) var upgrade = Histogram<UInt64>(highestTrackableValue: 120_000_000_000)
    private(set) var firstState = Histogram<UInt64>(highestTrackableValue: 120_000_000_000)
    private(set) var failed = 0
    private(set) var firstFailure: String?

    init(plan: BenchPlan, count: Int, concurrency: Int, index: Int) {
        self.plan = plan
        self.count = count
        self.concurrency = concurrency
        self.index = index
        client = WebSocketClient(fdLimit: UInt32(concurrency + 1024), tickMicros: 10_000, tls: plan.access.tls,
                                 reader: plan.reader.clientReader)
    }

    func start() -> Bool {
        client.delegate = self
        return client.start()
    }

    func begin() {
        client.owner.check()
        if count == 0 { isDone.store(true, ordering: .releasing) }
        wanted = min(count, concurrency)
    }

    private func openNext() {
        guard started < count else { return }
        // Connection i (over all threads) goes to board i mod boards, hub i mod hubs.
        let number = index + started * plan.threads
        let board = number % plan.boardNames.count
        started += 1
        let now = BenchClock.now()
        let token = plan.tokens.isEmpty ? plan.access.token : plan.tokens[number % plan.tokens.count]
        let connection = client.connect(to: plan.url(board: board, hub: number % plan.hubCount), bearerToken: token)
        if !connection.isFinished { starts[connection.id] = now }
    }

    func connected(_ connection: ClientConnection) {
        client.owner.check()
        guard let start = starts[connection.id] else { return }
        _ = upgrade.record(max(1, BenchClock.now() - start))
    }

    func received(_ connection: ClientConnection, message: UnsafeRawBufferPointer, isText: Bool) {
        client.owner.check()
        guard let start = starts[connection.id], !stated.contains(connection.id),
              let frame = BenchFrame(message, readsOrder: false), frame.kind == .state else { return }
        _ = firstState.record(max(1, BenchClock.now() - start))
        stated.insert(connection.id)
        client.close(connection)
    }

    func disconnected(_ connection: ClientConnection, reason: String) {
        client.owner.check()
        starts[connection.id] = nil
        if stated.remove(connection.id) == nil {
            failed += 1
            if firstFailure == nil { firstFailure = AccessDenial.of(connection)?.message ?? reason }
        }
        finished.add(1, ordering: .relaxed)
        if finished.load(ordering: .relaxed) >= count {
            isDone.store(true, ordering: .releasing)
        } else {
            wanted += 1
        }
    }

    func serviceLoopDidRun() {
        client.owner.check()
        while wanted > 0 {
            wanted -= 1
            openNext()
        }
    }
}
