import Testing
@testable import BoardCRDT

/// An acknowledged change is final (docs/SEMANTICS.md §7c): the hub's
/// replica (`ReplicaLimits(sealsOrder: true)`) only ever appends; an
/// operation that would land before integrated ones is re-stamped after
/// them, and its author moves its copy when the hub's version comes back.
struct SealedOrderTests {
    static func hub(_ id: UInt64 = 100) -> Board {
        Board(id: ReplicaID(id), limits: ReplicaLimits(sealsOrder: true))
    }

    /// C4 at the hub: six selects and a refused seventh were integrated
    /// (and so acknowledged); a deselect concurrent with them, arriving late,
    /// no longer lands before them, so it cannot turn the refusal the hub
    /// already answered into an accepted pick.
    @Test func aLateOperationIsReStampedAfterIntegratedOnesAndNothingIntegratedChanges() throws {
        var hub = Self.hub()
        let (selects, seventh, deselect) = try Self.c4Race()
        let first = hub.receive(selects + [seventh])
        #expect(first.restamped.isEmpty)
        #expect(hub.outcome(of: seventh.id) == .refused(.boardFull), "the seventh select is refused when it is integrated")
        let late = hub.receive([deselect])
        #expect(late.restamped == [deselect.id])
        let moved = try #require(late.integratedOperations.first)
        #expect(moved.lamport == 8, "re-stamped after the last integrated one (7)")
        #expect(moved.change == deselect.change && moved.id == deselect.id, "same change, same id")
        #expect(hub.outcome(of: seventh.id) == .refused(.boardFull), "no integrated outcome changed")
        #expect(orderText(hub) == "BCDEF")
        expectInvariants(hub)
    }

    /// Without sealing (peers syncing directly) the same late deselect is
    /// ordered at its place, and the replay lets the seventh select in: the
    /// construction of §1, which the hub gives up only for what it acknowledged.
    @Test func withoutSealingTheLateOperationIsOrderedAtItsPlace() throws {
        var peer = board(50)
        let (selects, seventh, deselect) = try Self.c4Race()
        peer.receive(selects + [seventh])
        #expect(peer.outcome(of: seventh.id) == .refused(.boardFull))
        let report = peer.receive([deselect])
        #expect(report.restamped.isEmpty)
        #expect(peer.outcome(of: seventh.id) == .applied, "the late deselect made room before it")
        #expect(orderText(peer) == "BCDEFG")
    }

    /// Replica 9 selects A-F (Lamport 1-6), replica 8 G (7); replica 1
    /// saw only A and deselected it (Lamport 2), concurrently.
    static func c4Race() throws -> (selects: [BoardOp], seventh: BoardOp, deselect: BoardOp) {
        var fast = board(9), slow = board(1)
        let selects = try select(&fast, "ABCDEF")
        // Replica 8 had not seen F when it picked G: a select the board,
        // full once F is in, refuses.
        let seventh = BoardOp(id: OperationID(replica: ReplicaID(8), seq: 1), lamport: 7, change: .select(tile("G")))
        slow.receive([selects[0]])
        let deselect = try perform(&slow, .deselect(tile("A")))[0]
        return (selects, seventh, deselect)
    }

    /// The author takes the hub's version of its operation, and its later
    /// own operations follow it (their Lamport times grow with their sequence
    /// numbers), so its log stays in stamp order and matches the hub's once
    /// the hub's versions of those come back too.
    @Test func theAuthorMovesItsCopyAndItsLaterOperationsFollow() throws {
        var hub = Self.hub()
        var other = board(9), author = board(1)
        hub.receive(try select(&other, "ABC"))
        let mine = try select(&author, "XYZ")          // Lamport 1, 2, 3: before ABC's
        let first = hub.receive([mine[0]])
        let restamped = try #require(first.integratedOperations.first)
        #expect(restamped.lamport == 4)
        let moved = author.receive([restamped])
        #expect(moved.restamped == [mine[0].id])
        #expect(author.log.filter { $0.id.replica == author.id }.map(\.lamport) == [4, 5, 6], "Y and Z follow X")
        expectInvariants(author)
        // The hub re-stamps Y and Z the same way; their versions change nothing more.
        let rest = hub.receive(Array(mine[1...]))
        #expect(rest.integratedOperations.map(\.lamport) == [5, 6])
        author.receive(rest.integratedOperations)
        author.receive(hub.log.filter { $0.id.replica == other.id })
        #expect(author.state == hub.state)
        expectInvariants(author)
    }

    /// A sync that brings a checkpoint and, with it, the hub's version of
    /// one of ours: the checkpoint is judged against the final stamp, so
    /// the operation is not mistaken for a late one and recorded again.
    @Test func aReStampedOwnOperationInASyncIsNotRecordedTwice() throws {
        var hub = Self.hub()
        var other = board(9), author = board(1)
        hub.receive(try select(&other, "ABC"))
        let mine = try select(&author, "X")
        hub.receive(mine)
        hub.compact(keeping: 1)                          // X stays in the log, A-C folded
        // What the hub's `sync` sends: its checkpoint and every operation after it.
        let delta = Delta(checkpoint: hub.checkpoint, operations: hub.log)
        let result = author.apply(delta, freshID: { ReplicaID(77) })
        #expect(result.adopt.rebased.isEmpty, "nothing recorded again")
        #expect(author.id == ReplicaID(1), "no fresh id")
        #expect(author.state == hub.state)
        expectInvariants(author)
    }
}
