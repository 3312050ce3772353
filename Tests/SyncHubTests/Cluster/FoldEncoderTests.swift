import BoardCRDT
import Foundation
import Logging
import Testing
@testable import SyncHub

struct FoldEncoderTests {
    /// A fold that reports how many operation texts it was handed, and
    /// leaves one per operation of its (made-up) window.
    static func fold(_ logName: String, history: UInt64, operations: UInt64, seen: Reports) -> SharedFold {
        SharedFold(board: logName, logName: logName, offset: operations, encode: { texts in
            seen.add(String(texts.count))
            for seq in 1...operations { texts[OperationID(replica: ReplicaID(7), seq: seq)] = "{}" }
            return "{\"offset\":\(operations)}"
        }, history: history, answers: [], epoch: "e")
    }

    @Test func aFoldGetsTheTextsOfTheBoardsLastFoldOnlyInTheSameHistory() throws {
        let encoder = FoldEncoder(logger: Logger(label: "test"))
        let seen = Reports()
        let written = DispatchSemaphore(value: 0)
        let snapshots = Reports()
        encoder.start(written: { _, bytes in
            snapshots.add((try? PackedSnapshot.unpack(bytes)) ?? "?")
            written.signal()
        }, failed: { Issue.record("a fold failed") })
        defer { encoder.stop() }
        // One at a time: each waits for the one before (a newer fold of a board replaces a waiting one).
        for (history, operations) in [(1, 4), (1, 6), (2, 3), (2, 5)] as [(UInt64, UInt64)] {
            encoder.submit([Self.fold("letters/a", history: history, operations: operations, seen: seen)])
            #expect(written.wait(timeout: .now() + 30) == .success)
        }
        #expect(seen.all == ["0", "4", "0", "3"], "history 2 starts from nothing; within one, the last fold's texts")
        #expect(snapshots.all == ["{\"offset\":4}", "{\"offset\":6}", "{\"offset\":3}", "{\"offset\":5}"])
    }
}
