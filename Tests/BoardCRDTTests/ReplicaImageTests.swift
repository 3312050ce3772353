import Foundation
import Testing
@testable import BoardCRDT

/// A replica restored from its image does with the next operations exactly
/// what the original does (cluster hubs rely on it, docs/CLUSTER.md).
struct ReplicaImageTests {
    @Test func restoredReplicaStaysEqualToTheOriginalUnderTheSameOperations() throws {
        let limits = ReplicaLimits(keptOperations: 4, maxPending: 0, sealsOrder: true)
        var original = Replica<LetterBoard>(id: ReplicaID(99), limits: limits)
        var seed: UInt64 = 42
        func next() -> UInt64 { seed = seed &* 6_364_136_223_846_793_005 &+ 1; return seed >> 33 }
        let letters = Array(Letter.all.prefix(10))
        var ops: [BoardCRDT.Operation<LetterBoard.Change>] = []
        for index in 0..<40 {
            var client = Replica<LetterBoard>(id: ReplicaID(1000 + next() % 3), limits: ReplicaLimits(compacts: false, hubSealsOrder: true))
            client.clock = next() % 50
            let letter = letters[Int(next() % 10)]
            if let op = try? client.perform(index % 3 == 0 ? .deselect(letter) : .select(letter)) {
                ops.append(BoardCRDT.Operation(id: OperationID(replica: op.id.replica, seq: UInt64(index + 1)), lamport: op.lamport,
                                               change: op.change))
            }
        }
        let data = try JSONEncoder().encode(original.image)
        var restored = try #require(Replica<LetterBoard>(image: try JSONDecoder().decode(ReplicaImage<LetterBoard>.self, from: data),
                                                         limits: limits))
        for (index, op) in ops.enumerated() {
            _ = original.receive([op])
            _ = restored.receive([op])
            if index % 7 == 0 {
                let copy = try JSONEncoder().encode(original.image)
                restored = try #require(Replica<LetterBoard>(image: try JSONDecoder().decode(ReplicaImage<LetterBoard>.self, from: copy),
                                                             limits: limits))
            }
            #expect(restored.state == original.state)
            #expect(restored.log == original.log)
            #expect(restored.clock == original.clock)
            #expect(restored.versions == original.versions)
        }
    }

    @Test func anImageWhoseLogIsOutOfOrderIsRefused() throws {
        var replica = Replica<LetterBoard>(id: ReplicaID(1))
        replica.record(.select(Letter.all[0]))
        replica.record(.select(Letter.all[1]))
        var image = replica.image
        image.log.reverse()
        #expect(Replica<LetterBoard>(image: image, limits: ReplicaLimits()) == nil)
    }
}
