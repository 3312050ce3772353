import Testing
@testable import BoardCRDT

/// docs/rules/letters.md C3-C5: two clients, each does something without having seen the
/// other's change, then they sync. Every example of docs/SEMANTICS.md is one
/// test here. Replica 1 and replica 2 tie on Lamport time, so 1's operation
/// is ordered first.
@Suite struct ConcurrentCaseTests {
    /// Two replicas that both show `text`, selected by replica 1.
    func pair(showing text: String) throws -> (Board, Board) {
        var a = board(1), b = board(2)
        try select(&a, text)
        syncBoth(&a, &b)
        return (a, b)
    }

    /// Exchanges both ways and checks C1 and the invariants.
    func merge(_ a: inout Board, _ b: inout Board, sourceLocation: SourceLocation = #_sourceLocation) {
        syncBoth(&a, &b)
        #expect(a.state == b.state, "C1", sourceLocation: sourceLocation)
        #expect(a.versions == b.versions, sourceLocation: sourceLocation)
        expectInvariants(a, sourceLocation: sourceLocation)
        expectInvariants(b, sourceLocation: sourceLocation)
    }

    // MARK: C3 intent

    @Test func c3DifferentLettersBothJoin() throws {
        var (a, b) = try pair(showing: "")
        try select(&a, "A")
        try select(&b, "B")
        merge(&a, &b)
        #expect(orderText(a) == "AB")
    }

    @Test func c3SameLetterGivesOneSelection() throws {
        var (a, b) = try pair(showing: "X")
        let first = try select(&a, "C")[0]
        let second = try select(&b, "C")[0]
        merge(&a, &b)
        #expect(orderText(a) == "XC")
        #expect(a.outcome(of: first.id) == .applied)
        #expect(a.outcome(of: second.id) == .unchanged, "the later select finds C selected (B9)")
    }

    @Test func c3DeselectOrderedAfterAMoveWins() throws {
        var (a, b) = try pair(showing: "ABC")
        try perform(&a, .move(tile("C"), to: 1))
        try perform(&b, .deselect(tile("C")))
        merge(&a, &b)
        #expect(orderText(a) == "AB")
    }

    @Test func c3DeselectOrderedBeforeAMoveWins() throws {
        var (a, b) = try pair(showing: "ABC")
        try perform(&a, .deselect(tile("C")))
        let move = try perform(&b, .move(tile("C"), to: 1))[0]
        merge(&a, &b)
        #expect(orderText(a) == "AB")
        #expect(a.outcome(of: move.id) == .unchanged, "nothing left to move")
    }

    @Test func c3MoveLandsBesideItsNeighbour() throws {
        var (a, b) = try pair(showing: "ABCD")
        try perform(&a, .move(tile("D"), to: 2)) // dropped onto B: A D B C
        #expect(orderText(a) == "ADBC")
        try perform(&b, .deselect(tile("A"))) // B C D
        merge(&a, &b)
        #expect(orderText(a) == "DBC", "D stays just before B, not at place 2")
    }

    @Test func c3MoveBesideNeighbourWhenTheDeselectComesFirst() throws {
        var (a, b) = try pair(showing: "ABCD")
        try perform(&a, .deselect(tile("A")))
        try perform(&b, .move(tile("D"), to: 2))
        merge(&a, &b)
        #expect(orderText(a) == "DBC")
    }

    @Test func c3MoveFallsBackToItsPlaceWhenTheNeighbourIsGone() throws {
        var (a, b) = try pair(showing: "ABCD")
        try perform(&a, .deselect(tile("B")))
        let move = try perform(&b, .move(tile("D"), to: 2))[0] // onto B's place
        merge(&a, &b)
        #expect(orderText(a) == "ADC", "B is gone: D lands at place 2")
        #expect(a.outcome(of: move.id) == .applied)
    }

    @Test func c3MoveFallbackClampsToTheEnd() throws {
        var (a, b) = try pair(showing: "ABCDEF")
        try perform(&a, .deselect(tile("F")), .deselect(tile("E")), .deselect(tile("D")), .deselect(tile("C")))
        try perform(&b, .move(tile("A"), to: 6)) // after F, which is gone
        // b's move is ordered right after a's first deselect: F is gone, so A
        // falls back to place 6, clamped to the end; then E, D, C leave.
        merge(&a, &b)
        #expect(orderText(a) == "BA")
    }

    @Test func c3ConcurrentMovesOfOneLetterLastStampWins() throws {
        var (a, b) = try pair(showing: "ABC")
        try perform(&a, .move(tile("A"), to: 3))
        try perform(&b, .move(tile("A"), to: 2))
        merge(&a, &b)
        #expect(orderText(a) == "BAC", "replica 2's move is ordered last")
    }

    // MARK: C4 capacity

    @Test func c4ConcurrentSelectsBeyondSixKeepTheEarliestStamps() throws {
        var (a, b) = try pair(showing: "ABCD")
        let aOps = try select(&a, "EF")
        let bOps = try select(&b, "GH")
        let toA = a.receive(bOps)
        let toB = b.receive(aOps)
        #expect(orderText(a) == "ABCDEG")
        #expect(orderText(b) == "ABCDEG")
        // Each sender hears about its own refused pick.
        #expect(toA.changedOutcomes.map(\.0) == [aOps[1].id])
        #expect(toA.changedOutcomes.map(\.1) == [.refused(.boardFull)])
        #expect(toB.changedOutcomes.map(\.0) == [bOps[1].id])
        #expect(b.outcome(of: bOps[1].id) == .refused(.boardFull))
        #expect(b.outcome(of: bOps[0].id) == .applied)
        merge(&a, &b)
    }

    @Test func c4ARefusedSelectIsNotResurrectedByALaterDeselect() throws {
        var (a, b) = try pair(showing: "ABCDE")
        try select(&a, "F")
        let refused = try select(&b, "G")[0]
        merge(&a, &b)
        #expect(orderText(a) == "ABCDEF")
        try perform(&a, .deselect(tile("A")))
        merge(&a, &b)
        #expect(orderText(a) == "BCDEF", "G does not come back")
        #expect(b.outcome(of: refused.id) == .refused(.boardFull))
    }

    @Test func c4AnEarlierConcurrentDeselectArrivingLateMakesRoom() throws {
        var (a, b) = try pair(showing: "ABCDE")
        var c = board(0) // id 0: its operations tie-break before 1 and 2
        sync(a, to: &c)
        try select(&a, "F")
        let g = try select(&b, "G")[0]
        merge(&a, &b)
        #expect(orderText(a) == "ABCDEF")
        try perform(&c, .deselect(tile("A"))) // concurrent with F and G, ordered first
        sync(c, to: &a)
        let report = sync(c, to: &b)
        #expect(orderText(a) == "BCDEFG")
        #expect(orderText(b) == "BCDEFG")
        #expect(report.merge.changedOutcomes.map(\.0) == [g.id], "b learns its pick now counts")
        #expect(b.outcome(of: g.id) == .applied)
    }

    // MARK: C5 reset

    @Test func c5ResetKeepsAConcurrentSelect() throws {
        var (a, b) = try pair(showing: "AB")
        try perform(&a, .reset)
        try select(&b, "C")
        merge(&a, &b)
        #expect(orderText(a) == "C")
    }

    @Test func c5ResetKeepsAConcurrentSelectOrderedBeforeIt() throws {
        var (a, b) = try pair(showing: "AB")
        try select(&a, "C")
        try perform(&b, .reset)
        merge(&a, &b)
        #expect(orderText(a) == "C", "b never saw C, so its reset leaves it")
    }

    @Test func c5ResetKeepsAConcurrentRepick() throws {
        var (a, b) = try pair(showing: "AB")
        try perform(&a, .reset)
        try perform(&b, .deselect(tile("A")), .select(tile("A")))
        merge(&a, &b)
        #expect(orderText(a) == "A", "the new pick of A was not seen by the reset")
    }

    @Test func c5ResetClearsALetterMovedConcurrently() throws {
        var (a, b) = try pair(showing: "ABC")
        try perform(&a, .reset)
        try perform(&b, .move(tile("C"), to: 1))
        merge(&a, &b)
        #expect(orderText(a) == "")
    }

    @Test func c5ConcurrentResetsClearOnce() throws {
        var (a, b) = try pair(showing: "ABC")
        let first = try perform(&a, .reset)[0]
        let second = try perform(&b, .reset)[0]
        merge(&a, &b)
        #expect(orderText(a) == "")
        #expect(a.outcome(of: first.id) == .applied)
        #expect(a.outcome(of: second.id) == .unchanged)
    }

    @Test func c5ResetBeforeSeeingAnythingIsANoOp() throws {
        var (a, b) = try pair(showing: "")
        try select(&a, "A")
        #expect(try b.perform(.reset) == nil)
        merge(&a, &b)
        #expect(orderText(a) == "A")
    }

    // MARK: C1 delivery

    @Test func c1ArrivalOrderDoesNotMatter() throws {
        var a = board(1), b = board(2)
        var ops = try select(&a, "ABCDE")
        ops += try perform(&a, .move(tile("E"), to: 1), .deselect(tile("B")))
        ops += try select(&b, "XY")
        for rotation in 0..<ops.count {
            var c = board(3)
            let rotated = Array(ops[rotation...] + ops[..<rotation])
            c.receive(Array(rotated.reversed()))
            var reference = board(4)
            reference.receive(ops)
            #expect(c.state == reference.state)
            #expect(c.versions == reference.versions)
            expectInvariants(c)
        }
    }

    @Test func c1DuplicateDeliveryIsIgnored() throws {
        var a = board(1), b = board(2)
        let ops = try select(&a, "ABC")
        let first = b.receive(ops + ops)
        #expect(first.integrated.count == 3)
        #expect(first.duplicates == 3)
        let again = b.receive(ops.reversed())
        #expect(again.duplicates == 3)
        #expect(!again.changedState)
        #expect(orderText(b) == "ABC")
        expectInvariants(b)
    }

    @Test func c1OutOfOrderOperationsWaitInThePendingBuffer() throws {
        var a = board(1), b = board(2)
        let ops = try select(&a, "ABC")
        let third = b.receive(ops[2])
        #expect(third.buffered == 1)
        #expect(orderText(b) == "")
        #expect(b.receive(ops[2]).duplicates == 1, "a buffered copy counts as a duplicate")
        let second = b.receive(ops[1])
        #expect(second.buffered == 1)
        let first = b.receive(ops[0])
        #expect(first.integrated == ops.map(\.id), "the buffer drains in sequence")
        #expect(orderText(b) == "ABC")
        #expect(b.pendingCount == 0)
        expectInvariants(b)
    }

    @Test func c1PendingBufferIsBounded() throws {
        var a = board(1)
        var b = board(2, limits: ReplicaLimits(maxPending: 1, compacts: false))
        let ops = try select(&a, "ABC")
        b.receive(ops[1])
        let report = b.receive(ops[2])
        #expect(report.refused == [.pendingFull(ops[2].id)])
        b.receive(ops[0])
        #expect(orderText(b) == "AB")
        b.receive(ops)
        #expect(orderText(b) == "ABC", "the dropped operation comes again with the next sync")
        expectInvariants(b)
    }

    @Test func c1MalformedOperationsAreRefusedWithoutChange() throws {
        var b = board(2)
        let letter = tile("A")
        let bad = [
            BoardOp(id: OperationID(replica: ReplicaID(1), seq: 0), lamport: 1, change: .select(letter)),
            BoardOp(id: OperationID(replica: ReplicaID(1), seq: 1), lamport: 0, change: .select(letter)),
            BoardOp(id: OperationID(replica: ReplicaID(1), seq: 1), lamport: Board.maxLamport + 1, change: .select(letter)),
        ]
        let report = b.receive(bad)
        #expect(report.refused.count == 3)
        for refusal in report.refused {
            guard case .malformed = refusal else {
                Issue.record("expected malformed, got \(refusal)")
                continue
            }
            #expect(refusal.description.contains("malformed"))
        }
        #expect(b.state.order.isEmpty)
        #expect(b.versions == VersionVector())
        #expect(b.clock == 0)
        expectInvariants(b)
    }

    @Test func c1ClockGoingBackIsRefused() throws {
        var b = board(2)
        let first = BoardOp(id: OperationID(replica: ReplicaID(1), seq: 1), lamport: 5, change: .select(tile("A")))
        let backwards = BoardOp(id: OperationID(replica: ReplicaID(1), seq: 2), lamport: 4, change: .select(tile("B")))
        b.receive(first)
        let report = b.receive(backwards)
        #expect(report.refused == [.clockWentBack(backwards.id)])
        #expect(orderText(b) == "A")
        #expect(b.versions[ReplicaID(1)] == 1)
        let tied = BoardOp(id: OperationID(replica: ReplicaID(1), seq: 2), lamport: 5, change: .select(tile("B")))
        #expect(b.receive(tied).refused == [.clockWentBack(tied.id)], "an equal time is not later either")
        expectInvariants(b)
    }

    @Test func c1LateOperationReplaysThroughTheLog() throws {
        var a = board(1), b = board(2), hub = board(9)
        let early = try select(&a, "A")
        try select(&b, "BCD") // lamport 1...3 from b
        hub.receive(try select(&b, "EF"))
        #expect(hub.state.order.isEmpty, "b's 4 and 5 wait for 1...3")
        hub.receive(b.log)
        #expect(orderText(hub) == "BCDEF")
        let report = hub.receive(early)
        #expect(orderText(hub) == "ABCDEF", "A at Lamport 1 from replica 1 is ordered first")
        #expect(report.changedState)
    }
}
