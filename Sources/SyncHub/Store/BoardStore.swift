import BoardCRDT
import CSQLite
import Foundation
import SyncWire

/// The embedded store (SQLite in WAL mode, `synchronous=FULL`): each board's
/// kind, checkpoint and version, and its operations after the checkpoint,
/// as the JSON its kind wrote (the store knows no kind's rules). A record
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
    private let setFrozen: SQLiteDatabase.Statement
    private let selectOperations: SQLiteDatabase.Statement
    private let countBoards: SQLiteDatabase.Statement
    private let setHubReplica: SQLiteDatabase.Statement
    private let insertKey: SQLiteDatabase.Statement
    private let selectKey: SQLiteDatabase.Statement
    private let anyKey: SQLiteDatabase.Statement
    private let purgeKeys: SQLiteDatabase.Statement
    private let insertImage: SQLiteDatabase.Statement
    private let selectImage: SQLiteDatabase.Statement
    /// Idempotency keys are kept at least this long (docs/PROTOCOL.md).
    static let keyRetentionSeconds: Int64 = 7 * 24 * 3600
    private var commitsSincePurge = 0

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
            CREATE TABLE IF NOT EXISTS intent_keys(
                board TEXT NOT NULL, key TEXT NOT NULL, answer TEXT NOT NULL, created INTEGER NOT NULL,
                PRIMARY KEY(board, key)) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS intent_keys_created ON intent_keys(created);
            CREATE TABLE IF NOT EXISTS images(
                digest TEXT PRIMARY KEY, type TEXT NOT NULL, bytes BLOB NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS revocations(
                field TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS audit(
                id INTEGER PRIMARY KEY, entry TEXT NOT NULL);
            """)
        // Stores written before boards kept their own replica id, or their kind.
        for (column, type) in [("hub_replica", "INTEGER"), ("kind", "TEXT NOT NULL DEFAULT 'letters'"),
                               ("frozen", "INTEGER NOT NULL DEFAULT 0")] {
            let columns = try database.prepare("SELECT count(*) FROM pragma_table_info('boards') WHERE name = ?")
            if try columns.rows([.text(column)], { $0.integer(0) }).first == 0 {
                try database.execute("ALTER TABLE boards ADD COLUMN \(column) \(type)")
            }
        }
        insertOperation = try database.prepare(
            "INSERT OR IGNORE INTO operations(board, replica, seq, lamport, body) VALUES(?, ?, ?, ?, ?)")
        upsertBoard = try database.prepare("""
            INSERT INTO boards(name, version, checkpoint, kind) VALUES(?, ?, ?, ?)
            ON CONFLICT(name) DO UPDATE SET version = excluded.version, checkpoint = excluded.checkpoint
            """)
        // A board's first row has no checkpoint yet: '' (loaded as none).
        updateVersion = try database.prepare("""
            INSERT INTO boards(name, version, checkpoint, kind) VALUES(?, ?, '', ?)
            ON CONFLICT(name) DO UPDATE SET version = excluded.version
            """)
        deleteFolded = try database.prepare(
            "DELETE FROM operations WHERE board = ? AND (lamport < ? OR (lamport = ? AND replica <= ?))")
        selectBoard = try database.prepare("SELECT version, checkpoint, hub_replica, frozen FROM boards WHERE name = ?")
        setFrozen = try database.prepare("UPDATE boards SET frozen = ? WHERE name = ?")
        setHubReplica = try database.prepare("UPDATE boards SET hub_replica = ? WHERE name = ? AND hub_replica IS NOT ?")
        insertKey = try database.prepare("INSERT OR IGNORE INTO intent_keys(board, key, answer, created) VALUES(?, ?, ?, ?)")
        selectKey = try database.prepare("SELECT answer FROM intent_keys WHERE board = ? AND key = ?")
        anyKey = try database.prepare("SELECT EXISTS(SELECT 1 FROM intent_keys WHERE board = ?)")
        purgeKeys = try database.prepare("DELETE FROM intent_keys WHERE created < ?")
        selectOperations = try database.prepare("SELECT body FROM operations WHERE board = ? ORDER BY lamport, replica")
        countBoards = try database.prepare("SELECT count(*) FROM boards")
        insertImage = try database.prepare("INSERT OR IGNORE INTO images(digest, type, bytes) VALUES(?, ?, ?)")
        selectImage = try database.prepare("SELECT type, bytes FROM images WHERE digest = ?")
    }

    /// A shop image's bytes by their SHA-256 (P4): stored before the name
    /// that refers to them is recorded, so a durable name always has its
    /// bytes; the same bytes twice are stored once.
    func putImage(digest: String, type: String, bytes: [UInt8]) throws {
        try insertImage.run([.text(digest), .text(type), .blob(bytes)])
    }

    /// O6: keeps a revocation (a later one of the same `sub` replaces an earlier).
    func revoke(_ entry: Revocations.Entry) throws {
        let (field, value) = Revocations.field(of: entry)
        try database.prepare("INSERT INTO revocations(field, value) VALUES(?, ?) "
                             + "ON CONFLICT(field) DO UPDATE SET value = max(value, excluded.value)").run([.text(field), .integer(value)])
    }

    /// O9: keeps an action of the console; the oldest beyond the last
    /// 10,000 go (a hundred at a time, not on every action).
    func keep(audit entry: AuditEntry) throws {
        let id = try database.prepare("INSERT INTO audit(entry) VALUES(?) RETURNING id")
            .rows([.text(entry.json)]) { $0.integer(0) }.first ?? 0
        if id % 100 == 0 { try database.prepare("DELETE FROM audit WHERE id <= ?").run([.integer(id - Int64(AuditTrail.kept))]) }
    }

    /// O9: the last 10,000 actions kept, oldest first.
    func audit() throws -> [AuditEntry] {
        try database.prepare("SELECT entry FROM (SELECT id, entry FROM audit ORDER BY id DESC LIMIT ?) ORDER BY id")
            .rows([.integer(Int64(AuditTrail.kept))]) { $0.text(0) }.compactMap { AuditEntry(json: $0) }
    }

    func revocations() throws -> [Revocations.Entry] {
        try database.prepare("SELECT field, value FROM revocations").rows { row in (row.text(0), row.integer(1)) }
            .compactMap { Revocations.entry(field: $0.0, value: $0.1) }
    }

    func image(digest: String) throws -> (type: String, bytes: [UInt8])? {
        try selectImage.rows([.text(digest)]) { ($0.text(0), $0.blob(1)) }.first
    }

    /// Writes `records` in one transaction (group commit): one fsync for all.
    func commit(_ records: [DurableRecord]) throws {
        try database.execute("BEGIN IMMEDIATE")
        do {
            var versions: [String: (version: UInt64, kind: String)] = [:]
            var hubReplicas: [String: ReplicaID] = [:]
            let now = Int64(Date().timeIntervalSince1970)
            for record in records {
                hubReplicas[record.board] = record.hubReplica
                if let keyed = record.keyed {
                    try insertKey.run([.text(record.board), .text(keyed.key), .text(KeyedAnswerText.encode(keyed.answer)), .integer(now)])
                }
                for operation in record.operations {
                    try insertOperation.run([
                        .text(record.board), .integer(Int64(bitPattern: operation.id.replica.rawValue)),
                        .integer(Int64(bitPattern: operation.id.seq)), .integer(Int64(bitPattern: operation.lamport)),
                        .text(operation.json),
                    ])
                }
                if let checkpoint = record.checkpoint {
                    try upsertBoard.run([.text(record.board), .integer(Int64(record.version)), .text(try checkpoint.encode()),
                                         .text(record.kind)])
                    let frontier = checkpoint.frontier
                    try deleteFolded.run([
                        .text(record.board), .integer(Int64(bitPattern: frontier.lamport)),
                        .integer(Int64(bitPattern: frontier.lamport)), .integer(Int64(bitPattern: frontier.replica.rawValue)),
                    ])
                }
                versions[record.board] = (max(versions[record.board]?.version ?? 0, record.version), record.kind)
            }
            for (board, entry) in versions {
                try updateVersion.run([.text(board), .integer(Int64(entry.version)), .text(entry.kind)])
            }
            // O7, after the version's upsert made the row.
            for record in records {
                if let frozen = record.frozen { try setFrozen.run([.integer(frozen ? 1 : 0), .text(record.board)]) }
            }
            for (board, replica) in hubReplicas {
                try setHubReplica.run([.integer(Int64(bitPattern: replica.rawValue)), .text(board),
                                       .integer(Int64(bitPattern: replica.rawValue))])
            }
            commitsSincePurge += 1
            if commitsSincePurge >= 10_000 {
                commitsSincePurge = 0
                try purgeKeys.run([.integer(now - Self.keyRetentionSeconds)])
            }
            try database.execute("COMMIT")
        } catch {
            do {
                try database.execute("ROLLBACK")
            } catch let rollback {
                // Both matter: the commit's error first, then why the
                // transaction could not even be undone.
                throw StoreError(description: "\(error); and the rollback failed too: \(rollback)")
            }
            throw error
        }
    }

    /// The board as stored, or nil for a board never seen.
    func load(board: String) throws -> StoredBoard? {
        let boards = try selectBoard.rows([.text(board)]) { row in (row.integer(0), row.text(1), row.optionalInteger(2), row.integer(3)) }
        guard let (version, checkpointText, hubReplica, frozen) = boards.first else { return nil }
        let operations = try selectOperations.rows([.text(board)]) { row in row.text(0) }
        let hasKeys = try anyKey.rows([.text(board)]) { $0.integer(0) }.first == 1
        return StoredBoard(version: UInt64(version), checkpoint: checkpointText.isEmpty ? nil : checkpointText, operations: operations,
                           hubReplica: hubReplica.map { ReplicaID(UInt64(bitPattern: $0)) }, hasKeys: hasKeys, frozen: frozen != 0)
    }

    /// The first answer to the keyed intent `key` on `board`, if the store has it.
    func answer(forKey key: String, board: String) throws -> KeyedAnswer? {
        guard let text = try selectKey.rows([.text(board), .text(key)], { $0.text(0) }).first else { return nil }
        guard let answer = KeyedAnswerText.decode(text) else {
            throw StoreError(description: "store: the answer kept for key \(key.prefix(64)) on board \(board) is unreadable")
        }
        return answer
    }

    /// How many boards are stored (the console's `stored`, O3).
    func boardCount() throws -> Int {
        Int(try countBoards.rows { $0.integer(0) }.first ?? 0)
    }
}

/// How a keyed intent's first answer is kept in the store: `ack <version>`
/// (`ack <version> <members>` when the kind adds fields) or
/// `rejected <code> <message>`.
enum KeyedAnswerText {
    static func encode(_ answer: KeyedAnswer) -> String {
        switch answer {
        case let .ack(version, members) where members.isEmpty: "ack \(version)"
        case let .ack(version, members): "ack \(version) \(members)"
        case let .rejected(code, message, members) where members.isEmpty: "rejected \(code) \(message)"
        // The message's length in bytes tells it from the members after it.
        case let .rejected(code, message, members): "refused \(code) \(message.utf8.count) \(message)\(members)"
        }
    }

    static func decode(_ text: String) -> KeyedAnswer? {
        let parts = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        switch parts.first {
        case "ack"?:
            guard parts.count >= 2, let version = UInt64(parts[1]) else { return nil }
            return .ack(version: version, members: parts.count == 3 ? String(parts[2]) : "")
        case "rejected"?:
            guard parts.count == 3 else { return nil }
            return .rejected(code: String(parts[1]), message: String(parts[2]))
        case "refused"?:
            guard parts.count == 3 else { return nil }
            let rest = parts[2].split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            guard rest.count == 2, let length = Int(rest[0]), length >= 0, length <= rest[1].utf8.count else { return nil }
            let bytes = Array(rest[1].utf8)
            guard let message = String(bytes: bytes[..<length], encoding: .utf8),
                  let members = String(bytes: bytes[length...], encoding: .utf8) else { return nil }
            return .rejected(code: String(parts[1]), message: message, members: members)
        default:
            return nil
        }
    }
}

extension SQLiteDatabase.Row {
    /// A nullable integer column.
    func optionalInteger(_ column: Int32) -> Int64? {
        sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : integer(column)
    }
}
