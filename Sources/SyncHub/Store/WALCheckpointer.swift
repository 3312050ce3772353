import Foundation
import WebSocketLoop

/// Folds the SQLite write-ahead log back into the database file on its own
/// thread and connection, once a second. The committing connection runs with
/// `wal_autocheckpoint=0`, so a checkpoint (which writes and fsyncs the main
/// file) never stalls a group commit, and with it every ack behind it.
///
/// A checkpoint that fails is reported through `onFailure` when the failure
/// begins, not every second while it lasts (the log only grows meanwhile;
/// nothing committed is lost). A busy log is not a failure.
final class WALCheckpointer: @unchecked Sendable {
    // Sendable: `database` and `lastFailure` are confined to its thread, checked by `owner` (debug builds); the rest is guarded
    // by `condition`.
    private let database: SQLiteDatabase
    /// The checkpointer's thread, while it runs: the only one that uses `database`.
    let owner = ThreadOwner("store-checkpoint")
    private let condition = NSCondition()
    private var started = false
    private var stopped = false
    private var finished = false
    private var lastFailure: String?
    private let interval: TimeInterval
    private var failureHandler: @Sendable (StoreError) -> Void = { _ in }
    /// Set before `start()`: called on the checkpointer's thread when checkpoints start failing.
    var onFailure: @Sendable (StoreError) -> Void {
        get { condition.lock(); defer { condition.unlock() }; return failureHandler }
        set { condition.lock(); failureHandler = newValue; condition.unlock() }
    }

    init(path: String, interval: TimeInterval = 1) throws {
        database = try SQLiteDatabase(path: path)
        self.interval = interval
    }

    func start() {
        condition.lock()
        started = true
        condition.unlock()
        let thread = Thread { [self] in run() }
        thread.name = "store-checkpoint"
        thread.start()
    }

    /// Runs a last checkpoint and returns once the thread has finished, so
    /// the database is not touched after this returns.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while started && !finished { condition.wait() }
        condition.unlock()
    }

    private func run() {
        owner.claim()
        while true {
            condition.lock()
            if !stopped { _ = condition.wait(until: Date().addingTimeInterval(interval)) }
            let done = stopped
            condition.unlock()
            checkpoint()
            if done { break }
        }
        owner.release()
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    private func checkpoint() {
        owner.check()
        do {
            // PASSIVE: copies what it can without blocking the writer; a busy log is tried again next time.
            _ = try database.checkpointPassively()
            lastFailure = nil
        } catch {
            let failure = error as? StoreError ?? StoreError(description: "store: \(error)")
            guard failure.description != lastFailure else { return }
            lastFailure = failure.description
            onFailure(failure)
        }
    }
}
