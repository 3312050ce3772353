/// The Set table (docs/rules/set.md): the card game Set on a shared table,
/// each player with a pick of their own, the hub's total order settling
/// races (SC1-SC4). The second `BoardKind`.
///
/// Changes carry what replay needs: a new game its shuffle seed (S3, K15),
/// a deal and a choose the game they were made in (SC4), a choose also the
/// pick its author saw (SC2). `apply` never draws randomness.
public enum SetTable: BoardKind {
    public static let name = "set"
    /// S3: cards laid on the table by a new game.
    public static let openingTable = 12
    /// S6: cards a deal moves.
    public static let dealSize = 3
    /// S4/S5: the pick that settles; a pick of fewer toggles.
    public static let pickSize = 3
    /// Players one game seats (S10 registers one per name): bounds the state.
    public static let maxPlayers = 64

    /// What a person does.
    public enum Intent: Equatable, Sendable {
        /// S4/S5: toggle a table card in the player's pick; the third settles it.
        case choose(Card)
        /// S6: "Deal 3 More Cards".
        case deal
        /// S3/S10: a fresh shuffle; `nil` draws the seed when prepared.
        case newGame(seed: UInt64?)
    }

    /// An intent resolved against its author's view.
    public enum Change: Equatable, Sendable {
        /// S3: shuffle with `seed` (drawn once, K15), deal 12, wipe scores,
        /// picks and `last`; the game number goes up by one.
        case newGame(seed: UInt64)
        /// S6 in game number `game`; refused `new_game` in a later game
        /// (SC4): three more cards asked for the old table are not piled
        /// onto a freshly dealt one.
        case deal(game: Int)
        /// S4/S5 in game number `game` (refused `new_game` in a later one,
        /// SC4). `seen` is the author's pick when they chose: if this choose
        /// settles a pick of three and a card of `seen` was meanwhile taken
        /// by someone else's match, it is refused `taken` (SC2); if `seen`
        /// was a mismatch (three cards), it releases them (S5).
        case choose(Card, game: Int, seen: [Card])
    }

    /// S3 (last sentence): no game dealt yet. The hub performs the wire
    /// adapter's `opening`, `.newGame(seed: nil)`, on a board nobody has
    /// played; until then `choose` and `deal` are refused `no_game`.
    public static var initialState: State { State() }

    public static func prepare(_ intent: Intent, by author: String = "", in state: State) throws(SetRefusal) -> Change? {
        switch intent {
        case let .newGame(seed):
            // S3, K15: the only randomness, drawn here and recorded.
            var generator = SystemRandomNumberGenerator()
            return .newGame(seed: seed ?? generator.next())
        case .deal:
            if let refusal = playRefusal(game: state.game, in: state) { throw refusal }
            guard !state.deck.isEmpty else { throw .deckEmpty }
            return .deal(game: state.game)
        case let .choose(card):
            if let refusal = playRefusal(game: state.game, in: state) ?? cardRefusal(card, in: state) { throw refusal }
            if state.players[author] == nil, state.players.count >= maxPlayers { throw .tableFull }
            return .choose(card, game: state.game, seen: state.players[author]?.seen ?? [])
        }
    }

    public static func apply(_ operation: Operation<Change>, to state: inout State) -> Outcome<SetRefusal> {
        switch operation.change {
        case let .newGame(seed):
            startGame(seed: seed, in: &state)
            return .applied
        case let .deal(game):
            if let refusal = playRefusal(game: game, in: state) { return .refused(refusal) }
            guard !state.deck.isEmpty else { return .refused(.deckEmpty) }
            deal(in: &state)
            return .applied
        case let .choose(card, game, seen):
            if let refusal = playRefusal(game: game, in: state) ?? cardRefusal(card, in: state) { return .refused(refusal) }
            return choose(card, seen: seen, by: operation.author, in: &state)
        }
    }

    /// Why nothing can be played in game `game` now: no game dealt yet,
    /// a new game started since (SC4), or the game is over (S7).
    static func playRefusal(game: Int, in state: State) -> SetRefusal? {
        if state.game == 0 { return .noGame }
        if game != state.game { return .newGame }
        if state.over { return .gameOver }
        return nil
    }

    /// S8: a card a match took is `taken`, one still in the deck `not_on_table`.
    static func cardRefusal(_ card: Card, in state: State) -> SetRefusal? {
        if let taker = state.takenBy(card) { return .taken(card, by: taker) }
        if state.place(of: card) == nil { return .notOnTable(card) }
        return nil
    }

    /// S3: a fresh shuffle, 12 cards on the table, the rest the deck; every
    /// player, score, pick and `last` wiped.
    static func startGame(seed: UInt64, in state: inout State) {
        let cards = SetDeck.shuffled(seed: seed)
        state = State(
            game: state.game < Int.max ? state.game + 1 : state.game,
            table: cards.prefix(openingTable).map { Optional($0) },
            deck: Array(cards.dropFirst(openingTable))
        )
    }

    /// S6/SC3: up to three deck cards, into holes first, then at the end.
    /// Picks are untouched.
    static func deal(in state: inout State) {
        for _ in 0..<dealSize where !state.deck.isEmpty {
            let card = state.deck.removeFirst()
            if let hole = state.table.firstIndex(where: { $0 == nil }) {
                state.table[hole] = card
            } else {
                state.table.append(card)
            }
        }
    }

    /// S4, S5, SC2, S10 for a table card of the current game.
    ///
    /// S10: the author becomes a player (score 0) with their first applied
    /// choose; a refused choose changes nothing (K11), so it registers nobody.
    static func choose(_ card: Card, seen: [Card], by author: String, in state: inout State) -> Outcome<SetRefusal> {
        // SC2: this choose would settle the pick its author saw, but someone
        // else's match took a card of it meanwhile. SC1 already dropped that
        // card from the pick; the rest stays picked.
        if seen.count == pickSize - 1, !seen.contains(card),
           let lost = seen.first(where: { state.takenBy($0) != nil }), let taker = state.takenBy(lost) {
            // The player has now been told: their view is the pick as it is.
            state.players[author]?.lost = []
            return .refused(.taken(lost, by: taker))
        }
        let before = state.players[author]
        guard before != nil || state.players.count < maxPlayers else { return .refused(.tableFull) }
        var player = before ?? Player()
        player.lost = []
        if seen.count >= pickSize || player.mismatch || player.picked.count > pickSize - 1 {
            // S5: after a mismatch, any table card releases the three and
            // starts a fresh pick, also one of the three.
            player.picked = [card]
            player.mismatch = false
        } else if let index = player.picked.firstIndex(of: card) {
            player.picked.remove(at: index)                 // S4: un-pick
        } else if player.picked.count < pickSize - 1 {
            player.picked.append(card)                      // S4: pick
        } else {
            settle(player.picked + [card], player: &player, by: author, in: &state)
        }
        var shownBefore = before
        shownBefore?.lost = []
        if player == shownBefore {
            // Nothing shown changed; what the player saw is up to date now.
            if before != nil { state.players[author] = player }
            return .unchanged
        }
        state.players[author] = player
        return .applied
    }

    /// S5: the third card settles the pick. A match scores, takes the three
    /// off the table (refilling each place in place, in table order, from
    /// the top of the deck, or leaving a hole) and drops them from every
    /// other pick (SC1); a mismatch stays picked, marked, and counts a miss.
    static func settle(_ cards: [Card], player: inout Player, by author: String, in state: inout State) {
        guard cards.count == pickSize, Card.isSet(cards[0], cards[1], cards[2]) else {
            player.misses = player.misses < Int.max ? player.misses + 1 : player.misses
            player.picked = cards
            player.mismatch = true
            state.last = LastPick(player: author, cards: cards, result: .notSet)
            return
        }
        player.score = player.score < Int.max ? player.score + 1 : player.score
        player.picked = []
        player.mismatch = false
        state.matches.append(Match(player: author, cards: cards))
        state.last = LastPick(player: author, cards: cards, result: .set)
        for place in cards.compactMap({ state.place(of: $0) }).sorted() {
            state.table[place] = state.deck.isEmpty ? nil : state.deck.removeFirst()
        }
        for name in Array(state.players.keys) where name != author {
            guard var other = state.players[name], other.picked.contains(where: cards.contains) else { continue }
            // A pick about to be settled remembers what it lost (SC2); a
            // settled mismatch has nothing left to settle.
            if !other.mismatch { other.lost += other.picked.filter(cards.contains) }
            other.picked.removeAll(where: cards.contains)
            // A mismatch that lost a card is no longer three: a plain pick.
            other.mismatch = false
            state.players[name] = other
        }
    }
}

/// Every refusal a person can meet at the Set table (S6-S8, SC2-SC4).
public enum SetRefusal: KindRefusal, CustomStringConvertible {
    /// `no_game`: nothing dealt yet (before the board's opening new game).
    case noGame
    /// `new_game` (SC4): the choose or deal was made in a game that a
    /// `new_game` ordered before it has replaced.
    case newGame
    /// `game_over` (S7): deck empty, no set on the table.
    case gameOver
    /// `taken` (S8, SC2): a match took the card; names who took it.
    case taken(Card, by: String)
    /// `not_on_table` (S8): the card is still in the deck.
    case notOnTable(Card)
    /// `deck_empty` (S6, SC3).
    case deckEmpty
    /// `table_full`: a game seats at most `SetTable.maxPlayers` players, so
    /// the shared state stays bounded whatever names clients make up.
    case tableFull

    /// Stable snake_case code for the wire.
    public var code: String {
        switch self {
        case .noGame: "no_game"
        case .newGame: "new_game"
        case .gameOver: "game_over"
        case .taken: "taken"
        case .notOnTable: "not_on_table"
        case .deckEmpty: "deck_empty"
        case .tableFull: "table_full"
        }
    }

    public var message: String {
        switch self {
        case .noGame: "no game has been dealt yet; start a new game"
        case .newGame: "a new game started; look at the new table and try again"
        case .gameOver: "the game is over: the deck is empty and no set is left on the table; start a new game"
        case let .taken(card, name) where name.isEmpty: "\(card) was just taken by another player"
        case let .taken(card, name): "\(card) was just taken by \(name)"
        case let .notOnTable(card): "\(card) is not on the table; it is still in the deck"
        case .deckEmpty: "the deck is empty; there are no more cards to deal"
        case .tableFull: "this game already has \(SetTable.maxPlayers) players; watch, or join the next game"
        }
    }

    public var description: String { message }
}
