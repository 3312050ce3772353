extension SetTable {
    /// The shared table (S1-S10): what every replica converges to.
    public struct State: Equatable, Sendable {
        /// 0 before the first game (S3); one more with every `new_game`, so
        /// a choose or deal names the game it was made in (SC4).
        public var game: Int
        /// The places in order; `nil` is a hole a match left once the deck
        /// was used up (S5), filled first by the next deal (S6).
        public var table: [Card?]
        /// The face-down cards, top first (S3).
        public var deck: [Card]
        /// The sets taken this game, in order, each with who took it (S5, SC2).
        public var matches: [Match]
        /// Everyone who has chosen a card this game (S10), by name.
        public var players: [String: Player]
        /// The most recently settled pick, nil after a new game (S3).
        public var last: LastPick?

        public init(game: Int = 0, table: [Card?] = [], deck: [Card] = [], matches: [Match] = [],
                    players: [String: Player] = [:], last: LastPick? = nil) {
            self.game = game
            self.table = table
            self.deck = deck
            self.matches = matches
            self.players = players
            self.last = last
        }

        /// The cards on the table, in place order, holes left out.
        public var cardsOnTable: [Card] { table.compactMap { $0 } }

        /// The index of `card`'s place on the table, nil when it is not there.
        public func place(of card: Card) -> Int? {
            table.firstIndex { $0 == card }
        }

        /// Who took `card` in a match this game (S8, SC2), nil if nobody did.
        public func takenBy(_ card: Card) -> String? {
            matches.last { $0.cards.contains(card) }?.player
        }

        /// The cards matches took this game, in the order taken.
        public var taken: [Card] { matches.flatMap(\.cards) }

        /// S9: how many sets the table holds.
        public var setsOnTable: Int { countSets(stoppingAtFirst: false) }

        /// S7: the deck is empty and the table holds no set. Never true
        /// before the first game.
        public var over: Bool { game > 0 && deck.isEmpty && countSets(stoppingAtFirst: true) == 0 }

        /// Counts every set {a, b, c} once, as the pair a < b whose
        /// completing card c lies on the table above b (S2): O(n^2).
        private func countSets(stoppingAtFirst: Bool) -> Int {
            let cards = cardsOnTable.sorted()
            var onTable = [Bool](repeating: false, count: Card.all.count)
            for card in cards { onTable[Int(card.index)] = true }
            var count = 0
            for i in cards.indices {
                for j in cards.indices where j > i && cards[j] != cards[i] {
                    let third = Card.completing(cards[i], cards[j])
                    guard third > cards[j], onTable[Int(third.index)] else { continue }
                    count += 1
                    if stoppingAtFirst { return count }
                }
            }
            return count
        }
    }

    /// One player's standing and pick (S4, S5, S10).
    public struct Player: Equatable, Codable, Sendable {
        /// Matches this game (S5).
        public var score: Int
        /// Mismatches this game (S5).
        public var misses: Int
        /// 0-3 table cards in the order chosen (S4); three only as a mismatch.
        public var picked: [Card]
        /// The three picked cards are a settled mismatch (S5).
        public var mismatch: Bool
        /// Cards someone else's match took out of this pick (SC1) since this
        /// player last chose: the pick as they last saw it is `picked + lost`,
        /// so their next choose that would have settled it is refused
        /// `taken` (SC2), for a thin client exactly as for a replica.
        /// Bookkeeping, not shown in `state` frames; cleared by the player's
        /// next choose, applied or refused `taken`.
        public var lost: [Card]

        public init(score: Int = 0, misses: Int = 0, picked: [Card] = [], mismatch: Bool = false, lost: [Card] = []) {
            self.score = score
            self.misses = misses
            self.picked = picked
            self.mismatch = mismatch
            self.lost = lost
        }

        /// The pick as its player last saw it (SC2).
        public var seen: [Card] { picked + lost }
    }

    /// A set a player took (S5): its three cards left the table.
    public struct Match: Equatable, Codable, Sendable {
        public var player: String
        public var cards: [Card]
        public init(player: String, cards: [Card]) {
            self.player = player
            self.cards = cards
        }
    }

    /// The latest completed pick of three (S5), shown as `last`.
    public struct LastPick: Equatable, Codable, Sendable {
        public var player: String
        /// In the order they were chosen.
        public var cards: [Card]
        public var result: PickResult
        public init(player: String, cards: [Card], result: PickResult) {
            self.player = player
            self.cards = cards
            self.result = result
        }
    }

    /// `"set"` or `"not_set"` on the wire.
    public enum PickResult: String, Codable, Sendable {
        case set
        case notSet = "not_set"
    }
}
