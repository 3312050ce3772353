import Foundation
import WebSocketLoop

/// Where a hub keeps its boards: the embedded SQLite file (`EmbeddedBoardLog`)
/// or every board's shared log in Redis (`SharedLog`). The shell hands it
/// the core's store actions (`StoreRequest`) and the core gets its answers
/// back as events (`StoreAnswer`); it never knows which store it has.
///
/// Every call returns at once: the work runs on the store's own threads,
/// one queue per thing that can stall (the SQLite file; each Redis server),
/// so a store that stops answering delays only the boards it holds (R16).
/// The conformance suite (Tests/SyncHubTests/Store/BoardLogConformanceTests)
/// runs the same tests against both.
protocol BoardLog: AnyObject, Sendable {
    /// Starts the store's threads; every answer is handed to `deliver`, on
    /// one of them, in the order the store made it.
    func start(deliver: @escaping @Sendable ([StoreAnswer]) -> Void)
    /// Takes one request; its answer (if it has one) comes through `deliver`.
    func carry(_ request: StoreRequest)
    /// Whether the store holding `board` is answering now (R8: a board
    /// whose store is down takes nobody new).
    func isUp(_ board: BoardAddress) -> Bool
    /// Nil while every part of the store answers, else what is wrong (/healthz).
    var problem: String? { get }
    /// The store's own lines for /metrics (`counters`: the core's).
    func metricsText(counters: HubCounters) -> String
    /// Writes what is queued, then stops the threads. Returns the failure
    /// that ended the store, if one did (nothing after it was acknowledged).
    func stop() -> StoreError?
    /// The console's `redis` of this hub (O2), or nil for a store that is not Redis.
    var adminRedisJSON: String? { get }
    /// O6: the revocations the store held when the hub started.
    var revocationsAtStart: [Revocations.Entry] { get }
    /// O9: the audit the store held when the hub started (at most the last 10,000).
    var auditAtStart: [AuditEntry] { get }
    /// O2-O4: what the hubs of a cluster tell each other for the console (nil: one hub).
    var clusterConsole: ClusterConsole? { get }
}

extension BoardLog {
    var adminRedisJSON: String? { nil }
    var revocationsAtStart: [Revocations.Entry] { [] }
    var auditAtStart: [AuditEntry] { [] }
    var clusterConsole: ClusterConsole? { nil }
}

/// One thread that runs a store's jobs in order, each on `Resource` (a
/// database connection, a Redis connection), which no other thread touches.
final class StoreWorker<Resource>: @unchecked Sendable {
    // Sendable: `jobs`, `stopping` and `finished` are guarded by `condition`;
    // `resource` is used only on the worker's thread (`owner.check()`).
    private let condition = NSCondition()
    private var jobs: [@Sendable (Resource) -> Void] = []
    private var stopping = false
    private var finished = false
    private var started = false
    private var resource: Resource
    private let owner: ThreadOwner
    private let name: String
    /// Jobs waiting at most; past it `submit` refuses (the store is stalled
    /// and nothing more should wait in memory).
    let maxQueued: Int

    /// `resource` is handed over: the caller keeps no reference it uses.
    init(name: String, resource: Resource, maxQueued: Int = 10_000) {
        self.name = name
        self.resource = resource
        self.maxQueued = maxQueued
        owner = ThreadOwner(name)
    }

    func start() {
        condition.lock()
        started = true
        condition.unlock()
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    /// Queues `job`; false (and nothing queued) when the worker is stopping
    /// or `maxQueued` jobs wait already.
    @discardableResult
    func submit(_ job: @escaping @Sendable (Resource) -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping, jobs.count < maxQueued else { return false }
        jobs.append(job)
        condition.signal()
        return true
    }

    /// Runs what is queued, then returns once the thread has ended.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while started && !finished { condition.wait() }
        condition.unlock()
    }

    private func run() {
        owner.claim()
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            let batch = jobs
            jobs.removeAll()
            let done = batch.isEmpty && stopping
            condition.unlock()
            if done { break }
            for job in batch {
                owner.check()
                job(resource)
            }
        }
        owner.release()
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }
}
