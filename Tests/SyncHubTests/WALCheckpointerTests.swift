import BoardCRDT
import Foundation
import Synchronization
import Testing
@testable import SyncHub

/// The write-ahead-log checkpointer reports failed checkpoints and is done
/// with its connection when `stop()` returns.
struct WALCheckpointerTests {
    /// A file that is not a database fails every checkpoint: the periodic
    /// ones and the last one `stop()` runs report one failure between them.
    /// Before the fix the error was dropped (`try?`): nothing was reported.
    @Test func aFailingCheckpointIsReportedOnceWhileItLasts() throws {
        let path = try notADatabase()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let checkpointer = try WALCheckpointer(path: path, interval: 0.01)
        let failures = Reports()
        checkpointer.onFailure = { error in failures.add(error.description) }
        checkpointer.start()
        #expect(eventually { failures.all.count >= 1 })
        checkpointer.stop()
        let reported = failures.all
        #expect(reported.count == 1)
        #expect(reported.first?.contains("not a database") ?? false)
    }

    /// With a long interval the only checkpoint is the last one, run by
    /// `stop()`. Before the fix `stop()` only signalled the thread and
    /// returned at once, so the last checkpoint (and the thread's use of the
    /// database) came after it: its report was not there yet when it returned.
    @Test func stopReturnsAfterTheLastCheckpoint() throws {
        let path = try notADatabase()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let checkpointer = try WALCheckpointer(path: path, interval: 3600)
        let failures = Reports()
        checkpointer.onFailure = { error in failures.add(error.description) }
        checkpointer.start()
        checkpointer.stop()
        #expect(failures.all.count == 1)
    }

    /// A live store being written while it is checkpointed: no failure, and
    /// the log's content reaches the database file.
    @Test func checkpointsALiveStoreWithoutFailures() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wal-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try BoardStore(directory: directory, checkpointsItself: false)
        let checkpointer = try WALCheckpointer(path: store.path, interval: 0.005)
        let failures = Reports()
        checkpointer.onFailure = { error in failures.add(error.description) }
        checkpointer.start()
        for version in 1...200 {
            try store.commit([DurableRecord(board: "b\(version % 7)", kind: "letters", hubReplica: ReplicaID(1), operations: [],
                                            version: UInt64(version), replies: [], author: nil, checkpoint: nil, keyed: nil)])
        }
        checkpointer.stop()
        #expect(failures.all.isEmpty)
        #expect(try BoardStore(directory: directory).boardCount() == 7)
    }

    @Test func stopWithoutStartReturns() throws {
        let path = try notADatabase()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try WALCheckpointer(path: path).stop()
    }

    private func notADatabase() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("not-a-store-\(UUID().uuidString)").path
        try Data(String(repeating: "this is not a SQLite database\n", count: 64).utf8).write(to: URL(fileURLWithPath: path))
        return path
    }
}

/// What a thread of the shell reports (the checkpointer's failures, the
/// fold encoder's snapshots), read by the test's thread.
final class Reports: Sendable {
    private let reports = Mutex<[String]>([])
    func add(_ report: String) { reports.withLock { $0.append(report) } }
    var all: [String] { reports.withLock { $0 } }
}
