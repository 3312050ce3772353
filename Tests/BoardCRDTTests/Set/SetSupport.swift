import Testing
@testable import BoardCRDT

typealias Table = Replica<SetTable>
typealias TableOp = Operation<SetTable.Change>

/// `"2SFR"` as a card; only for literals the test itself writes.
func card(_ code: String) -> Card {
    guard let card = Card(code: code) else { preconditionFailure("test literal \(code) is not a card") }
    return card
}

/// `"1DFR 2SFR 3OFR"` as cards.
func cards(_ codes: String) -> [Card] { codes.split(separator: " ").map { card(String($0)) } }

/// Codes of a list of cards, space-separated, to keep expectations short.
func codes(_ list: [Card]) -> String { list.map(\.code).joined(separator: " ") }

/// The table's places as codes, `-` for a hole.
func places(_ state: SetTable.State) -> String { state.table.map { $0?.code ?? "-" }.joined(separator: " ") }

/// A replica whose board starts from `state` (game 0 when nil).
func table(_ id: UInt64, _ state: SetTable.State? = nil, limits: ReplicaLimits = ReplicaLimits(compacts: false)) -> Table {
    let checkpoint = Checkpoint<SetTable>(state: state ?? SetTable.initialState, frontier: .origin, versions: VersionVector())
    return Table(id: ReplicaID(id), checkpoint: checkpoint, limits: limits)
}

/// Game 1 with exactly `onTable` laid out (in that order) and every other
/// card in the deck, in card order unless `deckTop` names the top cards.
func dealt(_ onTable: String, deckTop: String = "") -> SetTable.State {
    let laid = cards(onTable)
    let top = cards(deckTop)
    let rest = Card.all.filter { !laid.contains($0) && !top.contains($0) }
    return SetTable.State(game: 1, table: laid.map { Optional($0) }, deck: top + rest)
}

/// The twelve cards most rule tests start from. Sets among them include
/// `1DFR 2DFR 3DFR`, `1DFR 1SFR 1OFR` and `1DFG 2SFG 3OFG`.
let twelve = "1DFR 2DFR 3DFR 1SFR 1OFR 1DFG 2SFG 3OFG 2DTP 3STP 1OOG 2OOP"

/// Performs an intent that must record an operation; returns it.
@discardableResult
func play(_ replica: inout Table, _ intent: SetTable.Intent, by name: String) throws -> TableOp {
    let op = try #require(try replica.perform(intent, by: name), "\(intent) recorded nothing")
    #expect(replica.outcome(of: op.id) == .applied, "\(intent) by \(name) was prepared but not applied")
    return op
}

/// Chooses each card of `codes` in turn as `name`.
@discardableResult
func choose(_ replica: inout Table, _ codes: String, by name: String) throws -> [TableOp] {
    try cards(codes).map { try play(&replica, .choose($0), by: name) }
}

/// The refusal `intent` meets, or nil if it was accepted.
func refusal(_ replica: inout Table, _ intent: SetTable.Intent, by name: String) -> SetRefusal? {
    do {
        try replica.perform(intent, by: name)
        return nil
    } catch {
        return error
    }
}

/// Some set on the table, nil when there is none.
func aSet(on state: SetTable.State) -> [Card]? {
    let onTable = state.cardsOnTable
    for (i, a) in onTable.enumerated() {
        for b in onTable[(i + 1)...] {
            let c = Card.completing(a, b)
            if c != a, c != b, onTable.contains(c) { return [a, b, c] }
        }
    }
    return nil
}

/// Takes sets (dealing when there is none) as `name` until the deck is
/// empty; then, with `toTheEnd`, until the game is over.
func playOut(_ replica: inout Table, by name: String, toTheEnd: Bool = false) throws {
    while !replica.state.deck.isEmpty || (toTheEnd && !replica.state.over) {
        if let set = aSet(on: replica.state) {
            for card in set { try play(&replica, .choose(card), by: name) }
        } else {
            try play(&replica, .deal, by: name)
        }
    }
}

/// Sends `target` everything `source` has that it lacks.
@discardableResult
func sync(_ source: Table, to target: inout Table) -> MergeReport<SetTable> {
    target.apply(source.delta(for: target.versions, remoteFrontier: target.checkpoint.frontier), freshID: { ReplicaID(999) }).merge
}

/// Fails the test with every broken invariant of `replica`.
func expectTableInvariants(_ replica: Table, sourceLocation: SourceLocation = #_sourceLocation) {
    let problems = replica.checkInvariants()
    #expect(problems.isEmpty, "\(problems)", sourceLocation: sourceLocation)
}

/// A hub replica as SyncHub runs it: an acknowledged operation is final.
func hubTable(_ id: UInt64, _ state: SetTable.State? = nil) -> Table {
    table(id, state, limits: ReplicaLimits(sealsOrder: true))
}

/// The hub merges `ops` in this order; returns what it integrated (re-stamped
/// where the total order was sealed), which it relays to every client.
func hubTakes(_ hub: inout Table, _ ops: [TableOp]) -> [TableOp] {
    let report = hub.receive(ops)
    #expect(report.refused.isEmpty, "\(report.refused)")
    return report.integratedOperations
}
