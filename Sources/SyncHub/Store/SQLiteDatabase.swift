import CSQLite
import Foundation

/// Why the store failed; the hub logs it and stops rather than ack what it could not keep.
struct StoreError: Error, CustomStringConvertible {
    var description: String
}

/// A SQLite connection and its prepared statements. It has no lock, and
/// SQLite's own is off (`SQLITE_OPEN_NOMUTEX`): each connection is confined
/// to one thread. The hub opens four, all on the thread that creates the
/// hub (its libwebsockets service thread): the reader `BoardStore`, used only
/// there (board loads, idempotency-key lookups, shop image reads); the image
/// store's (shop image bytes written before their name, P4), used only there
/// and never checkpointing; the writer's
/// `BoardStore`, used after `start()` only on `GroupCommitWriter`'s thread;
/// and `WALCheckpointer`'s, used after `start()` only on its own thread.
/// They share the file through SQLite's WAL file locking (busy timeout 5 s),
/// never through memory.
final class SQLiteDatabase {
    private var handle: OpaquePointer?

    init(path: String) throws {
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        guard sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            throw StoreError(description: "cannot open the store at \(path): \(message)")
        }
        sqlite3_busy_timeout(handle, 5000)
    }

    deinit { sqlite3_close_v2(handle) }

    func execute(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(handle, sql, nil, nil, &error) != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(error)
            throw StoreError(description: "store: \(message) in \(sql.prefix(60))")
        }
    }

    func prepare(_ sql: String) throws -> Statement {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK, let statement else {
            throw StoreError(description: "store: \(String(cString: sqlite3_errmsg(handle))) preparing \(sql.prefix(60))")
        }
        return Statement(statement, database: self)
    }

    fileprivate var lastError: String { String(cString: sqlite3_errmsg(handle)) }

    /// Copies what it can of the write-ahead log into the database file
    /// without waiting on readers or the writer (`PASSIVE`). Returns false
    /// when the log was busy (another connection checkpointing, or locks
    /// held): not a failure, the next checkpoint catches up. Throws for
    /// anything else, such as a file that is not a database.
    func checkpointPassively() throws -> Bool {
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        var result = sqlite3_prepare_v2(handle, "PRAGMA wal_checkpoint(PASSIVE)", -1, &statement, nil)
        if result == SQLITE_OK, let statement {
            result = sqlite3_step(statement)
            // The row's first column is 1 when the checkpoint was blocked.
            if result == SQLITE_ROW { return sqlite3_column_int(statement, 0) == 0 }
            if result == SQLITE_DONE { return true }
        }
        let primary = result & 0xff
        if primary == SQLITE_BUSY || primary == SQLITE_LOCKED { return false }
        throw StoreError(description: "store: checkpoint of the write-ahead log failed: \(lastError)")
    }

    /// A prepared statement, finalized with its owner.
    final class Statement {
        private let statement: OpaquePointer
        private unowned let database: SQLiteDatabase

        fileprivate init(_ statement: OpaquePointer, database: SQLiteDatabase) {
            self.statement = statement
            self.database = database
        }

        deinit { sqlite3_finalize(statement) }

        func bind(_ values: [Value]) throws {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
            for (index, value) in values.enumerated() {
                let slot = Int32(index + 1)
                let result: Int32
                switch value {
                case let .integer(number): result = sqlite3_bind_int64(statement, slot, number)
                case let .text(text): result = sqlite3_bind_text(statement, slot, text, -1, csqlite_transient())
                case let .blob(bytes):
                    result = bytes.withUnsafeBytes { raw in
                        sqlite3_bind_blob(statement, slot, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count),
                                          csqlite_transient())
                    }
                }
                guard result == SQLITE_OK else {
                    throw StoreError(description: "store: cannot bind parameter \(slot): \(database.lastError)")
                }
            }
        }

        /// Runs a statement that returns no rows.
        func run(_ values: [Value] = []) throws {
            try bind(values)
            let result = sqlite3_step(statement)
            guard result == SQLITE_DONE || result == SQLITE_ROW else {
                throw StoreError(description: "store: \(database.lastError)")
            }
        }

        /// Runs a query and reads each row with `row`.
        func rows<T>(_ values: [Value] = [], _ row: (Row) throws -> T) throws -> [T] {
            try bind(values)
            // Reset however it ends: a statement left mid-read would hold an
            // old read snapshot on this connection.
            defer { sqlite3_reset(statement) }
            var results: [T] = []
            while true {
                let step = sqlite3_step(statement)
                if step == SQLITE_DONE { break }
                guard step == SQLITE_ROW else { throw StoreError(description: "store: \(database.lastError)") }
                results.append(try row(Row(statement: statement)))
            }
            return results
        }
    }

    enum Value {
        case integer(Int64)
        case text(String)
        case blob([UInt8])
    }

    struct Row {
        let statement: OpaquePointer
        func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
        func text(_ column: Int32) -> String {
            guard let pointer = sqlite3_column_text(statement, column) else { return "" }
            return String(cString: pointer)
        }
        func blob(_ column: Int32) -> [UInt8] {
            let count = Int(sqlite3_column_bytes(statement, column))
            guard count > 0, let pointer = sqlite3_column_blob(statement, column) else { return [] }
            return Array(UnsafeRawBufferPointer(start: pointer, count: count))
        }
    }
}
