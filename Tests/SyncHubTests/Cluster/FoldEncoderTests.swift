import BoardCRDT
import Foundation
import Logging
import Testing
@testable import SyncHub

struct FoldEncoderTests {
    /// A made-up snapshot whose window is `ids`; each operation written is reported to `written`.
    static func text(_ ids: [UInt64], written: Reports) -> SnapshotText {
        SnapshotText(head: "{\"log\":[", operations: ids.map { OperationID(replica: ReplicaID(7), seq: $0) },
                     operation: { index in
                         written.add(String(ids[index]))
                         return "{\"op\":\(ids[index])}"
                     }, tail: "]}")
    }

    static func fold(_ ids: [UInt64], history: UInt64, written: Reports) -> SharedFold {
        SharedFold(board: "a", logName: "letters/a", offset: ids.last ?? 0, encode: { text(ids, written: written) },
                   history: history, answers: [], epoch: "e")
    }

    /// Within one history a fold packs only the operations since the last
    /// one (a window that lost its start, or took an operation in its
    /// middle, packs the runs that changed; a run that became the window's
    /// first is packed again without the comma before it); another history
    /// packs all.
    @Test(.timeLimit(.minutes(1)))
    func aFoldPacksOnlyWhatCameSinceTheBoardsLastFoldOfTheSameHistory() throws {
        let encoder = FoldEncoder(logger: Logger(label: "test"))
        encoder.start()
        defer { encoder.stop() }
        let steps: [(ids: [UInt64], history: UInt64, written: Int)] = [
            (Array(1...300), 1, 300),                  // runs 1-128, 129-256, 257-300
            (Array(1...450), 1, 150),                  // + 301-428, 429-450
            (Array(200...450), 1, 57),                 // compacted: 200-256 packed again (now first), the rest kept
            (Array(200...210) + [999] + Array(211...450), 1, 58),  // one went into the middle: its run again
            (Array(257...450), 1, 44),                 // compacted on a run's start: that run again, with no comma before it
            (Array(200...450), 2, 251),                // another history: everything
        ]
        for step in steps {
            let written = Reports()
            encoder.submit([Self.fold(step.ids, history: step.history, written: written)])
            let out = try #require(encoder.takeWritten())
            guard out.count == 1, case let .snapshot(_, bytes) = out[0] else {
                Issue.record("not one snapshot: \(out)")
                continue
            }
            #expect(try PackedSnapshot.unpack(bytes) == Self.text(step.ids, written: Reports()).whole)
            #expect(written.all.count == step.written, "\(step.ids.count) operations, history \(step.history)")
        }
    }

    /// A fold whose snapshot cannot be written comes out as `failed`, with
    /// the reason, for the folder thread to log and count; nothing is sent.
    @Test(.timeLimit(.minutes(1)))
    func aFoldThatCannotBeWrittenComesOutFailed() throws {
        struct Broken: Error, CustomStringConvertible { var description: String { "no JSON for this board" } }
        let encoder = FoldEncoder(logger: Logger(label: "test"))
        encoder.start()
        defer { encoder.stop() }
        encoder.submit([SharedFold(board: "b", logName: "letters/b", offset: 1, encode: { throw Broken() },
                                   history: 1, answers: [], epoch: "e")])
        let out = try #require(encoder.takeWritten())
        guard out.count == 1, case let .failed(fold, reason) = out[0] else {
            Issue.record("not one failed fold: \(out)")
            return
        }
        #expect(fold.logName == "letters/b" && reason == "no JSON for this board")
    }
}
