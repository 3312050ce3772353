import BoardCRDT
import Foundation
import SyncWire
import Testing
@testable import SyncHub

/// Seed 7022 of the long randomized cluster run: a replica client's frames
/// s2 [seq 2], s3 [seq 4] (shuffled ahead of seq 3) and s4 [seq 3] land in
/// the log in that order and this hub applies all three before the log's
/// confirmations come back. The answers then go out in order, and `have`
/// never goes back across them.
struct SharedReplicaHaveTests {
    static func op(_ seq: Int, _ lamport: Int, _ letter: String) -> String {
        #"{"id":[900,\#(seq)],"lamport":\#(lamport),"by":"ana","change":{"op":"select","letter":"\#(letter)"}}"#
    }

    @Test func haveNeverGoesBackWhenEntriesAreAppliedBeforeTheirConfirmations() {
        var log = LogDouble()
        var a = HubDouble(id: "a")
        _ = a.join(1, "k", log: log)
        _ = a.frame(1, #"{"type":"hello","replica":900,"name":"ana","sent":0}"#)
        _ = a.frame(1, #"{"type":"ops","ref":"s1","operations":[\#(Self.op(1, 1, "J"))]}"#)
        var answers = replies(a.flush(into: &log), to: 1)
        answers += replies(a.follow("k", log: log), to: 1)
        #expect(answers.first?["have"] as? Int == 1)
        _ = a.frame(1, #"{"type":"ops","ref":"s2","operations":[\#(Self.op(2, 2, "H"))]}"#)
        _ = a.frame(1, #"{"type":"ops","ref":"s3","operations":[\#(Self.op(4, 4, "B"))]}"#)
        _ = a.frame(1, #"{"type":"ops","ref":"s4","operations":[\#(Self.op(3, 3, "A"))]}"#)
        // Appended, but the confirmations are late: the follower applies first.
        let taken = a.takeProposals()
        let results = taken.map { log.append($0) }
        var out = replies(a.follow("k", log: log), to: 1)
        for (proposal, result) in zip(taken, results) {
            out += replies(a.handle(.store(.appended(board: "k", number: proposal.number, result: result))), to: 1)
        }
        let seen = out.map { "\($0["ref"] as? String ?? "-") \($0["type"] as? String ?? "?") \($0["code"] as? String ?? "") have " +
                             "\($0["have"] as? Int ?? -1)" }
        #expect(out.map { $0["ref"] as? String } == ["s2", "s3", "s4"])
        let haves = out.compactMap { $0["have"] as? Int }
        #expect(haves.count == 3 && haves == haves.sorted(), "have went back: \(seen)")
    }
}
