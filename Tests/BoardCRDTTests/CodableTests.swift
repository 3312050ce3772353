import Foundation
import Testing
@testable import BoardCRDT

/// Operations, checkpoints and deltas travel and are stored as JSON.
@Suite struct CodableTests {
    func roundTrip<T: Codable & Equatable>(_ value: T) throws -> T {
        let data = try JSONEncoder().encode(value)
        return try JSONDecoder().decode(T.self, from: data)
    }

    func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static let id = OperationID(replica: ReplicaID(0x2A), seq: 3)

    @Test(arguments: [
        LetterBoard.Change.select(Letter("C")!),
        .deselect(Letter("Z")!),
        .move(Letter("A")!, anchor: Letter("D")!, side: .before, place: 2),
        .move(Letter("A")!, anchor: Letter("D")!, side: .after, place: 6),
        .reset(seen: [OperationID(replica: ReplicaID(1), seq: 1), OperationID(replica: ReplicaID(UInt64.max >> 1), seq: 9)]),
    ])
    func operationRoundTrips(change: LetterBoard.Change) throws {
        let op = BoardOp(id: Self.id, lamport: 17, change: change)
        #expect(try roundTrip(op) == op)
    }

    @Test func operationWireShape() throws {
        let op = BoardOp(id: Self.id, lamport: 17, change: .select(tile("C")))
        #expect(try json(op) == #"{"change":{"letter":"C","op":"select"},"id":[42,3],"lamport":17}"#)
        let move = BoardOp(id: Self.id, lamport: 18, change: .move(tile("A"), anchor: tile("D"), side: .before, place: 2))
        #expect(try json(move).contains(#""change":{"anchor":"D","letter":"A","op":"move","place":2,"side":"before"}"#))
    }

    @Test func checkpointAndDeltaRoundTrip() throws {
        var hub = board(1)
        try select(&hub, "QWERTY")
        try perform(&hub, .move(tile("Y"), to: 1), .deselect(tile("W")))
        hub.compact(keeping: 2)
        #expect(try roundTrip(hub.checkpoint) == hub.checkpoint)
        let delta = hub.delta(for: VersionVector(), remoteFrontier: .origin)
        let decoded = try roundTrip(delta)
        #expect(decoded == delta)
        var client = board(2)
        client.apply(decoded, freshID: { ReplicaID(3) })
        #expect(client.state == hub.state)
        #expect(try roundTrip(Checkpoint<LetterBoard>.empty) == .empty)
        #expect(try roundTrip(hub.versions) == hub.versions)
    }

    @Test(arguments: [
        #"{"op":"select","letter":"a"}"#,
        #"{"op":"select","letter":"AB"}"#,
        #"{"op":"select"}"#,
        #"{"op":"toggle","letter":"A"}"#,
        #"{"op":"move","letter":"A","anchor":"B","side":"left","place":1}"#,
        #"{"op":"move","letter":"A","anchor":"B","side":"after"}"#,
        #"{"op":"reset","seen":[[1,1],[1,2],[1,3],[1,4],[1,5],[1,6],[1,7]]}"#,
        #"{"op":"reset","seen":[[1]]}"#,
        #"[]"#,
    ])
    func malformedChangesAreRefusedByDecoding(text: String) {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(LetterBoard.Change.self, from: Data(text.utf8))
        }
    }

    @Test(arguments: [
        // Seven selections.
        #"{"state":{"selections":[{"letter":"A","selectedBy":[1,1]},{"letter":"B","selectedBy":[1,2]},{"letter":"C","selectedBy":[1,3]},"# +
        #"{"letter":"D","selectedBy":[1,4]},{"letter":"E","selectedBy":[1,5]},{"letter":"F","selectedBy":[1,6]},{"letter":"G","# +
        #""selectedBy":[1,7]}]},"frontier":{"lamport":7,"replica":1},"versions":[[1,7]]}"#,
        // A letter twice.
        #"{"state":{"selections":[{"letter":"A","selectedBy":[1,1]},{"letter":"A","selectedBy":[1,2]}]},"frontier":{"lamport":2,"# +
        #""replica":1},"versions":[[1,2]]}"#,
        // A frontier a replica could not count on from.
        #"{"state":{"selections":[]},"frontier":{"lamport":18446744073709551615,"replica":1},"versions":[]}"#,
        // A sequence number a replica could not count on from.
        #"{"state":{"selections":[]},"frontier":{"lamport":1,"replica":1},"versions":[[1,18446744073709551615]]}"#,
    ])
    func checkpointsBreakingTheRulesAreRefusedByDecoding(text: String) {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Checkpoint<LetterBoard>.self, from: Data(text.utf8))
        }
    }

    @Test func wellFormedCheckpointDecodes() throws {
        let text = #"{"state":{"selections":[{"letter":"A","selectedBy":[1,1]}]},"frontier":{"lamport":1,"replica":1},"versions":[[1,1]]}"#
        let checkpoint = try JSONDecoder().decode(Checkpoint<LetterBoard>.self, from: Data(text.utf8))
        #expect(checkpoint.state.order == [tile("A")])
        #expect(checkpoint.frontier == Stamp(lamport: 1, replica: ReplicaID(1)))
    }

    @Test func sequenceNumbersNearTheLimitAreMalformed() {
        var replica = board(1)
        let op = BoardOp(id: OperationID(replica: ReplicaID(2), seq: UInt64.max), lamport: 1, change: .select(tile("A")))
        #expect(replica.receive(op).refused.count == 1)
        #expect(replica.pendingCount == 0)
    }

    @Test func letterErrorNamesTheBadInput() {
        do {
            _ = try JSONDecoder().decode(Letter.self, from: Data(#""q""#.utf8))
            Issue.record("lower-case letter decoded")
        } catch let DecodingError.dataCorrupted(context) {
            #expect(context.debugDescription == #""q" is not a letter A-Z"#)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func decodedOperationWithBadNumbersIsRefusedByTheReplica() throws {
        let text = #"{"id":[5,0],"lamport":0,"change":{"op":"select","letter":"A"}}"#
        let op = try JSONDecoder().decode(BoardOp.self, from: Data(text.utf8))
        var replica = board(1)
        let report = replica.receive(op)
        #expect(report.refused.count == 1)
        #expect(replica.state.order.isEmpty)
    }
}
