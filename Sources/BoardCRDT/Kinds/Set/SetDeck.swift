/// The seeded shuffle of a new game (S3, K15): the seed is drawn once, when
/// the `new_game` is prepared, and recorded in its change; every replica
/// that replays it deals exactly the same deck. Written here, not taken from
/// the standard library, whose `shuffle(using:)` promises no particular
/// algorithm across versions.
public enum SetDeck {
    /// The 81 cards in the order the game with `seed` deals them: the first
    /// 12 go to the table, the rest are the deck, top first.
    public static func shuffled(seed: UInt64) -> [Card] {
        var generator = SplitMix64(seed: seed)
        var cards = Card.all
        // Fisher-Yates, from the end.
        for i in stride(from: cards.count - 1, to: 0, by: -1) {
            cards.swapAt(i, generator.below(i + 1))
        }
        return cards
    }

    /// SplitMix64 (Steele, Lea, Flood 2014): 64 bits of state, fixed output
    /// for a given seed on every platform.
    struct SplitMix64 {
        var state: UInt64
        init(seed: UInt64) { state = seed }

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }

        /// Uniform in 0..<bound (bound > 0), without modulo bias: draws
        /// again when the value falls in the incomplete last block.
        mutating func below(_ bound: Int) -> Int {
            let n = UInt64(max(bound, 1))
            let limit = UInt64.max - UInt64.max % n
            while true {
                let value = next()
                if value < limit { return Int(value % n) }
            }
        }
    }
}
