import BoardCRDT
import Foundation
import Synchronization
import Testing
@testable import SyncHub

/// The store writer after a failed commit: nothing more is committed or
/// acknowledged, and the failure is reported once.
struct GroupCommitWriterTests {
    /// The `boards` table is renamed away through a second connection, so the
    /// next commit fails; records submitted after the failure find the table
    /// back. Before the fix the writer went on: it reported a second failure
    /// or committed those records and handed them to `onCommitted` (so the
    /// hub acknowledged them) until the stop arrived.
    @Test func nothingIsAcknowledgedAfterAFailedCommit() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("writer-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try BoardStore(directory: directory, checkpointsItself: false)
        let saboteur = try SQLiteDatabase(path: store.path)
        let writer = GroupCommitWriter(store: store)
        let seen = WriterReports()
        writer.onCommitted = { records in seen.committed.withLock { $0 += records.map(\.version) } }
        writer.onFailure = { error in seen.failures.withLock { $0.append(error.description) } }
        writer.start()

        writer.submit([record(version: 1)])
        #expect(eventually { seen.committed.withLock { $0 } == [1] })

        try saboteur.execute("ALTER TABLE boards RENAME TO boards_away")
        writer.submit([record(version: 2)])
        #expect(eventually { seen.failures.withLock { $0.count } == 1 })

        writer.submit([record(version: 3)])
        try saboteur.execute("ALTER TABLE boards_away RENAME TO boards")
        writer.submit([record(version: 4), record(version: 5)])
        writer.stopAndFlush()

        #expect(seen.committed.withLock { $0 } == [1])
        #expect(seen.failures.withLock { $0.count } == 1)
        #expect(seen.failures.withLock { $0.first?.contains("boards") ?? false })
        #expect(writer.failed != nil)
        #expect(try store.load(board: "k")?.version == 1)
    }

    @Test func commitsEverythingQueuedWhenStopped() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("writer-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try BoardStore(directory: directory)
        let writer = GroupCommitWriter(store: store)
        let seen = WriterReports()
        writer.onCommitted = { records in seen.committed.withLock { $0 += records.map(\.version) } }
        writer.onFailure = { error in seen.failures.withLock { $0.append(error.description) } }
        writer.start()
        for version in 1...50 { writer.submit([record(version: UInt64(version))]) }
        writer.stopAndFlush()
        #expect(seen.committed.withLock { $0 } == Array(1...50))
        #expect(seen.failures.withLock { $0 }.isEmpty)
        #expect(writer.failed == nil)
        #expect(try store.load(board: "k")?.version == 50)
    }

    private func record(version: UInt64) -> DurableRecord {
        DurableRecord(board: "k", kind: "letters", hubReplica: ReplicaID(1), operations: [], version: version, replies: [], author: nil,
                      checkpoint: nil, keyed: nil)
    }
}

/// What the writer handed back, from its thread.
private final class WriterReports: Sendable {
    let committed = Mutex<[UInt64]>([])
    let failures = Mutex<[String]>([])
}
