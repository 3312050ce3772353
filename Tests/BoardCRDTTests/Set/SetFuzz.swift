@testable import BoardCRDT

/// The Set table in the convergence fuzz (connection topology; see
/// `SetConvergenceTests`): clients under player names (sometimes two under
/// one name, one person on two devices) choose cards, often a good one
/// (completing the pick), deal and start new games, so matches, races for
/// cards, empty decks and game over all happen; sometimes every replica
/// starts late in a game. The hub deals the first game of a fresh board (its
/// opening), sometimes late, so clients meet `no_game` first. Every Set
/// intent changes the state or is refused, and a prepared one applies (but
/// for SC2's told-once `taken`); `SetTable.violations` holds everywhere.
extension SetTable: FuzzedKind {
    typealias Ledger = Void

    static var fuzz: FuzzSetup {
        FuzzSetup(title: "Set", knobs: FuzzKnobs(prefix: "BOARDCRDT_SET", defaultSeed: 0x5E7_7AB1E, defaultSchedules: 40 * 2, shards: 2),
                  filter: "SetConvergence", topology: .connections, steps: 40...120)
    }

    /// Sometimes a checkpoint late in a game, so empty decks, holes and
    /// game over come within reach.
    static func start(_ rng: inout SplitMix64) -> (state: State, late: Bool) {
        guard rng.percent(35) else { return (initialState, false) }
        var dealer = Table(id: ReplicaID(5_000), limits: ReplicaLimits(compacts: false))
        _ = try? dealer.perform(.newGame(seed: rng.next()), by: "")
        let deckLeft = 3 * rng.inRange(0...4)
        while dealer.state.deck.count > deckLeft {
            let before = dealer.state
            for card in aSet(on: dealer.state) ?? [] { _ = try? dealer.perform(.choose(card), by: "zed") }
            if dealer.state == before { _ = try? dealer.perform(.deal, by: "zed") }
            if dealer.state == before { break }
        }
        return (dealer.state, true)
    }

    /// S3: the hub deals the first game of a fresh board, sometimes late.
    static func openingStep(_ rng: inout SplitMix64, late: Bool) -> Int? {
        late ? nil : rng.percent(85) ? 0 : rng.inRange(1...10)
    }

    static func openingIntent(_ rng: inout SplitMix64) -> Intent? { .newGame(seed: rng.next()) }

    static func randomIntent(_ rng: inout SplitMix64, in state: State, by name: String) -> Intent {
        let roll = rng.below(1000)
        if roll < 12 || (state.over && rng.percent(30)) { return .newGame(seed: rng.next()) }
        if roll < 100 || (state.setsOnTable == 0 && rng.percent(70)) { return .deal }
        let onTable = state.cardsOnTable
        let anyCard = Card.all[rng.below(Card.all.count)]
        guard !onTable.isEmpty, !rng.percent(8) else { return .choose(anyCard) }
        let pick = state.players[name]?.picked ?? []
        if !pick.isEmpty, rng.percent(10) { return .choose(pick[rng.below(pick.count)]) }
        var shuffled = onTable
        rng.shuffle(&shuffled)
        if rng.percent(75) {
            switch pick.count {
            case 2:
                return .choose(Card.completing(pick[0], pick[1]))
            case 1:
                if let partner = shuffled.first(where: { $0 != pick[0] && onTable.contains(Card.completing(pick[0], $0)) }) {
                    return .choose(partner)
                }
            case 0:
                for (i, a) in shuffled.enumerated() {
                    if let b = shuffled[(i + 1)...].first(where: { onTable.contains(Card.completing(a, $0)) }) {
                        return .choose(rng.percent(50) ? a : b)
                    }
                }
            default:
                break
            }
        }
        return .choose(shuffled[0])
    }

    static func localProblems(_ intent: Intent, by name: String, before: Replica<Self>, after: Replica<Self>,
                              result: Result<Operation<Change>?, Refusal>, counts: inout FuzzCounts) -> [String] {
        switch result {
        case let .success(op?):
            let outcome = after.outcome(of: op.id)
            // SC2 told once: a choose settling a pick that lost a card to a
            // match is recorded (it clears the player's `lost`) and refused.
            var toldTaken = false
            if case .refused(.taken)? = outcome, before.state.players[name]?.lost.isEmpty == false { toldTaken = true }
            if outcome != .applied, !toldTaken { return ["\(intent) by \(name) was prepared but applying it gave \(outcome as Any)"] }
            if after.state == before.state { return ["\(intent) by \(name) applied without changing the state"] }
            return []
        case .success(nil):
            return ["\(intent) by \(name) recorded nothing; every Set intent changes something or is refused"]
        case .failure:
            return []
        }
    }

    static func tookBack(_ change: Change, now outcome: Outcome<Refusal>, counts: inout FuzzCounts) {
        counts.bump(outcome.isRefused ? "taken back on their author" : "other own outcomes changed")
    }

    static func countStep(_ replicas: [Replica<Self>], counts: inout FuzzCounts) {
        if replicas[0].state.over { counts.bump("steps with the game over") }
        counts.atLeast("most matches in a game", replicas[0].state.matches.count)
    }

    static func describe(_ state: State) -> String { "game \(state.game) \(places(state))" }
}
