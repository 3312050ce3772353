import BoardCRDT
import SyncWire

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
        guard let gameAt = BenchFrame.after("\"game\":", in: bytes, from: 0) else { return nil }
        kindMembersAt = gameAt - 7
        game = Int(BenchFrame.number(bytes, gameAt))
        guard var at = BenchFrame.after("\"table\":[", in: bytes, from: gameAt) else { return nil }
        while at < bytes.count, bytes[at] != UInt8(ascii: "]") {
            if bytes[at] == UInt8(ascii: "\""), at + 5 < bytes.count, let card = Self.card(bytes, at + 1) {
                table.append(card)
                at += 6
            } else {
                at += 1
            }
        }
        if let deckAt = BenchFrame.after("\"deck\":", in: bytes, from: at) {
            deck = Int(BenchFrame.number(bytes, deckAt))
            at = deckAt
        }
        if let setsAt = BenchFrame.after("\"sets_on_table\":", in: bytes, from: at) {
            setsOnTable = Int(BenchFrame.number(bytes, setsAt))
            at = setsAt
        }
        if let overAt = BenchFrame.after("\"over\":", in: bytes, from: at) {
            over = overAt < bytes.count && bytes[overAt] == UInt8(ascii: "t")
            at = overAt
        }
        guard let playersAt = BenchFrame.after("\"players\":{", in: bytes, from: at),
              let mine = BenchFrame.after(playerKey, in: bytes, from: playersAt) else { return }
        if let scoreAt = BenchFrame.after("\"score\":", in: bytes, from: mine) { score = Int(BenchFrame.number(bytes, scoreAt)) }
        if let missesAt = BenchFrame.after("\"misses\":", in: bytes, from: mine) { misses = Int(BenchFrame.number(bytes, missesAt)) }
        if var pickAt = BenchFrame.after("\"picked\":[", in: bytes, from: mine) {
            while pickAt < bytes.count, bytes[pickAt] != UInt8(ascii: "]") {
                if bytes[pickAt] == UInt8(ascii: "\""), pickAt + 5 < bytes.count, let card = Self.card(bytes, pickAt + 1) {
                    picked.append(card)
                    pickAt += 6
                } else {
                    pickAt += 1
                }
            }
            if let mismatchAt = BenchFrame.after("\"mismatch\":", in: bytes, from: pickAt) {
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

/// Players on Set tables: each plays from the latest table it was shown.
enum SetBench: BenchDriver {
    typealias Kind = SetTable
    typealias Record = SetPlayer
    typealias Tally = SetTally

    static let optionHelp = "players choosing cards"
    static var discussion: String {
        """
        Set tables (/\(Kind.pathSegment)/PREFIX-N): each client joins as pN and plays \
        from the latest table it was shown, completing a set it finds there (now and then with a \
        wrong third card), dealing when the table holds no set, the table's first player starting a \
        new game when the game is over; the summary adds answers and refusals a second, refusals by \
        code and the sets taken, and at the end every player must show the same table.
        """
    }
    static let refillsOnState = true

    static func send(_ worker: BenchWorker<Self>, from peer: BenchWorker<Self>.Peer, at now: UInt64, inWindow: Bool) -> Bool {
        worker.sendSetIntent(from: peer, at: now, inWindow: inWindow)
    }
    static func read(_ worker: BenchWorker<Self>, state: UnsafeRawBufferPointer, version: UInt64, of peer: BenchWorker<Self>.Peer,
                     inWindow: Bool) {
        worker.readSet(state, of: peer, inWindow: inWindow)
    }
    static func report(_ report: inout BenchReport, workers: [BenchWorker<Self>], plan: BenchPlan, seconds: Double) {
        report.countAnswers(workers, plan: plan, seconds: seconds, sent: workers.map(\.tally.intentsSent))
        report.matches = workers.reduce(0) { $0 + $1.tally.matches }
        report.mismatches = workers.reduce(0) { $0 + $1.tally.mismatches }
    }
    static func text(_ report: BenchReport, _ p: (BenchReport.Percentiles) -> String) -> String? { report.setText(p) }
}

/// A Set bench player's own record (kept on its `Peer`).
struct SetPlayer: BenchKeeping {
    /// The latest state frame, read.
    var view: SetView?
    /// Cards this player means to choose next, in the game `planGame`.
    var plan: [Card] = []
    var planGame = 0
    /// The version whose table held no set and this player dealt for.
    var dealtAt: UInt64?
    /// The game this player asked a new game for (once per game).
    var newGameAfter: Int?
    /// Own score and misses as last seen, in game `scoredGame`.
    var scoredGame = 0
    var seenScore = 0
    var seenMisses = 0
}

/// One worker's Set figures, counted in the measured window.
struct SetTally: BenchKeeping {
    /// Intents sent, by type.
    var intentsSent: [String: Int] = [:]
    /// Sets taken and mismatches settled by this worker's players (from the
    /// scores and misses in their state frames).
    var matches = 0
    var mismatches = 0
}

extension BenchWorker where Driver == SetBench {
    /// A Set player's next intent: the next card of its plan, a deal or a new game.
    func sendSetIntent(from peer: Peer, at now: UInt64, inWindow: Bool) -> Bool {
        guard let connection = peer.connection, connection.isOpen, let intent = nextSetIntent(of: peer) else { return false }
        if inWindow {
            let type = switch intent {
            case .choose: "choose"
            case .deal: "deal"
            case .newGame: "new_game"
            }
            tally.intentsSent[type, default: 0] += 1
        }
        let ref = track(from: peer, at: now)
        client.send(ClientMessage<SetTable>.thinFrame(intent, ref: String(ref)), on: connection)
        return true
    }

    /// A Set player's next intent, from the latest table it was shown: the
    /// next card of its plan (a set it found, see `SetPlanner`); a deal when
    /// the table holds no set (once per table); a new game when the game is
    /// over (the table's first player, once per game; the others wait).
    private func nextSetIntent(of peer: Peer) -> SetTable.Intent? {
        guard let view = peer.record.view, view.game > 0 else { return nil }
        if view.over {
            guard peer.slot == 0, peer.record.newGameAfter != view.game else { return nil }
            peer.record.newGameAfter = view.game
            return .newGame(seed: nil)
        }
        if view.setsOnTable == 0 {
            // S9: dealing more makes sense (once per table this player is shown).
            peer.record.plan = []
            guard view.deck > 0, peer.record.dealtAt != peer.lastVersion else { return nil }
            peer.record.dealtAt = peer.lastVersion
            return .deal
        }
        if peer.record.planGame != view.game || peer.record.plan.first.map({ card in !view.table.contains(card) }) == true {
            peer.record.plan = []
        }
        if peer.record.plan.isEmpty {
            var random = SystemRandomNumberGenerator()
            peer.record.plan = SetPlanner.plan(view, using: &random)
            peer.record.planGame = view.game
        }
        guard !peer.record.plan.isEmpty else { return nil }
        return .choose(peer.record.plan.removeFirst())
    }

    /// A Set player's new table: what it plans from, and its own score and
    /// misses (their growth within a game counts matches and mismatches).
    func readSet(_ bytes: UnsafeRawBufferPointer, of peer: Peer, inWindow: Bool) {
        guard let view = SetView(bytes, playerKey: peer.playerKey) else { return }
        peer.record.view = view
        peer.stateTail = Array(UnsafeRawBufferPointer(rebasing: bytes[view.kindMembersAt...]))
        if view.game == peer.record.scoredGame {
            if inWindow {
                tally.matches += max(0, view.score - peer.record.seenScore)
                tally.mismatches += max(0, view.misses - peer.record.seenMisses)
            }
        } else {
            // A new game: what was scored in it before this frame counts too.
            if inWindow, peer.record.scoredGame > 0 {
                tally.matches += view.score
                tally.mismatches += view.misses
            }
            peer.record.scoredGame = view.game
        }
        peer.record.seenScore = view.score
        peer.record.seenMisses = view.misses
    }
}

extension BenchReport {
    /// The summary of a `--kind set` run: players on Set tables.
    func setText(_ p: (Percentiles) -> String) -> String {
        var lines = [
            "tables \(boards) x players \(clientsPerBoard) (\(sendersPerBoard) playing), " +
            "\(mode)\(targetRate > 0 ? " \(Int(targetRate)) intents/s" : ""), \(String(format: "%.1f", seconds)) s measured",
            "connected      \(connected) (failures \(connectFailures)); connect \(p(connectMillis))",
            "answers        \(Int(answersPerSecond ?? 0))/s: acknowledged \(operationsAcknowledged) (\(Int(acknowledgedPerSecond))/s), " +
            "refused \(Int(refusalsPerSecond ?? 0))/s, table changes \(Int(changesPerSecond))/s",
            "sent           \(Self.counts(intentsSent))",
            "refusals       \(Self.counts(refusals))",
            "picks settled  \(matches ?? 0) sets taken, \(mismatches ?? 0) mismatches",
            "errors         \(errors) error frames, \(disconnects) connections lost during the run",
            "delivered      \(Int(statesDeliveredPerSecond)) states/s, \(Int(framesDeliveredPerSecond)) frames/s",
            "visibility     \(p(visibilityMillis))",
            "at every client \(p(visibilityAtEveryClientMillis))",
            "ack latency    \(p(ackMillis))",
        ]
        lines.insert(contentsOf: hubSplitLines(p), at: lines.count - 1)
        if let usage = hubUsageLine() { lines.append(usage) }
        if let benchCPUPercent { lines.append("bench itself   CPU \(Int(benchCPUPercent))%") }
        lines.append(converged ? "converged      yes: every player of every table shows the same table"
                               : "converged      NO: \(divergentBoards.joined(separator: ", "))")
        if unseen > 0 { lines.append("unseen         \(unseen) (operation, client) pairs never saw the change") }
        return lines.joined(separator: "\n")
    }
}
