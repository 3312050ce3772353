import BoardCRDT
import Foundation
import SyncWire
import Testing
@testable import SyncHub

/// The SQLite store on a temporary directory: what is committed comes back.
struct BoardStoreTests {
    @Test func commitThenLoadRestoresTheBoard() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var replica = Replica<LetterBoard>(id: ReplicaID(3), limits: ReplicaLimits(keptOperations: 4))
        var records: [DurableRecord] = []
        for (index, letter) in ["A", "B", "C", "D", "E", "F"].enumerated() {
            let op = try #require(try replica.perform(.select(Letter(letter)!)))
            records.append(DurableRecord(board: "k", hubReplica: ReplicaID(4), operations: [op], version: UInt64(index + 1), order: replica.state.order,
                                         replies: [], author: nil, checkpoint: nil))
        }
        let store = try BoardStore(directory: directory)
        try store.commit(records)
        #expect(try store.load(board: "nothing") == nil)
        let loaded = try #require(try store.load(board: "k"))
        #expect(loaded.version == 6)
        let room = BoardRoom(name: "k", hubReplica: ReplicaID(4), stored: loaded, keptOperations: 1024)
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
            DurableRecord(board: "k", hubReplica: ReplicaID(4), operations: [], version: 3, order: [], replies: [],
                          keyed: ("k-ack", .ack(version: 3))),
            DurableRecord(board: "k", hubReplica: ReplicaID(4), operations: [], version: 3, order: [], replies: [],
                          keyed: ("k-no", .rejected(code: "board_full", message: "at most 6 letters can be selected"))),
        ])
        #expect(try store.answer(forKey: "k-ack", board: "k") == .ack(version: 3))
        #expect(try store.answer(forKey: "k-no", board: "k") == .rejected(code: "board_full", message: "at most 6 letters can be selected"))
        #expect(try store.answer(forKey: "k-ack", board: "other") == nil)
        #expect(try store.load(board: "k")?.hasKeys == true)
    }

    @Test func checkpointReplacesFoldedOperations() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var replica = Replica<LetterBoard>(id: ReplicaID(3), limits: ReplicaLimits(compacts: false))
        var ops: [BoardOperation] = []
        for letter in ["A", "B", "C"] { ops.append(try #require(try replica.perform(.select(Letter(letter)!)))) }
        replica.compact(keeping: 1)
        let store = try BoardStore(directory: directory)
        try store.commit([DurableRecord(board: "k", hubReplica: ReplicaID(4), operations: ops, version: 3, order: replica.state.order,
                                        replies: [], author: nil, checkpoint: replica.checkpoint)])
        let loaded = try #require(try store.load(board: "k"))
        #expect(loaded.operations.count == 1)
        #expect(loaded.checkpoint == replica.checkpoint)
        let room = BoardRoom(name: "k", hubReplica: ReplicaID(4), stored: loaded, keptOperations: 1024)
        #expect(room.replica.state.order.map(\.description) == ["A", "B", "C"])
    }
}

/// The store's hand-written operation JSON decodes to the same operation.
struct OperationTextTests {
    @Test func jsonTextRoundTrips() throws {
        let changes: [LetterBoard.Change] = [
            .select(Letter("A")!), .deselect(Letter("Z")!),
            .move(Letter("C")!, anchor: Letter("D")!, side: .after, place: 3),
            .reset(seen: [OperationID(replica: ReplicaID(7), seq: 2), OperationID(replica: ReplicaID(1 << 62), seq: 9)]),
        ]
        for (index, change) in changes.enumerated() {
            let op = BoardOperation(id: OperationID(replica: ReplicaID(UInt64(index) + 5), seq: 11), lamport: 42, change: change)
            let decoded = try JSONDecoder().decode(BoardOperation.self, from: Data(op.jsonText.utf8))
            #expect(decoded == op)
        }
    }
}
