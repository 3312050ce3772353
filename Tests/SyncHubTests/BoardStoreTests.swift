import BoardCRDT
import Foundation
import SyncWire
import Testing
@testable import SyncHub

/// The SQLite store on a temporary directory: what is committed comes back.
struct BoardStoreTests {
    /// A record as a letter board's room makes it.
    static func record(board: String = "k", _ operations: [BoardCRDT.Operation<LetterBoard.Change>], version: UInt64,
                       checkpoint: Checkpoint<LetterBoard>? = nil, keyed: (key: String, answer: KeyedAnswer)? = nil) -> DurableRecord {
        DurableRecord(board: board, kind: "letters", hubReplica: ReplicaID(4),
                      operations: operations.map { StoredOperation(id: $0.id, lamport: $0.lamport, json: LetterBoard.operationJSON($0)) },
                      version: version, replies: [], author: nil,
                      checkpoint: checkpoint.map { checkpoint in
                          StoredCheckpoint(frontier: checkpoint.frontier) { String(decoding: try JSONEncoder().encode(checkpoint),
                                                                                   as: UTF8.self) }
                      }, keyed: keyed)
    }

    static func room(_ stored: StoredBoard?) throws -> KindRoom<LetterBoard> {
        try LetterBoard.Room(address: BoardAddress(key: "k"), hubReplica: ReplicaID(4), stored: stored, limits: HubLimits())
    }

    @Test func commitThenLoadRestoresTheBoard() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var replica = Replica<LetterBoard>(id: ReplicaID(3), limits: ReplicaLimits(keptOperations: 4))
        var records: [DurableRecord] = []
        for (index, letter) in ["A", "B", "C", "D", "E", "F"].enumerated() {
            let op = try #require(try replica.perform(.select(Letter(letter)!)))
            records.append(Self.record([op], version: UInt64(index + 1)))
        }
        let store = try BoardStore(directory: directory)
        try store.commit(records)
        #expect(try store.load(board: "nothing") == nil)
        let loaded = try #require(try store.load(board: "k"))
        #expect(loaded.version == 6)
        let room = try Self.room(loaded)
        #expect(room.replica.state.order == replica.state.order)
        #expect(loaded.hubReplica == ReplicaID(4), "the board's own replica id comes back")
        #expect(!loaded.hasKeys)
    }

    /// A keyed intent's first answer is stored with its change and read back.
    @Test func keyedAnswersComeBack() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try BoardStore(directory: directory)
        try store.commit([
            Self.record([], version: 3, keyed: ("k-ack", KeyedAnswer.ack(version: 3))),
            Self.record([], version: 3,
                        keyed: ("k-no", KeyedAnswer.rejected(code: "board_full", message: "at most 6 letters can be selected"))),
            Self.record([], version: 3, keyed: ("k-id", KeyedAnswer.ack(version: 3, members: "\"id\":\"i7\""))),
        ])
        #expect(try store.answer(forKey: "k-ack", board: "k") == .ack(version: 3))
        #expect(try store.answer(forKey: "k-no", board: "k") == .rejected(code: "board_full", message: "at most 6 letters can be selected"))
        #expect(try store.answer(forKey: "k-id", board: "k") == .ack(version: 3, members: "\"id\":\"i7\""),
                "an ack's kind fields come back")
        #expect(try store.answer(forKey: "k-ack", board: "other") == nil)
        #expect(try store.load(board: "k")?.hasKeys == true)
    }

    @Test func checkpointReplacesFoldedOperations() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var replica = Replica<LetterBoard>(id: ReplicaID(3), limits: ReplicaLimits(compacts: false))
        var ops: [BoardCRDT.Operation<LetterBoard.Change>] = []
        for letter in ["A", "B", "C"] { ops.append(try #require(try replica.perform(.select(Letter(letter)!)))) }
        replica.compact(keeping: 1)
        let store = try BoardStore(directory: directory)
        try store.commit([Self.record(ops, version: 3, checkpoint: replica.checkpoint)])
        let loaded = try #require(try store.load(board: "k"))
        #expect(loaded.operations.count == 1)
        let checkpointText = try #require(loaded.checkpoint)
        #expect(try JSONDecoder().decode(Checkpoint<LetterBoard>.self, from: Data(checkpointText.utf8)) == replica.checkpoint)
        let room = try Self.room(loaded)
        #expect(room.replica.state.order.map(\.description) == ["A", "B", "C"])
    }
}

/// The store's hand-written operation JSON decodes to the same operation.
struct OperationTextTests {
    @Test func operationJSONRoundTrips() throws {
        let changes: [LetterBoard.Change] = [
            .select(Letter("A")!), .deselect(Letter("Z")!),
            .move(Letter("C")!, anchor: Letter("D")!, side: .after, place: 3),
            .reset(seen: [OperationID(replica: ReplicaID(7), seq: 2), OperationID(replica: ReplicaID(1 << 62), seq: 9)]),
        ]
        for (index, change) in changes.enumerated() {
            let op = BoardCRDT.Operation(id: OperationID(replica: ReplicaID(UInt64(index) + 5), seq: 11), lamport: 42,
                               author: index == 2 ? "ana \"q\" \u{e9}" : "", change: change)
            let decoded = try JSONDecoder().decode(BoardCRDT.Operation<LetterBoard.Change>.self,
                                                   from: Data(LetterBoard.operationJSON(op).utf8))
            #expect(decoded == op)
        }
    }

    /// A store written before kinds existed: its boards load as letter boards.
    @Test func storesWithoutKindColumnOpenAndLoad() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let old = try SQLiteDatabase(path: directory + "/boards.sqlite")
        try old.execute("""
            CREATE TABLE boards(name TEXT PRIMARY KEY, version INTEGER NOT NULL, checkpoint TEXT NOT NULL);
            INSERT INTO boards VALUES('k', 2, '{"state":{"selections":[]},"frontier":{"lamport":0,"replica":0},"versions":[]}');
            """)
        let store = try BoardStore(directory: directory)
        let loaded = try #require(try store.load(board: "k"))
        #expect(loaded.version == 2)
        #expect(try BoardStoreTests.room(loaded).replica.state.order.isEmpty)
    }
}
