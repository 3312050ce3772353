import BoardCRDT
import Foundation
import SyncWire

/// The embedded store (SQLite in WAL mode, `synchronous=FULL`): each board's
/// checkpoint and version, and its operations after the checkpoint. A record
/// is acknowledged only after the transaction holding it has committed.
final class BoardStore {
    private let database: SQLiteDatabase
    /// The database file.
    let path: String
    private let insertOperation: SQLiteDatabase.Statement
    private let upsertBoard: SQLiteDatabase.Statement
    private let updateVersion: SQLiteDatabase.Statement
    private let deleteFolded: SQLiteDatabase.Statement
    private let selectBoard: SQLiteDatabase.Statement
    private let selectOperations: SQLiteDatabase.Statement
    private let countBoards: SQLiteDatabase.Statement
    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()

    /// Opens (creating if needed) `directory/boards.sqlite`. `fsyncEachCommit`
    /// false uses `synchronous=NORMAL`: a commit survives the hub's crash
    /// (kill -9) but not the machine's (power loss); see docs/OPERATIONS.md.
    /// `checkpointsItself` false leaves folding the log into the database
    /// file to a `WALCheckpointer` (the hub's committing connection).
    init(directory: String, fsyncEachCommit: Bool = true, checkpointsItself: Bool = true) throws {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError(description: "cannot create the data directory \(directory): \(error.localizedDescription)")
        }
        path = directory + "/boards.sqlite"
        database = try SQLiteDatabase(path: path)
        try database.execute("""
            PRAGMA journal_mode=WAL;
            PRAGMA synchronous=\(fsyncEachCommit ? "FULL" : "NORMAL");
            PRAGMA wal_autocheckpoint=\(checkpointsItself ? 1000 : 0);
            CREATE TABLE IF NOT EXISTS boards(
                name TEXT PRIMARY KEY, version INTEGER NOT NULL, checkpoint TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS operations(
                board TEXT NOT NULL, replica INTEGER NOT NULL, seq INTEGER NOT NULL,
                lamport INTEGER NOT NULL, body TEXT NOT NULL,
                PRIMARY KEY(board, replica, seq)) WITHOUT ROWID;
            """)
        insertOperation = try database.prepare(
            "INSERT OR IGNORE INTO operations(board, replica, seq, lamport, body) VALUES(?, ?, ?, ?, ?)")
        upsertBoard = try database.prepare("""
            INSERT INTO boards(name, version, checkpoint) VALUES(?, ?, ?)
            ON CONFLICT(name) DO UPDATE SET version = excluded.version, checkpoint = excluded.checkpoint
            """)
        updateVersion = try database.prepare("""
            INSERT INTO boards(name, version, checkpoint) VALUES(?, ?, ?)
            ON CONFLICT(name) DO UPDATE SET version = excluded.version
            """)
        deleteFolded = try database.prepare(
            "DELETE FROM operations WHERE board = ? AND (lamport < ? OR (lamport = ? AND replica <= ?))")
        selectBoard = try database.prepare("SELECT version, checkpoint FROM boards WHERE name = ?")
        selectOperations = try database.prepare("SELECT body FROM operations WHERE board = ? ORDER BY lamport, replica")
        countBoards = try database.prepare("SELECT count(*) FROM boards")
    }

    /// Writes `records` in one transaction (group commit): one fsync for all.
    func commit(_ records: [DurableRecord]) throws {
        try database.execute("BEGIN IMMEDIATE")
        do {
            var versions: [String: UInt64] = [:]
            for record in records {
                for operation in record.operations {
                    try insertOperation.run([
                        .text(record.board), .integer(Int64(bitPattern: operation.id.replica.rawValue)),
                        .integer(Int64(bitPattern: operation.id.seq)), .integer(Int64(bitPattern: operation.lamport)),
                        .text(operation.jsonText),
                    ])
                }
                if let checkpoint = record.checkpoint {
                    try upsertBoard.run([.text(record.board), .integer(Int64(record.version)), .text(try encode(checkpoint))])
                    let frontier = checkpoint.frontier
                    try deleteFolded.run([
                        .text(record.board), .integer(Int64(bitPattern: frontier.lamport)),
                        .integer(Int64(bitPattern: frontier.lamport)), .integer(Int64(bitPattern: frontier.replica.rawValue)),
                    ])
                }
                versions[record.board] = max(versions[record.board] ?? 0, record.version)
            }
            let empty = try encode(Checkpoint<LetterBoard>.empty)
            for (board, version) in versions {
                try updateVersion.run([.text(board), .integer(Int64(version)), .text(empty)])
            }
            try database.execute("COMMIT")
        } catch {
            try? database.execute("ROLLBACK")
            throw error
        }
    }

    /// The board as stored, or nil for a board never seen.
    func load(board: String) throws -> StoredBoard? {
        let boards = try selectBoard.rows([.text(board)]) { row in (row.integer(0), row.text(1)) }
        guard let (version, checkpointText) = boards.first else { return nil }
        let checkpoint = try decoder.decode(Checkpoint<LetterBoard>.self, from: Data(checkpointText.utf8))
        let operations = try selectOperations.rows([.text(board)]) { row in
            try decoder.decode(BoardOperation.self, from: Data(row.text(0).utf8))
        }
        return StoredBoard(version: UInt64(version), checkpoint: checkpoint, operations: operations)
    }

    func boardCount() throws -> Int {
        Int(try countBoards.rows { $0.integer(0) }.first ?? 0)
    }

    private func encode(_ value: some Encodable) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
