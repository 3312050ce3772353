import BoardCRDT

/// A match everyone sees for a moment (SV3): the three cards and the places
/// they left, counted down by the controller's ticks.
struct MatchFlash: Equatable, Sendable {
    var player: String
    var cards: [Card]
    /// The table places the three cards were taken from.
    var places: [Int]
    var ticksLeft: Int

    /// Ticks (about 50 ms each) a match stays on screen.
    static let duration = 24
    /// While more ticks than this are left, the leaving cards themselves are
    /// drawn at their places; after, the cards that replaced them.
    static let leavingUntil = 12

    var showsLeavingCards: Bool { ticksLeft > Self.leavingUntil }

    /// The leaving card drawn at `place`, during the first half.
    func leavingCard(at place: Int) -> Card? {
        guard showsLeavingCards, let index = places.firstIndex(of: place), index < cards.count else { return nil }
        return cards[index]
    }
}

/// Everything `SetScreen` needs to draw one frame of the Set table: the
/// shared table from the replica plus what only this viewer sees (cursor,
/// a pending New Game confirmation, the latest refusal, a match flash).
struct SetScreenModel: Equatable, Sendable {
    var boardName: String
    /// The person's `--name`; nil acts as the hub's `guest-N`, which the
    /// local replica knows as "" until the hub's order comes back.
    var me: String?
    var connection: ConnectionState = .connecting
    var clients: Int?
    /// Names of the people on the table (the hub's `names`).
    var names: [String] = []
    var table: SetTable.State = SetTable.initialState
    /// The table place the keyboard is on (0-based).
    var cursor: Int = 0
    /// First card row shown when the table does not fit (SV1).
    var scroll: Int = 0
    /// `n` was pressed: waiting for y or n.
    var confirmingNewGame = false
    /// The latest refusal of this person's intent (SV5), until they act again.
    var refusal: String?
    var flash: MatchFlash?

    init(boardName: String, me: String? = nil) {
        self.boardName = boardName
        self.me = me
    }

    /// The viewer's name as their replica's operations carry it.
    var ownName: String { me ?? "" }

    var ownPlayer: SetTable.Player? { table.players[ownName] }

    /// The card at `place`, nil for a hole or past the end.
    func card(at place: Int) -> Card? {
        place >= 0 && place < table.table.count ? table.table[place] : nil
    }

    /// Everyone to list with a score: the players of this game and the
    /// people here who have not chosen a card yet, by name.
    var everyone: [String] {
        Array(Set(table.players.keys).union(names)).sorted()
    }

    /// A short marker per other player (SV3): the first letter of the name,
    /// upper case, with a digit added when two players share it.
    var markers: [String: String] {
        var used: [String: Int] = [:]
        var result: [String: String] = [:]
        for name in table.players.keys.sorted() where name != ownName {
            let initial = name.first.map { String($0).uppercased() } ?? "?"
            let count = used[initial, default: 0]
            used[initial] = count + 1
            result[name] = count == 0 ? initial : initial + String(count + 1)
        }
        return result
    }

    /// Other players whose pick holds `card`, with their mismatch flag.
    func otherPicks(of card: Card) -> [(name: String, mismatch: Bool)] {
        table.players.keys.sorted().compactMap { name in
            guard name != ownName, let player = table.players[name], player.picked.contains(card) else { return nil }
            return (name, player.mismatch)
        }
    }
}
