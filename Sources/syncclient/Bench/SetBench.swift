import BoardCRDT

/// Which kind of board a bench drives (`--kind`).
enum BenchKind: String, Sendable, CaseIterable {
    /// Letter boards at `/boards/NAME`: moves of A-F (the default).
    case letters
    /// Set tables at `/set/NAME`: named players choosing cards.
    case set
    /// Juice bars at `/stock/NAME`: named clients making juices and restocking.
    case stock
    /// Reminder lists at `/todo/NAME`: named clients editing, ticking, adding and deleting items.
    case todo
    /// Banchan shops at `/shop/NAME`: named customers ordering, now and then restocking.
    case shop

    var pathSegment: String {
        switch self {
        case .letters: "boards"
        case .set: "set"
        case .stock: "stock"
        case .todo: "todo"
        case .shop: "shop"
        }
    }
}

/// What a Set bench player reads from a `state` frame (docs/rules/set.md,
/// "Frames"), scanned in place without allocating beyond the card list:
/// the game, the table, the deck's size, `sets_on_table`, `over`, and the
/// player's own entry (score, misses, pick).
struct SetView {
    var game = 0
    var table: [Card] = []
    var deck = 0
    var setsOnTable = 0
    var over = false
    var score = 0
    var misses = 0
    var picked: [Card] = []
    var mismatch = false
    /// Where the kind's members begin (`"game":`): equal tails from here on,
    /// with equal versions, are equal tables (the convergence check).
    var kindMembersAt = 0

    /// `playerKey` is the player's name as a JSON key: `"p3":{`.
    init?(_ bytes: UnsafeRawBufferPointer, playerKey: [UInt8]) {
        guard let gameAt = Self.after("\"game\":", in: bytes, from: 0) else { return nil }
        kindMembersAt = gameAt - 7
        game = Int(BenchFrame.number(bytes, gameAt))
        guard var at = Self.after("\"table\":[", in: bytes, from: gameAt) else { return nil }
        while at < bytes.count, bytes[at] != UInt8(ascii: "]") {
            if bytes[at] == UInt8(ascii: "\""), at + 5 < bytes.count, let card = Self.card(bytes, at + 1) {
                table.append(card)
                at += 6
            } else {
                at += 1
            }
        }
        if let deckAt = Self.after("\"deck\":", in: bytes, from: at) {
            deck = Int(BenchFrame.number(bytes, deckAt))
            at = deckAt
        }
        if let setsAt = Self.after("\"sets_on_table\":", in: bytes, from: at) {
            setsOnTable = Int(BenchFrame.number(bytes, setsAt))
            at = setsAt
        }
        if let overAt = Self.after("\"over\":", in: bytes, from: at) {
            over = overAt < bytes.count && bytes[overAt] == UInt8(ascii: "t")
            at = overAt
        }
        guard let playersAt = Self.after("\"players\":{", in: bytes, from: at),
              let mine = Self.after(playerKey, in: bytes, from: playersAt) else { return }
        if let scoreAt = Self.after("\"score\":", in: bytes, from: mine) { score = Int(BenchFrame.number(bytes, scoreAt)) }
        if let missesAt = Self.after("\"misses\":", in: bytes, from: mine) { misses = Int(BenchFrame.number(bytes, missesAt)) }
        if var pickAt = Self.after("\"picked\":[", in: bytes, from: mine) {
            while pickAt < bytes.count, bytes[pickAt] != UInt8(ascii: "]") {
                if bytes[pickAt] == UInt8(ascii: "\""), pickAt + 5 < bytes.count, let card = Self.card(bytes, pickAt + 1) {
                    picked.append(card)
                    pickAt += 6
                } else {
                    pickAt += 1
                }
            }
            if let mismatchAt = Self.after("\"mismatch\":", in: bytes, from: pickAt) {
                mismatch = mismatchAt < bytes.count && bytes[mismatchAt] == UInt8(ascii: "t")
            }
        }
    }

    /// A four-character card code at `at` (S1), e.g. `2SFR`.
    static func card(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> Card? {
        guard at + 3 < bytes.count else { return nil }
        func value(_ byte: UInt8, _ letters: StaticString) -> Int? {
            let start = letters.utf8Start
            for index in 0..<3 where start[index] == byte { return index }
            return nil
        }
        guard let number = value(bytes[at], "123"), let shape = value(bytes[at + 1], "DSO"),
              let shading = value(bytes[at + 2], "FTO"), let colour = value(bytes[at + 3], "RGP") else { return nil }
        return Card(index: number * 27 + shape * 9 + shading * 3 + colour)
    }

    static func after(_ pattern: StaticString, in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        after(UnsafeBufferPointer(start: pattern.utf8Start, count: pattern.utf8CodeUnitCount), in: bytes, from: start)
    }

    static func after(_ pattern: [UInt8], in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        pattern.withUnsafeBufferPointer { after($0, in: bytes, from: start) }
    }

    /// Index just after the first occurrence of `pattern` at or after `start`.
    static func after(_ pattern: UnsafeBufferPointer<UInt8>, in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        let count = pattern.count
        guard count > 0 else { return start }
        var index = max(0, start)
        let first = pattern[0]
        while index + count <= bytes.count {
            if bytes[index] == first {
                var same = true
                for offset in 1..<count where bytes[index + offset] != pattern[offset] {
                    same = false
                    break
                }
                if same { return index + count }
            }
            index += 1
        }
        return nil
    }

    /// The `code` of a `rejected` frame (`"code":"taken"`), or "?".
    static func refusalCode(_ bytes: UnsafeRawBufferPointer) -> String {
        guard let at = after("\"code\":\"", in: bytes, from: 0) else { return "?" }
        var end = at
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), end - at < 32 { end += 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[at..<end]), as: UTF8.self)
    }
}

/// How a bench player picks its cards: like a person who finds a set on
/// the table (carrying on from its own pick), now and then with a wrong
/// third card (a mismatch). Empty when the table holds no set.
enum SetPlanner {
    static func plan(_ view: SetView, mismatchPercent: Int = 10, using random: inout some RandomNumberGenerator) -> [Card] {
        var onTable = [Bool](repeating: false, count: 81)
        for card in view.table { onTable[Int(card.index)] = true }
        let picked = view.mismatch ? [] : view.picked.filter { onTable[Int($0.index)] }
        if picked.count == 2 {
            let third = Card.completing(picked[0], picked[1])
            return onTable[Int(third.index)] ? [third] : [picked[0]]
        }
        if picked.count == 1 {
            for card in view.table where card != picked[0] {
                let third = Card.completing(picked[0], card)
                if third != card, third != picked[0], onTable[Int(third.index)] { return [card, third] }
            }
            return [picked[0]]
        }
        var sets: [(Card, Card, Card)] = []
        let table = view.table
        for i in table.indices {
            for j in table.indices where j > i && table[j] != table[i] {
                let third = Card.completing(table[i], table[j])
                if third > table[i], third > table[j], onTable[Int(third.index)] { sets.append((table[i], table[j], third)) }
            }
        }
        guard !sets.isEmpty else { return [] }
        let (a, b, c) = sets[Int.random(in: 0..<sets.count, using: &random)]
        if Int.random(in: 0..<100, using: &random) < mismatchPercent,
           let wrong = table.first(where: { $0 != a && $0 != b && $0 != c && !Card.isSet(a, b, $0) }) {
            return [a, b, wrong]
        }
        return [a, b, c]
    }
}
