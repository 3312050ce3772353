import BoardCRDT
import Foundation
import SyncWire
import Testing
@testable import syncclient

/// The client side of the replica protocol, driven with hand-made hub
/// frames: nothing the person did is forgotten until an answer about the
/// replica id that made it says the hub holds it (issue 9).
struct ReplicaSessionTests {
    /// Replica ids handed out in order: 1, 2, 3, ...
    final class Ids: @unchecked Sendable {
        // Sendable: used by one test at a time.
        var next: UInt64 = 1
        func take() -> ReplicaID { defer { next += 1 }; return ReplicaID(next) }
    }

    static func frame(_ json: String) -> IncomingFrame<LetterBoard> {
        var text = json
        return text.withUTF8 { bytes in
            switch IncomingFrame<LetterBoard>.decode(UnsafeRawBufferPointer(bytes)) {
            case let .success(frame): return frame
            case let .failure(error): preconditionFailure("test frame does not decode: \(error)")
            }
        }
    }

    static func sync(_ replica: UInt64, have: UInt64, checkpoint: String = "null",
                     operations: String = "[]") -> IncomingFrame<LetterBoard> {
        frame(#"{"type":"sync","board":"k","version":1,"replica":\#(replica),"have":\#(have),"checkpoint":\#(checkpoint),"# +
              #""operations":\#(operations)}"#)
    }

    /// The operations (replica, seq) in the `ops` frames among `outputs`.
    static func sentOperations(_ outputs: [ReplicaSession<LetterBoard>.Output]) -> [[UInt64]] {
        outputs.flatMap { output -> [[UInt64]] in
            guard case let .send(text) = output,
                  let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                  object["type"] as? String == "ops", let ops = object["operations"] as? [[String: Any]] else { return [] }
            return ops.compactMap { ($0["id"] as? [NSNumber])?.map(\.uint64Value) }
        }
    }

    static func hellos(_ outputs: [ReplicaSession<LetterBoard>.Output]) -> [UInt64] {
        outputs.compactMap { output in
            guard case let .send(text) = output, text.contains(#""type":"hello""#),
                  let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return nil }
            return (object["replica"] as? NSNumber)?.uint64Value
        }
    }

    /// A checkpoint that passed operations the hub has not integrated yet
    /// (a sealing hub re-stamps them, never refuses them as stale): they keep
    /// their replica id and sequence numbers, are re-timed after the
    /// frontier and sent again, so nothing is recorded twice (docs/SEMANTICS.md
    /// §7c). Before, the client rebased them under a new id and the hub,
    /// which integrated the originals too, applied them twice.
    @Test func aCheckpointPastUnacknowledgedOperationsRetimesThemUnderTheSameId() throws {
        let ids = Ids()
        var session = ReplicaSession<LetterBoard>(name: nil, freshID: ids.take)
        _ = session.connect()
        _ = session.receive(Self.sync(1, have: 0), now: 0)
        #expect(Self.sentOperations(session.perform(.select(Letter("A")!))) == [[1, 1]])
        _ = session.receive(Self.frame(#"{"type":"ack","ref":"s1.1","version":1,"have":1}"#), now: 0)
        _ = session.perform(.select(Letter("B")!))
        _ = session.perform(.select(Letter("C")!))

        // Meanwhile the hub compacted past B's and C's Lamport times without them.
        var hub = Replica<LetterBoard>(id: ReplicaID(100), limits: ReplicaLimits(compacts: false, sealsOrder: true))
        hub.receive(session.replica.log.filter { $0.id.seq == 1 })
        for letter in ["D", "E", "F"] { _ = try hub.perform(.select(Letter(letter)!)) }
        hub.compact()
        let checkpoint = String(decoding: try JSONEncoder().encode(hub.checkpoint), as: UTF8.self)
        let adopted = session.receive(Self.frame(#"{"type":"checkpoint","board":"k","version":4,"checkpoint":\#(checkpoint)}"#), now: 0)
        #expect(Self.hellos(adopted).isEmpty, "no new id, no new hello")
        #expect(session.replica.id == ReplicaID(1))
        #expect(session.unacknowledged.map(\.id.seq) == [2, 3], "the same operations, still unacknowledged")
        let own = session.replica.log.filter { $0.id.replica == ReplicaID(1) }
        #expect(own.allSatisfy { $0.stamp > hub.checkpoint.frontier }, "re-timed after the frontier")
        #expect(session.replica.state.order.map(\.description) == ["A", "D", "E", "F", "B", "C"])
        #expect(session.replica.checkInvariants().isEmpty)

        // The hub integrates them once, re-stamped; the client takes its versions.
        let integrated = hub.receive(session.unacknowledged).integratedOperations
        #expect(integrated.map(\.id.seq) == [2, 3])
        _ = session.receive(Self.frame(#"{"type":"ops","board":"k","version":6,"# +
                                       #""operations":[\#(integrated.map(LetterBoard.operationJSON).joined(separator: ","))]}"#), now: 0)
        _ = session.receive(Self.frame(#"{"type":"ack","ref":"s2.2","version":6,"have":3}"#), now: 0)
        #expect(session.unacknowledged.isEmpty)
        #expect(session.replica.state == hub.state)
    }

    /// Answers meant for an id the client gave up (it started afresh after
    /// `unknown_replica`) move nothing: a late error about replica 1 neither
    /// drops replica 2's changes nor starts another round of hellos.
    @Test func answersAboutAnOldReplicaIdDoNotDropTheNewOnesOperations() {
        var session = ReplicaSession<LetterBoard>(name: nil, freshID: Ids().take)
        _ = session.connect()
        _ = session.receive(Self.sync(1, have: 0), now: 0)
        _ = session.perform(.select(Letter("B")!))
        _ = session.perform(.select(Letter("C")!))
        let restart = session.receive(Self.frame(#"{"type":"error","code":"unknown_replica","message":"m","replica":1}"#), now: 0)
        #expect(Self.hellos(restart) == [2])
        let resumed = session.receive(Self.sync(2, have: 0), now: 0)
        #expect(Self.sentOperations(resumed) == [[2, 1], [2, 2]])
        let late = session.receive(Self.frame(#"{"type":"error","ref":"s1.1","code":"rate_limited","message":"m","have":0}"#), now: 0)
        #expect(late.isEmpty, "nothing for an id no longer used")
        _ = session.receive(Self.frame(#"{"type":"ack","ref":"s1.1","version":4,"have":2}"#), now: 0)
        #expect(session.unacknowledged.map(\.id.seq) == [1, 2], "replica 2's operations are all still there")
        #expect(session.unacknowledged.allSatisfy { $0.id.replica == ReplicaID(2) })
    }

    /// An answer short of its frame resends from `have + 1`, once per round.
    @Test func aGapIsFilledByResendingFromHave() {
        var session = ReplicaSession<LetterBoard>(name: nil, freshID: Ids().take)
        _ = session.connect()
        _ = session.receive(Self.sync(1, have: 0), now: 0)
        for letter in ["A", "B", "C"] { _ = session.perform(.select(Letter(letter)!)) }
        let resend = session.receive(Self.frame(#"{"type":"ack","ref":"s2.2","version":0,"have":0}"#), now: 0)
        #expect(Self.sentOperations(resend) == [[1, 1], [1, 2], [1, 3]])
        let again = session.receive(Self.frame(#"{"type":"ack","ref":"s3.3","version":0,"have":0}"#), now: 0)
        #expect(again.isEmpty, "an answer to a frame sent before the resend starts no other")
        _ = session.receive(Self.frame(#"{"type":"ack","ref":"s3.4","version":1,"have":3}"#), now: 0)
        #expect(session.unacknowledged.isEmpty)
    }

    /// A dropped `ops` frame is sent again after a short delay; a dropped
    /// `hello` too (before, the session stayed unsynced for ever).
    @Test func whatTheRateLimiterDroppedIsSentAgainLater() {
        var session = ReplicaSession<LetterBoard>(name: nil, freshID: Ids().take)
        _ = session.connect()
        let dropped = Self.frame(#"{"type":"error","code":"rate_limited","message":"m"}"#)
        #expect(session.receive(dropped, now: 0).isEmpty)
        #expect(session.tick(now: ReplicaSession<LetterBoard>.rateLimitedDelay - 1).isEmpty)
        #expect(Self.hellos(session.tick(now: ReplicaSession<LetterBoard>.rateLimitedDelay)) == [1])
        _ = session.receive(Self.sync(1, have: 0), now: 0)
        _ = session.perform(.select(Letter("A")!))
        _ = session.receive(Self.frame(#"{"type":"error","ref":"s1.1","code":"rate_limited","message":"m","have":0}"#), now: 10)
        #expect(session.unacknowledged.count == 1)
        #expect(Self.sentOperations(session.tick(now: 10 + ReplicaSession<LetterBoard>.rateLimitedDelay)) == [[1, 1]])
    }

    /// `unknown_replica` about the current id: start afresh under a new id and
    /// record the unacknowledged changes again once the board has arrived; the
    /// same answer about an older id is ignored.
    @Test func unknownReplicaStartsAfreshAndKeepsThePersonsChanges() {
        var session = ReplicaSession<LetterBoard>(name: nil, freshID: Ids().take)
        _ = session.connect()
        _ = session.receive(Self.sync(1, have: 0), now: 0)
        _ = session.perform(.select(Letter("K")!))
        let restart = session.receive(Self.frame(#"{"type":"error","code":"unknown_replica","message":"m","replica":1}"#), now: 0)
        #expect(Self.hellos(restart) == [2])
        #expect(session.pendingCount == 1)
        #expect(session.receive(Self.frame(#"{"type":"error","code":"unknown_replica","message":"m","replica":1}"#), now: 0).isEmpty)
        let board = #"[{"id":[7,1],"lamport":4,"change":{"op":"select","letter":"Q"}}]"#
        let resumed = session.receive(Self.sync(2, have: 0, operations: board), now: 0)
        #expect(Self.sentOperations(resumed) == [[2, 1]])
        #expect(session.replica.state.order.map(\.description) == ["Q", "K"])
    }

    /// Bounded `hello`: a replica that met 100,000 other replica ids still
    /// greets the hub in under 1 KiB (before, its version vector went in the
    /// `hello`, and past ~300 ids the hub closed it with 1009, for ever).
    @Test func helloStaysSmallWhateverTheBoardMet() {
        var session = ReplicaSession<LetterBoard>(name: "wall screen", freshID: Ids().take)
        _ = session.connect()
        let letters = ["A", "B"]
        let operations = (0..<100_000).map { n in
            #"{"id":[\#(1000 + n),1],"lamport":\#(n + 1),"change":{"op":"\#(n % 4 < 2 ? "select" : "deselect")","# +
            #""letter":"\#(letters[n % 2])"}}"#
        }
        _ = session.receive(Self.sync(1, have: 0, operations: "[" + operations.joined(separator: ",") + "]"), now: 0)
        #expect(session.replica.versions.entries.count == 100_000)
        _ = session.disconnect()
        let hello = session.connect()
        guard case let .send(text)? = hello.first else { Issue.record("no hello"); return }
        #expect(text.utf8.count < 1024, "\(text.utf8.count) bytes")
    }
}
