import Testing
@testable import BoardCRDT

/// docs/rules/letters.md B3-B10 on one replica: the sequential rules every merge replays.
@Suite struct SequentialRuleTests {
    @Test func b3NewBoardIsEmpty() {
        let replica = board(1)
        #expect(replica.state.order.isEmpty)
        #expect(replica.versions == VersionVector())
        expectInvariants(replica)
    }

    @Test func b3ResetBoardIsEmpty() throws {
        var replica = board(1)
        try select(&replica, "QRS")
        try perform(&replica, .reset)
        #expect(replica.state.order.isEmpty)
        expectInvariants(replica)
    }

    @Test func b4SelectJoinsTheEnd() throws {
        var replica = board(1)
        try select(&replica, "K")
        #expect(replica.state.place(of: tile("K")) == 1)
        try select(&replica, "CZAB")
        #expect(orderText(replica) == "KCZAB")
        try select(&replica, "D")
        #expect(replica.state.place(of: tile("D")) == 6, "with five selected, the next pick is 6")
        expectInvariants(replica)
    }

    @Test func b5SeventhSelectIsRefusedWithAMessage() throws {
        var replica = board(1)
        try select(&replica, "ABCDEF")
        let versions = replica.versions
        #expect(throws: BoardRefusal.boardFull) { try replica.perform(.select(tile("G"))) }
        #expect(orderText(replica) == "ABCDEF")
        #expect(replica.versions == versions, "a refusal records nothing")
        #expect(BoardRefusal.boardFull.code == "board_full")
        #expect(BoardRefusal.boardFull.message == "at most 6 letters can be selected")
    }

    @Test func b5SelectingASelectedLetterOnAFullBoardIsNotRefused() throws {
        var replica = board(1)
        try select(&replica, "ABCDEF")
        #expect(try replica.perform(.select(tile("C"))) == nil)
    }

    @Test func b6DeselectRenumbersTheRest() throws {
        var replica = board(1)
        try select(&replica, "ABCD")
        try perform(&replica, .deselect(tile("B")))
        #expect(orderText(replica) == "ACD")
        #expect(replica.state.place(of: tile("C")) == 2)
        #expect(replica.state.place(of: tile("D")) == 3)
        #expect(replica.state.place(of: tile("B")) == nil)
    }

    @Test func b7MoveBackwardDropsOntoAPlace() throws {
        var replica = board(1)
        try select(&replica, "FDA")
        let op = try perform(&replica, .move(tile("A"), to: 2))[0]
        #expect(orderText(replica) == "FAD")
        #expect(op.change == .move(tile("A"), anchor: tile("D"), side: .before, place: 2), "the drop names the neighbour it landed beside")
    }

    @Test func b7MoveForwardDropsOntoAPlace() throws {
        var replica = board(1)
        try select(&replica, "ABCD")
        let op = try perform(&replica, .move(tile("A"), to: 3))[0]
        #expect(orderText(replica) == "BCAD")
        #expect(op.change == .move(tile("A"), anchor: tile("C"), side: .after, place: 3))
        try perform(&replica, .move(tile("B"), to: 4))
        #expect(orderText(replica) == "CADB")
    }

    @Test func b8ResetClearsForEveryone() throws {
        var a = board(1), b = board(2)
        try select(&a, "ABC")
        syncBoth(&a, &b)
        try perform(&b, .reset)
        syncBoth(&a, &b)
        #expect(a.state.order.isEmpty)
        #expect(b.state.order.isEmpty)
    }

    @Test func b9RepeatedRequestsChangeNothing() throws {
        var replica = board(1)
        try select(&replica, "AB")
        let before = replica.versions
        #expect(try replica.perform(.select(tile("A"))) == nil, "select of a selected letter")
        #expect(try replica.perform(.deselect(tile("Z"))) == nil, "deselect of an unselected letter")
        #expect(try replica.perform(.move(tile("B"), to: 2)) == nil, "move to its own place")
        #expect(replica.versions == before)
        #expect(orderText(replica) == "AB")
        try perform(&replica, .reset)
        #expect(try replica.perform(.reset) == nil, "reset of an empty board")
    }

    @Test func b9RetriedOperationFromAnotherReplicaChangesNothing() throws {
        var a = board(1), b = board(2)
        let ops = try select(&a, "AB")
        b.receive(ops)
        let report = b.receive(ops)
        #expect(report.duplicates == 2)
        #expect(report.integrated.isEmpty)
        #expect(!report.changedState)
        #expect(orderText(b) == "AB")
    }

    @Test func b10MoveOfAnUnselectedLetterIsRefused() throws {
        var replica = board(1)
        try select(&replica, "AB")
        #expect(throws: BoardRefusal.notSelected(tile("Q"))) { try replica.perform(.move(tile("Q"), to: 1)) }
        #expect(BoardRefusal.notSelected(tile("Q")).code == "not_selected")
        #expect(BoardRefusal.notSelected(tile("Q")).message == "Q is not selected, so it cannot be moved; select it first")
        #expect(orderText(replica) == "AB")
    }

    @Test(arguments: [0, 3, -1, Int.max, Int.min])
    func b10MoveOutsideThePlacesIsRefused(place: Int) throws {
        var replica = board(1)
        try select(&replica, "AB")
        #expect(throws: BoardRefusal.placeOutOfRange(place, count: 2)) { try replica.perform(.move(tile("A"), to: place)) }
        #expect(orderText(replica) == "AB")
        #expect(replica.versions[ReplicaID(1)] == 2)
    }

    @Test func b10RefusalsHaveCodesAndMessages() {
        let outside = BoardRefusal.placeOutOfRange(9, count: 3)
        #expect(outside.code == "bad_place")
        #expect(outside.message == "place 9 is outside 1...3, the places of the selected letters")
        #expect(BoardRefusal.placeOutOfRange(1, count: 0).message == "place 1 does not exist: no letters are selected")
        #expect("\(BoardRefusal.boardFull)" == BoardRefusal.boardFull.message)
    }

    @Test func b10LettersOutsideAToZDoNotExist() {
        #expect(Letter("a") == nil)
        #expect(Letter("AB") == nil)
        #expect(Letter("") == nil)
        #expect(Letter("[") == nil)
        #expect(Letter("@") == nil)
        #expect(Letter("Ä") == nil)
        #expect(Letter(index: 26) == nil)
        #expect(Letter(index: -1) == nil)
        #expect(Letter("Z")?.index == 25)
        #expect(Letter.all.map(\.description).joined() == "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "B1")
    }
}
