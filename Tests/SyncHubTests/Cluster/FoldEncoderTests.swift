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

    @Test(.timeLimit(.minutes(1)))
    func aFoldGetsTheTextsOfTheBoardsLastFoldOnlyInTheSameHistory() throws {
        let encoder = FoldEncoder(logger: Logger(label: "test"))
        let seen = Reports()
        let snapshots = Reports()
        encoder.start()
        defer { encoder.stop() }
        // One at a time: each waits for the one before (a newer fold of a board replaces a waiting one).
        for (history, operations) in [(1, 4), (1, 6), (2, 3), (2, 5)] as [(UInt64, UInt64)] {
            encoder.submit([Self.fold("letters/a", history: history, operations: operations, seen: seen)])
            for item in encoder.takeWritten() ?? [] {
                guard case let .snapshot(_, bytes) = item else { Issue.record("a fold failed: \(item)"); continue }
                snapshots.add((try? PackedSnapshot.unpack(bytes)) ?? "?")
            }
        }
        #expect(seen.all == ["0", "4", "0", "3"], "history 2 starts from nothing; within one, the last fold's texts")
        #expect(snapshots.all == ["{\"offset\":4}", "{\"offset\":6}", "{\"offset\":3}", "{\"offset\":5}"])
    }

    /// A fold whose snapshot cannot be written comes out as `failed`, with
    /// the reason, for the folder thread to log and count; nothing is sent.
    @Test(.timeLimit(.minutes(1)))
    func aFoldThatCannotBeWrittenComesOutFailed() throws {
        struct Broken: Error, CustomStringConvertible { var description: String { "no JSON for this board" } }
        let encoder = FoldEncoder(logger: Logger(label: "test"))
        encoder.start()
        defer { encoder.stop() }
        encoder.submit([SharedFold(board: "b", logName: "letters/b", offset: 1, encode: { _ in throw Broken() },
                                   history: 1, answers: [], epoch: "e")])
        let out = try #require(encoder.takeWritten())
        guard out.count == 1, case let .failed(fold, reason) = out[0] else {
            Issue.record("not one failed fold: \(out)")
            return
        }
        #expect(fold.logName == "letters/b" && reason == "no JSON for this board")
    }
}
