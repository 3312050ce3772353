extension SetTable {
    /// Every broken invariant of a Set table (empty when all hold). Before
    /// the first game (game 0) the table is empty. Once a game is dealt:
    /// S1 every one of the 81 cards is in exactly one of table, deck and
    /// taken, so no place holds a taken card; S3/S6 12 to 81 places and a
    /// deck of a multiple of three; S5 every match is a set whose player's
    /// score counts it, so scores sum to the matches; S4/S5 a pick holds at
    /// most three distinct table cards, three only as a mismatch (which is
    /// no set); `last` is a settled pick, the newest match when a set.
    public static func violations(of state: State) -> [String] {
        var problems: [String] = []
        guard state.game > 0 else {
            if state.game < 0 { problems.append("game number \(state.game) is negative") }
            if !state.table.isEmpty || !state.deck.isEmpty || !state.matches.isEmpty || !state.players.isEmpty || state.last != nil {
                problems.append("no game is dealt, yet the table is not empty")
            }
            return problems
        }
        // S1: where each card is.
        var table = [Int](repeating: 0, count: Card.all.count)
        var deck = table, taken = table
        for card in state.cardsOnTable { table[Int(card.index)] += 1 }
        for card in state.deck { deck[Int(card.index)] += 1 }
        for match in state.matches {
            for card in match.cards { taken[Int(card.index)] += 1 }
        }
        for card in Card.all {
            let i = Int(card.index)
            let count = table[i] + deck[i] + taken[i]
            if count != 1 {
                problems.append("\(card) is \(count) times among table (\(table[i])), deck (\(deck[i])) and taken (\(taken[i]))")
            }
        }
        if !(openingTable...Card.all.count).contains(state.table.count) {
            problems.append("the table has \(state.table.count) places, not 12 to 81")
        }
        if state.deck.count % dealSize != 0 { problems.append("the deck holds \(state.deck.count) cards, not a multiple of 3") }

        // S5: matches and scores.
        var scored: [String: Int] = [:]
        for match in state.matches {
            if match.cards.count != pickSize || !Card.isSet(match.cards[0], match.cards[1], match.cards[2]) {
                problems.append("\(match.player) took \(match.cards), which is not a set")
            }
            scored[match.player, default: 0] += 1
            if state.players[match.player] == nil { problems.append("\(match.player) took a set but is not a player") }
        }
        for (name, player) in state.players {
            if player.score != scored[name, default: 0] {
                problems.append("\(name) scores \(player.score) but took \(scored[name, default: 0]) sets")
            }
            if player.misses < 0 { problems.append("\(name) has \(player.misses) misses") }
            // S4: picks.
            if player.picked.count > pickSize { problems.append("\(name) picked \(player.picked.count) cards") }
            if Set(player.picked).count != player.picked.count { problems.append("\(name) picked a card twice: \(player.picked)") }
            for card in player.picked where table[Int(card.index)] == 0 {
                problems.append("\(name) picked \(card), which is not on the table")
            }
            for card in player.lost where state.takenBy(card) == nil {
                problems.append("\(name) lost \(card) to a match, but no match took it")
            }
            if player.seen.count > pickSize || Set(player.seen).count != player.seen.count {
                problems.append("\(name) saw a pick of \(player.seen)")
            }
            if player.mismatch != (player.picked.count == pickSize) {
                problems.append("\(name) has \(player.picked.count) picked and mismatch \(player.mismatch)")
            }
            if player.picked.count == pickSize, Card.isSet(player.picked[0], player.picked[1], player.picked[2]) {
                problems.append("\(name)'s mismatch \(player.picked) is a set")
            }
        }
        // S5: the last settled pick.
        if let last = state.last {
            let isSet = last.cards.count == pickSize && Card.isSet(last.cards[0], last.cards[1], last.cards[2])
            if last.cards.count != pickSize { problems.append("the last pick has \(last.cards.count) cards") }
            if state.players[last.player] == nil { problems.append("the last pick's \(last.player) is not a player") }
            switch last.result {
            case .set:
                if !isSet { problems.append("the last pick \(last.cards) is called a set") }
                if state.matches.last != Match(player: last.player, cards: last.cards) {
                    problems.append("the last pick, a set, is not the newest match")
                }
            case .notSet:
                if isSet { problems.append("the last pick \(last.cards) is called not a set") }
            }
        }
        return problems
    }
}
