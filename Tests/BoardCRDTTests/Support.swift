import Testing
@testable import BoardCRDT

typealias Board = Replica<LetterBoard>
typealias BoardOp = Operation<LetterBoard.Change>

/// `"C"` as a tile; only for literals the test itself writes.
func tile(_ text: String) -> Letter {
    guard let letter = Letter(text) else { preconditionFailure("test literal \(text) is not a letter") }
    return letter
}

/// `"ABC"` as the letters A, B, C.
func tiles(_ text: String) -> [Letter] { text.map { tile(String($0)) } }

/// The selection order as a string, `"FAD"`, to keep expectations short.
func orderText(_ replica: Board) -> String { replica.state.order.map(\.description).joined() }

/// A replica with a readable id; small ids order before large ones when
/// Lamport times tie.
func board(_ id: UInt64, limits: ReplicaLimits = ReplicaLimits(compacts: false)) -> Board {
    Board(id: ReplicaID(id), limits: limits)
}

/// Performs intents that must each record an operation; returns them.
@discardableResult
func perform(_ replica: inout Board, _ intents: LetterBoard.Intent...) throws -> [BoardOp] {
    var ops: [BoardOp] = []
    for intent in intents {
        let op = try #require(try replica.perform(intent), "\(intent) recorded nothing")
        ops.append(op)
    }
    return ops
}

/// Selects the letters of `text` in order.
@discardableResult
func select(_ replica: inout Board, _ text: String) throws -> [BoardOp] {
    var ops: [BoardOp] = []
    for letter in tiles(text) { ops += try perform(&replica, .select(letter)) }
    return ops
}

/// Sends `target` everything `source` has that it lacks (checkpoint included).
@discardableResult
func sync(_ source: Board, to target: inout Board,
          freshID: ReplicaID = ReplicaID(999)) -> (adopt: AdoptReport<LetterBoard.Change>, merge: MergeReport<LetterBoard>) {
    target.apply(source.delta(for: target.versions, remoteFrontier: target.checkpoint.frontier), freshID: { freshID })
}

/// Syncs both ways, `a` to `b` first.
func syncBoth(_ a: inout Board, _ b: inout Board) {
    sync(a, to: &b)
    sync(b, to: &a)
}

/// Fails the test with every broken invariant of `replica`.
func expectInvariants(_ replica: Board, sourceLocation: SourceLocation = #_sourceLocation) {
    let problems = replica.checkInvariants()
    #expect(problems.isEmpty, "\(problems)", sourceLocation: sourceLocation)
}
