import Testing
@testable import BoardCRDT

/// docs/rules/set.md SC1-SC4: several players at once, the hub's total order
/// deciding; plus `apply`'s promise to take any change in any state.
@Suite struct SetConcurrentTests {
    @Test func sc1MatchDropsItsCardsFromEveryOtherPick() throws {
        var replica = table(1, dealt(twelve))
        try choose(&replica, "1DFR 1SFR", by: "bo")
        try choose(&replica, "2DFR 1SFR 1DFG", by: "cy")
        #expect(replica.state.players["cy"]?.mismatch == true)
        try choose(&replica, "2SFG", by: "dee")
        try choose(&replica, "1DFR 2DFR 3DFR", by: "ana")
        #expect(replica.state.players["bo"]?.picked == cards("1SFR"), "the rest of bo's pick stays")
        #expect(replica.state.players["cy"]?.picked == cards("1SFR 1DFG"), "a mismatch that lost a card is a plain pick of two")
        #expect(replica.state.players["cy"]?.mismatch == false)
        #expect(replica.state.players["cy"]?.misses == 1)
        #expect(replica.state.players["dee"]?.picked == cards("2SFG"))
        expectTableInvariants(replica)
        // cy's pick of two now completes normally.
        try choose(&replica, "1OFR", by: "cy")
        #expect(replica.state.players["cy"]?.misses == 2, "1SFR 1DFG 1OFR is no set")
    }

    /// Ana and Bo complete sets sharing 1DFR at the same time; whoever the
    /// hub orders first scores.
    @Test(arguments: [true, false])
    func sc2FirstOfTwoSetsSharingACardScoresTheOtherIsRefusedTaken(anaFirst: Bool) throws {
        var hub = hubTable(100, dealt(twelve))
        var ana = table(1, dealt(twelve)), bo = table(2, dealt(twelve))
        let anaOps = try choose(&ana, "2DFR 3DFR 1DFR", by: "ana")
        let boOps = try choose(&bo, "1DFR 1SFR 1OFR", by: "bo")
        #expect(ana.state.players["ana"]?.score == 1 && bo.state.players["bo"]?.score == 1, "each scored on their own screen")

        // The loser's first two chooses reach the hub before the winner's
        // match, its settling choose after it.
        let (winner, loser) = anaFirst ? ("ana", "bo") : ("bo", "ana")
        let (winnerOps, loserOps) = anaFirst ? (anaOps, boOps) : (boOps, anaOps)
        var relayed = hubTakes(&hub, Array(loserOps.prefix(2)))
        relayed += hubTakes(&hub, winnerOps)
        relayed += hubTakes(&hub, [loserOps[2]])
        #expect(hub.outcome(of: loserOps[2].id) == .refused(.taken(card("1DFR"), by: winner)))
        #expect(SetRefusal.taken(card("1DFR"), by: winner).message == "1DFR was just taken by \(winner)")
        #expect(hub.state.players[winner]?.score == 1)
        #expect(hub.state.players[loser]?.score == 0, "the other scores nothing")
        let kept = anaFirst ? cards("1SFR") : cards("2DFR 3DFR")
        #expect(hub.state.players[loser]?.picked == kept, "and keeps the picked cards still on the table")
        #expect(hub.state.last?.player == winner)

        // Relayed back: the loser's replica takes its match back and is told.
        let anaReport = ana.receive(relayed)
        let boReport = bo.receive(relayed)
        let loserReport = anaFirst ? boReport : anaReport
        #expect(loserReport.changedOutcomes.contains { $0.0 == loserOps[2].id && $0.1 == .refused(.taken(card("1DFR"), by: winner)) })
        #expect(ana.state == hub.state && bo.state == hub.state)
        for replica in [hub, ana, bo] { expectTableInvariants(replica) }
    }

    /// SC2 for thin clients, whose intents the hub prepares on its own
    /// state: bo picked the shared card and another; ana's match took the
    /// shared card first (SC1 dropped it from bo's pick); bo's settling
    /// choose is still refused `taken`, once, and bo keeps the card still on
    /// the table. The next choose plays normally.
    @Test func sc2AThinClientsSettlingChooseAfterItsCardWasTakenIsRefusedOnce() throws {
        var hub = hubTable(100, dealt(twelve))
        try #require(try hub.perform(.choose(card("1DFR")), by: "bo") != nil)
        try #require(try hub.perform(.choose(card("1SFR")), by: "bo") != nil)
        _ = try choose(&hub, "2DFR 3DFR 1DFR", by: "ana")
        #expect(hub.state.players["bo"]?.picked == cards("1SFR"), "SC1: the taken card left bo's pick")
        let refused = try #require(try hub.perform(.choose(card("1OFR")), by: "bo"))
        #expect(hub.outcome(of: refused.id) == .refused(.taken(card("1DFR"), by: "ana")))
        #expect(hub.state.players["bo"]?.picked == cards("1SFR"), "bo keeps what is still on the table")
        #expect(hub.state.players["bo"]?.score == 0)
        let next = try #require(try hub.perform(.choose(card("1OFR")), by: "bo"))
        #expect(hub.outcome(of: next.id) == .applied, "told once: the next choose plays")
        #expect(hub.state.players["bo"]?.picked == cards("1SFR 1OFR"))
        expectTableInvariants(hub)
    }

    @Test func sc3ConcurrentDealsDealWhileTheDeckLasts() throws {
        var start = table(9)
        try play(&start, .newGame(seed: 4), by: "")
        while start.state.deck.count > 6 {
            if let set = aSet(on: start.state) {
                for card in set { try play(&start, .choose(card), by: "ana") }
            } else {
                try play(&start, .deal, by: "ana")
            }
        }
        let state = start.state
        #expect(state.deck.count == 6 && !state.over)
        var hub = hubTable(100, state)
        var clients = [table(1, state), table(2, state), table(3, state)]
        var deals: [TableOp] = []
        for index in clients.indices { deals.append(try play(&clients[index], .deal, by: "p\(index)")) }
        let relayed = hubTakes(&hub, deals)
        #expect(deals.map { hub.outcome(of: $0.id) } == [.applied, .applied, .refused(.deckEmpty)])
        #expect(hub.state.deck.isEmpty)
        #expect(hub.state.cardsOnTable.count == state.cardsOnTable.count + 6)
        for index in clients.indices {
            let report = clients[index].receive(relayed)
            #expect(clients[index].state == hub.state)
            if index == 2 { #expect(report.changedOutcomes.map(\.1) == [.refused(.deckEmpty)]) }
        }
    }

    @Test func sc4NewGameRacingWithPlaySplitsItCleanly() throws {
        var hub = hubTable(100, dealt(twelve))
        var ana = table(1, dealt(twelve)), bo = table(2, dealt(twelve)), cy = table(3, dealt(twelve))
        let anaOps = try choose(&ana, "1DFR 2DFR", by: "ana")
        let newGame = try play(&bo, .newGame(seed: 77), by: "bo")
        let cyOps = [try play(&cy, .choose(card("1SFR")), by: "cy"), try play(&cy, .deal, by: "cy")]

        var relayed = hubTakes(&hub, [anaOps[0]])
        relayed += hubTakes(&hub, [newGame])
        relayed += hubTakes(&hub, [anaOps[1]] + cyOps)
        #expect(hub.outcome(of: anaOps[0].id) == .applied, "ordered before: counts on the old table")
        #expect(hub.outcome(of: anaOps[1].id) == .refused(.newGame))
        #expect(hub.outcome(of: cyOps[0].id) == .refused(.newGame))
        #expect(hub.outcome(of: cyOps[1].id) == .refused(.newGame), "a deal for the old table does not pile onto the new one")
        #expect(SetRefusal.newGame.code == "new_game")
        var fresh = table(7)
        try play(&fresh, .newGame(seed: 77), by: "bo")
        #expect(hub.state.table == fresh.state.table && hub.state.deck == fresh.state.deck)
        #expect(hub.state.players.isEmpty && hub.state.game == 2)

        // Replaying gives the same result on every replica, whatever order
        // the relayed operations arrive in.
        var late = table(4, dealt(twelve))
        late.receive(relayed.reversed())
        for index in [0, 1, 2] {
            var replica = [ana, bo, cy][index]
            replica.receive(relayed)
            #expect(replica.state == hub.state)
            for op in relayed { #expect(replica.outcome(of: op.id) == hub.outcome(of: op.id)) }
        }
        #expect(late.state == hub.state)
        expectTableInvariants(late)
    }

    @Test func sc4ChooseMadeBeforeANewGameItDidNotSeeIsRefusedOnEveryReplica() throws {
        // Without a sealing hub: Lamport order alone puts the choose after
        // the new game (it was made later), and every replica agrees.
        var ana = table(1, dealt(twelve)), bo = table(2, dealt(twelve))
        let newGame = try play(&bo, .newGame(seed: 5), by: "bo")
        _ = try play(&bo, .choose(try #require(bo.state.cardsOnTable.first)), by: "bo")
        try choose(&ana, "1DFR", by: "ana")
        try choose(&ana, "2DFR", by: "ana")
        let choose3 = try play(&ana, .choose(card("3DFR")), by: "ana")
        sync(ana, to: &bo)
        sync(bo, to: &ana)
        #expect(ana.state == bo.state)
        #expect(ana.outcome(of: newGame.id) == .applied)
        #expect(ana.outcome(of: choose3.id) == bo.outcome(of: choose3.id))
        expectTableInvariants(ana)
        expectTableInvariants(bo)
    }

    /// `apply` takes any change in any state (stale games, picks that no
    /// longer match, duplicates) without trapping, keeps every invariant,
    /// and says `.applied` exactly when the state changed.
    @Test func applyAcceptsEveryChangeInEveryState() throws {
        var states: [SetTable.State] = [SetTable.initialState]
        var replica = table(1, dealt(twelve))
        try choose(&replica, "2DFR 1SFR 1DFG", by: "cy")
        try choose(&replica, "1DFR 1OFR", by: "bo")
        try choose(&replica, "2SFG", by: "ana")
        states.append(replica.state)
        var long = table(2)
        try play(&long, .newGame(seed: 3), by: "")
        try playOut(&long, by: "ana")
        try choose(&long, codes(Array(long.state.cardsOnTable.prefix(2))), by: "bo")
        states.append(long.state)
        try playOut(&long, by: "ana", toTheEnd: true)
        states.append(long.state)

        var changes: [SetTable.Change] = [.newGame(seed: 5), .deal(game: 0), .deal(game: 1), .deal(game: 2), .deal(game: -3)]
        for card in Card.all {
            let others = Card.all.filter { $0 != card }
            let seens: [[Card]] = [[], [card], [others[0]], [others[0], others[40]], [others[7], others[3], others[70]],
                                   [card, card], Array(others.prefix(5))]
            for game in [1, 2] {
                for seen in seens { changes.append(.choose(card, game: game, seen: seen)) }
            }
        }
        // Picks as they are in the states above, so settling paths run too.
        for state in states {
            for (_, player) in state.players where !player.picked.isEmpty {
                for card in state.cardsOnTable { changes.append(.choose(card, game: state.game, seen: player.picked)) }
            }
        }
        var seq: UInt64 = 0
        for state in states {
            #expect(SetTable.violations(of: state).isEmpty)
            for change in changes {
                for author in ["", "ana", "bo", "cy"] {
                    seq += 1
                    var after = state
                    let outcome = SetTable.apply(Operation(id: OperationID(replica: ReplicaID(1), seq: seq), lamport: seq, author: author,
                                                           change: change), to: &after)
                    // A `taken` refusal may clear the author's hidden `lost`
                    // (SC2 told once); nothing shown changes.
                    var shownAfter = after, shownBefore = state
                    for name in shownAfter.players.keys { shownAfter.players[name]?.lost = [] }
                    for name in shownBefore.players.keys { shownBefore.players[name]?.lost = [] }
                    #expect((outcome == .applied) == (shownAfter != shownBefore), "\(change) by \(author): \(outcome)")
                    if outcome.isRefused { #expect(shownAfter == shownBefore, "a refusal changes nothing shown") }
                    let problems = SetTable.violations(of: after)
                    #expect(problems.isEmpty, "\(change) by \(author): \(problems)")
                }
            }
        }
    }

    /// A choose delivered twice as two operations (a resend without a key)
    /// toggles twice; the engine drops a true duplicate (same id).
    @Test func duplicatedChangesAndOperationsStayDeterministic() throws {
        var ana = table(1, dealt(twelve)), bo = table(2, dealt(twelve))
        let op = try play(&ana, .choose(card("1DFR")), by: "ana")
        let report = bo.receive([op, op, op])
        #expect(report.duplicates == 2)
        #expect(bo.state == ana.state)
        let again = try play(&ana, .choose(card("1DFR")), by: "ana")
        bo.receive(again)
        #expect(bo.state.players["ana"]?.picked == [])
        #expect(bo.state == ana.state)
    }
}
