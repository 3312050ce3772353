import Testing
@testable import BoardCRDT

/// docs/rules/set.md S1-S10 on one replica: the sequential rules every merge
/// replays.
@Suite struct SetRuleTests {
    // MARK: S1 cards

    @Test func s1DeckHas81DistinctCardsWithFourCharacterCodes() {
        #expect(Card.all.count == 81)
        #expect(Set(Card.all.map(\.code)).count == 81)
        for card in Card.all {
            #expect(card.code.count == 4)
            #expect(Card(code: card.code) == card)
            #expect(Card(index: Int(card.index)) == card)
        }
        #expect(Card(index: 81) == nil && Card(index: -1) == nil)
    }

    @Test func s1CodeGivesNumberShapeShadingColourInThatOrder() {
        let threeOpenPurpleDiamonds = card("3DOP")
        #expect(threeOpenPurpleDiamonds.number == .three && threeOpenPurpleDiamonds.number.count == 3)
        #expect(threeOpenPurpleDiamonds.shape == .diamond)
        #expect(threeOpenPurpleDiamonds.shading == .open)
        #expect(threeOpenPurpleDiamonds.colour == .purple)
        let oneSolidGreenSquiggle = card("1SFG")
        #expect(oneSolidGreenSquiggle == Card(number: .one, shape: .squiggle, shading: .solid, colour: .green))
        #expect(card("2OTR") == Card(number: .two, shape: .oval, shading: .striped, colour: .red))
    }

    @Test(arguments: ["4DFR", "1XFR", "0DFR", "2sfr", "2SFRR", "2SF", "", " 2SFR", "2SFR ", "2ŞFR", "1DFRx"])
    func s1CodesThatAreNoCardAreRefused(_ code: String) {
        #expect(Card(code: code) == nil)
    }

    @Test func s1CardsAreNamedInWordsNumberFirst() {
        #expect(card("2SFR").words == "two solid red squiggles")
        #expect(card("1DOP").words == "one open purple diamond")
        #expect(card("3OTG").words == "three striped green ovals")
        #expect(card("3DOP").words == "three open purple diamonds")
        #expect(card("1SFG").words == "one solid green squiggle")
        #expect(Set(Card.all.map(\.words)).count == 81)
    }

    @Test func s1EveryCardIsInExactlyOnePlaceThroughAWholeGame() throws {
        var replica = table(1)
        try play(&replica, .newGame(seed: 7), by: "ana")
        expectTableInvariants(replica)
        try playOut(&replica, by: "ana", toTheEnd: true)
        expectTableInvariants(replica)
        let state = replica.state
        let everywhere = state.cardsOnTable + state.deck + state.taken
        #expect(everywhere.count == 81 && Set(everywhere).count == 81)
    }

    @Test func s1ViolationsNameBrokenTables() {
        var state = dealt(twelve)
        #expect(SetTable.violations(of: state).isEmpty)
        #expect(SetTable.violations(of: SetTable.initialState).isEmpty)

        var twice = state
        twice.deck.append(card("1DFR"))
        #expect(SetTable.violations(of: twice).contains { $0.contains("1DFR is 2 times") })

        var missing = state
        missing.deck.removeLast()
        #expect(!SetTable.violations(of: missing).isEmpty)

        var takenOnTable = state
        takenOnTable.matches = [SetTable.Match(player: "ana", cards: cards("1DFR 2DFR 3DFR"))]
        takenOnTable.players["ana"] = SetTable.Player(score: 1)
        #expect(SetTable.violations(of: takenOnTable).contains { $0.contains("1DFR is 2 times") })

        var offTable = state
        offTable.players["ana"] = SetTable.Player(picked: cards("3OOP"))
        #expect(SetTable.violations(of: offTable).contains { $0.contains("not on the table") })

        var four = state
        four.players["ana"] = SetTable.Player(picked: cards("1DFR 2DFR 1SFR 1OFR"), mismatch: true)
        #expect(!SetTable.violations(of: four).isEmpty)

        var unmarked = state
        unmarked.players["ana"] = SetTable.Player(picked: cards("1DFR 2DFR 1SFR"))
        #expect(SetTable.violations(of: unmarked).contains { $0.contains("mismatch false") })

        var scoreWithoutMatch = state
        scoreWithoutMatch.players["ana"] = SetTable.Player(score: 1)
        #expect(SetTable.violations(of: scoreWithoutMatch).contains { $0.contains("took 0 sets") })

        var holesOnly = state
        holesOnly.table = Array(holesOnly.table.prefix(9))
        #expect(!SetTable.violations(of: holesOnly).isEmpty)

        state.game = 0
        #expect(SetTable.violations(of: state).contains { $0.contains("no game is dealt") })
    }

    // MARK: S2 sets

    @Test func s2SetWhenEveryFeatureIsAllSameOrAllDifferent() {
        #expect(Card.isSet(card("1DFR"), card("2SFR"), card("3OFR")))
        #expect(!Card.isSet(card("1DFR"), card("2DFR"), card("2DFG")))
        #expect(Card.isSet(card("1DFR"), card("2STG"), card("3OOP")), "all four features differ")
        #expect(!Card.isSet(card("1DFR"), card("1DFR"), card("1DFR")), "a set is three distinct cards")
    }

    @Test func s2AnyTwoCardsHaveExactlyOneCompletingCard() {
        #expect(Card.completing(card("1DFR"), card("2DTG")) == card("3DOP"))
        for a in Card.all {
            for b in Card.all where b != a {
                let completing = Card.all.filter { Card.isSet(a, b, $0) }
                #expect(completing == [Card.completing(a, b)])
            }
        }
    }

    // MARK: S3 new game

    @Test func s3BoardNobodyPlayedHasNoGameUntilOneIsDealt() throws {
        var replica = table(1)
        #expect(replica.state == SetTable.initialState && replica.state.game == 0)
        #expect(!replica.state.over && replica.state.setsOnTable == 0)
        #expect(refusal(&replica, .choose(card("1DFR")), by: "ana") == .noGame)
        #expect(refusal(&replica, .deal, by: "ana") == .noGame)
        #expect(SetRefusal.noGame.code == "no_game")
        #expect(replica.log.isEmpty)
        try play(&replica, .newGame(seed: nil), by: "")
        #expect(replica.state.game == 1)
        expectTableInvariants(replica)
    }

    @Test func s3NewGameLaysTwelveAndKeepsSixtyNineAsTheDeck() throws {
        var replica = table(1)
        try play(&replica, .newGame(seed: 99), by: "ana")
        let dealtOrder = SetDeck.shuffled(seed: 99)
        #expect(replica.state.table == dealtOrder.prefix(12).map { Optional($0) })
        #expect(replica.state.deck == Array(dealtOrder.dropFirst(12)))
        #expect(replica.state.deck.count == 69)
        #expect(replica.state.players.isEmpty && replica.state.last == nil && replica.state.matches.isEmpty)
    }

    @Test func s3SeedIsDrawnOnceAndReplayedEverywhere() throws {
        var ana = table(1), bo = table(2)
        let op = try play(&ana, .newGame(seed: nil), by: "ana")
        guard case .newGame = op.change else {
            Issue.record("a new game recorded \(op.change)")
            return
        }
        sync(ana, to: &bo)
        #expect(bo.state == ana.state, "the seed in the operation deals the same deck on every replica")
        bo.replay()
        #expect(bo.state == ana.state, "replaying never draws again")
    }

    @Test func s3SameSeedDealsTheSameDeckOnEveryVersion() {
        #expect(SetDeck.shuffled(seed: 42) == SetDeck.shuffled(seed: 42))
        #expect(SetDeck.shuffled(seed: 42) != SetDeck.shuffled(seed: 43))
        #expect(SetDeck.shuffled(seed: 42).sorted() == Card.all)
        // Pinned: stored games replay with this shuffle after any upgrade.
        #expect(codes(Array(SetDeck.shuffled(seed: 1).prefix(12))) == "3DTG 3OFR 3DTR 2SFR 2STP 2DOP 3DFG 1DTR 3DTP 3SOR 1DFP 1SFP")
        #expect(codes(Array(SetDeck.shuffled(seed: 0).prefix(12))) == "2OOG 1DFP 2SFG 3DTR 1STR 2STP 2SOG 3OOG 3DOG 2DFR 3STR 2SOR")
    }

    @Test func s3NewGameWipesScoresPicksAndLast() throws {
        var replica = table(1, dealt(twelve))
        try choose(&replica, "1DFR 2DFR 3DFR", by: "ana")
        try choose(&replica, "1SFR 1DFG 2SFG", by: "bo")
        try choose(&replica, "3OFG", by: "cy")
        #expect(replica.state.players.count == 3 && replica.state.last != nil)
        try play(&replica, .newGame(seed: 5), by: "bo")
        #expect(replica.state.game == 2)
        #expect(replica.state.players.isEmpty && replica.state.matches.isEmpty && replica.state.last == nil)
        #expect(replica.state.table.count == 12 && replica.state.deck.count == 69)
        expectTableInvariants(replica)
    }

    // MARK: S4 picks

    @Test func s4ChooseTogglesAPickOfUpToTwo() throws {
        var replica = table(1, dealt(twelve))
        try choose(&replica, "1DFR", by: "ana")
        #expect(replica.state.players["ana"]?.picked == cards("1DFR"))
        try choose(&replica, "2SFG", by: "ana")
        #expect(replica.state.players["ana"]?.picked == cards("1DFR 2SFG"))
        try choose(&replica, "1DFR", by: "ana")
        #expect(replica.state.players["ana"]?.picked == cards("2SFG"), "choosing a picked card un-picks it")
        try choose(&replica, "2SFG", by: "ana")
        #expect(replica.state.players["ana"]?.picked == [])
        #expect(replica.state.players["ana"] == SetTable.Player(), "a player with nothing picked stays a player")
        expectTableInvariants(replica)
    }

    @Test func s4EveryPlayerHasTheirOwnPickEveryoneSees() throws {
        var replica = table(1, dealt(twelve))
        try choose(&replica, "1DFR 2DFR", by: "ana")
        try choose(&replica, "1DFR", by: "bo")
        #expect(replica.state.players["ana"]?.picked == cards("1DFR 2DFR"))
        #expect(replica.state.players["bo"]?.picked == cards("1DFR"))
    }

    // MARK: S5 settling a pick

    @Test func s5MatchScoresAndRefillsInPlace() throws {
        var replica = table(1, dealt(twelve, deckTop: "3SOG 2OTR 1STP"))
        try choose(&replica, "3DFR 1DFR", by: "ana")
        try choose(&replica, "2DFR", by: "ana")
        let state = replica.state
        #expect(state.players["ana"] == SetTable.Player(score: 1, misses: 0, picked: [], mismatch: false))
        // 1DFR, 2DFR, 3DFR sat at places 0, 1, 2: refilled in table order from the top.
        #expect(places(state).hasPrefix("3SOG 2OTR 1STP 1SFR"))
        #expect(state.table.count == 12 && state.deck.count == 66)
        #expect(state.taken == cards("3DFR 1DFR 2DFR"))
        #expect(state.last == SetTable.LastPick(player: "ana", cards: cards("3DFR 1DFR 2DFR"), result: .set))
        #expect(state.takenBy(card("2DFR")) == "ana")
        expectTableInvariants(replica)
    }

    @Test func s5MatchWithTheDeckUsedUpLeavesHoles() throws {
        var replica = table(1)
        try play(&replica, .newGame(seed: 3), by: "ana")
        try playOut(&replica, by: "ana")
        #expect(replica.state.deck.isEmpty)
        let set = try #require(aSet(on: replica.state), "seed 3 leaves a set once the deck is empty")
        let where_ = set.compactMap { replica.state.place(of: $0) }
        let count = replica.state.table.count
        for card in set { try play(&replica, .choose(card), by: "bo") }
        #expect(replica.state.table.count == count, "places stay")
        for place in where_ { #expect(replica.state.table[place] == nil) }
        #expect(replica.state.players["bo"]?.score == 1)
        expectTableInvariants(replica)
    }

    @Test func s5MismatchStaysPickedAndCountsAMiss() throws {
        var replica = table(1, dealt(twelve))
        try choose(&replica, "1DFR 2DFR 1SFR", by: "ana")
        let state = replica.state
        #expect(state.players["ana"] == SetTable.Player(score: 0, misses: 1, picked: cards("1DFR 2DFR 1SFR"), mismatch: true))
        #expect(state.last == SetTable.LastPick(player: "ana", cards: cards("1DFR 2DFR 1SFR"), result: .notSet))
        #expect(places(state) == places(dealt(twelve)), "a mismatch takes nothing")
        expectTableInvariants(replica)
    }

    @Test func s5NextChooseAfterAMismatchStartsAFreshPick() throws {
        var replica = table(1, dealt(twelve))
        try choose(&replica, "1DFR 2DFR 1SFR", by: "ana")
        try choose(&replica, "3OFG", by: "ana")
        #expect(replica.state.players["ana"]?.picked == cards("3OFG"))
        #expect(replica.state.players["ana"]?.mismatch == false)
        #expect(replica.state.players["ana"]?.misses == 1)

        try choose(&replica, "1DFR 2DFR", by: "bo")
        try choose(&replica, "1OFR", by: "bo")
        try choose(&replica, "2DFR", by: "bo")
        #expect(replica.state.players["bo"]?.picked == cards("2DFR"), "also when it is one of the three")
        #expect(replica.state.last?.player == "bo")
        expectTableInvariants(replica)
    }

    // MARK: S6 deal

    @Test func s6DealAddsThreeAtTheEndWhenThereAreNoHoles() throws {
        var replica = table(1, dealt(twelve, deckTop: "3SOG 2OTR 1STP"))
        try play(&replica, .deal, by: "ana")
        #expect(replica.state.table.count == 15)
        #expect(places(replica.state).hasSuffix("2OOP 3SOG 2OTR 1STP"))
        #expect(replica.state.deck.count == 66)
        #expect(replica.state.players.isEmpty, "dealing makes nobody a player")
    }

    @Test func s6DealFillsHolesBeforeAddingAtTheEnd() throws {
        // Holes only appear once the deck is used up, so this table, with a
        // hole at place 0 and cards left to deal, is made up by hand.
        let onTable = cards("1SFR 1OFR 1DFG 2SFG 3OFG 2DTP 3STP 1OOG 2OOP 3SOG 2OTR 1STP")
        let taken = cards("1DFR 2DFR 3DFR")
        let top = cards("3OOP 2OOG 1STR")
        let rest = Card.all.filter { !onTable.contains($0) && !taken.contains($0) && !top.contains($0) }
        let state = SetTable.State(game: 1, table: [nil] + onTable.map { Optional($0) }, deck: top + rest,
                                   matches: [SetTable.Match(player: "ana", cards: taken)],
                                   players: ["ana": SetTable.Player(score: 1)])
        #expect(SetTable.violations(of: state).isEmpty, "\(SetTable.violations(of: state))")
        var replica = table(1, state)
        try play(&replica, .deal, by: "bo")
        #expect(replica.state.table.count == 15)
        #expect(places(replica.state).hasPrefix("3OOP 1SFR"), "the hole first")
        #expect(places(replica.state).hasSuffix("1STP 2OOG 1STR"), "then the end")
        expectTableInvariants(replica)
    }

    @Test func s6DealLeavesPicksUntouched() throws {
        var replica = table(1, dealt(twelve))
        try choose(&replica, "1DFR 2DFR 1SFR", by: "ana")
        try choose(&replica, "1OOG", by: "bo")
        let players = replica.state.players
        try play(&replica, .deal, by: "bo")
        #expect(replica.state.players == players)
    }

    @Test func s6DealOnAnEmptyDeckIsRefusedDeckEmpty() throws {
        var replica = table(1)
        try play(&replica, .newGame(seed: 3), by: "ana")
        try playOut(&replica, by: "ana")
        #expect(!replica.state.over, "seed 3 has a set left")
        let before = replica.state
        #expect(refusal(&replica, .deal, by: "bo") == .deckEmpty)
        #expect(replica.state == before)
        #expect(SetRefusal.deckEmpty.code == "deck_empty")
    }

    // MARK: S7 game over

    @Test func s7GameOverRefusesChooseAndDealUntilANewGame() throws {
        var replica = table(1)
        try play(&replica, .newGame(seed: 21), by: "ana")
        try playOut(&replica, by: "ana", toTheEnd: true)
        #expect(replica.state.over && replica.state.setsOnTable == 0 && replica.state.deck.isEmpty)
        let onTable = try #require(replica.state.cardsOnTable.first)
        #expect(refusal(&replica, .choose(onTable), by: "ana") == .gameOver)
        #expect(refusal(&replica, .deal, by: "bo") == .gameOver)
        #expect(SetRefusal.gameOver.code == "game_over")
        try play(&replica, .newGame(seed: nil), by: "bo")
        #expect(!replica.state.over)
        try play(&replica, .choose(try #require(replica.state.cardsOnTable.first)), by: "ana")
        expectTableInvariants(replica)
    }

    // MARK: S8 cards that cannot be chosen

    @Test func s8ChooseOfATakenCardIsRefusedTaken() throws {
        var replica = table(1, dealt(twelve))
        try choose(&replica, "1DFR 2DFR 3DFR", by: "bo")
        let before = replica.state
        #expect(refusal(&replica, .choose(card("2DFR")), by: "ana") == .taken(card("2DFR"), by: "bo"))
        #expect(SetRefusal.taken(card("1DFR"), by: "bo").message == "1DFR was just taken by bo")
        #expect(SetRefusal.taken(card("1DFR"), by: "bo").code == "taken")
        #expect(replica.state == before)
    }

    @Test func s8ChooseOfADeckCardIsRefusedNotOnTable() throws {
        var replica = table(1, dealt(twelve))
        #expect(refusal(&replica, .choose(card("3OOP")), by: "ana") == .notOnTable(card("3OOP")))
        #expect(SetRefusal.notOnTable(card("3OOP")).code == "not_on_table")
        #expect(replica.log.isEmpty)
    }

    // MARK: S9 sets on the table

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func s9SetsOnTableCountsEverySet(_ seed: UInt64) throws {
        var replica = table(1)
        try play(&replica, .newGame(seed: seed), by: "ana")
        var rounds = 0
        while rounds < 40 {
            rounds += 1
            let onTable = replica.state.cardsOnTable
            var expected = 0
            for i in onTable.indices {
                for j in onTable.indices where j > i {
                    for k in onTable.indices where k > j && Card.isSet(onTable[i], onTable[j], onTable[k]) { expected += 1 }
                }
            }
            #expect(replica.state.setsOnTable == expected)
            if replica.state.over { break }
            if let set = aSet(on: replica.state), rounds % 3 != 0 {
                for card in set { try play(&replica, .choose(card), by: "ana") }
            } else if !replica.state.deck.isEmpty {
                try play(&replica, .deal, by: "ana")
            }
        }
        #expect(dealt(twelve).setsOnTable >= 3)
    }

    // MARK: S10 players

    @Test func s10FirstChooseMakesAPlayerWithScoreZero() throws {
        var replica = table(1, dealt(twelve))
        #expect(replica.state.players["ana"] == nil)
        try choose(&replica, "1DFR", by: "ana")
        #expect(replica.state.players["ana"] == SetTable.Player(score: 0, misses: 0, picked: cards("1DFR"), mismatch: false))
    }

    /// The state stays bounded whatever names clients make up: a game seats
    /// `maxPlayers`; a further name is refused `table_full`, those seated play on.
    @Test func s10AGameSeatsAtMostMaxPlayers() throws {
        var replica = table(1, dealt(twelve))
        for n in 0..<SetTable.maxPlayers {
            try choose(&replica, n % 2 == 0 ? "1DFR" : "2DFR", by: "p\(n)")
        }
        #expect(replica.state.players.count == SetTable.maxPlayers)
        #expect(refusal(&replica, .choose(card("1DFR")), by: "one-too-many") == .tableFull)
        try choose(&replica, "3DFR", by: "p0")
        #expect(replica.state.players["p0"]?.picked == cards("1DFR 3DFR"))
        expectTableInvariants(replica)
    }

    @Test func s10RefusedChooseMakesNoPlayer() throws {
        var replica = table(1, dealt(twelve))
        #expect(refusal(&replica, .choose(card("3OOP")), by: "ana") == .notOnTable(card("3OOP")))
        #expect(replica.state.players["ana"] == nil, "a refusal changes nothing (K11)")
    }

    @Test func s10AnyoneMayStartANewGame() throws {
        var replica = table(1, dealt(twelve))
        try choose(&replica, "1DFR 2DFR 3DFR", by: "ana")
        try play(&replica, .newGame(seed: 8), by: "guest-4")
        #expect(replica.state.game == 2 && replica.state.players.isEmpty)
    }
}
