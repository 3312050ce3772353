import Foundation

/// Folds the SQLite write-ahead log back into the database file on its own
/// thread and connection, once a second. The committing connection runs with
/// `wal_autocheckpoint=0`, so a checkpoint (which writes and fsyncs the main
/// file) never stalls a group commit, and with it every ack behind it.
final class WALCheckpointer: @unchecked Sendable {
    // Sendable: `database` is used only on the checkpointer's thread; `stopped` is guarded by `condition`.
    private let database: SQLiteDatabase
    private let condition = NSCondition()
    private var stopped = false
    private let interval: TimeInterval

    init(path: String, interval: TimeInterval = 1) throws {
        database = try SQLiteDatabase(path: path)
        self.interval = interval
    }

    func start() {
        let thread = Thread { [self] in
            while true {
                condition.lock()
                if !stopped { _ = condition.wait(until: Date().addingTimeInterval(interval)) }
                let done = stopped
                condition.unlock()
                // PASSIVE: copies what it can without blocking the writer.
                try? database.execute("PRAGMA wal_checkpoint(PASSIVE)")
                if done { break }
            }
        }
        thread.name = "store-checkpoint"
        thread.start()
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }
}
