import BoardCRDT
import SyncWire

/// What a juice bar bench client reads from a `state` frame (docs/rules/stock.md,
/// "Frames"), scanned in place: the five counts of `stock`, signed, so that
/// a count below zero shows (JC1), and where the kind's members begin.
struct StockView {
    /// Counts in `Fruit.allCases` order; nil where the frame lacks the fruit.
    var counts: [Int?] = Array(repeating: nil, count: Fruit.allCases.count)
    /// Where `"stock":` begins: equal tails with equal versions are equal stocks.
    var kindMembersAt = 0

    init?(_ bytes: UnsafeRawBufferPointer) {
        guard let open = BenchFrame.after("\"stock\":{", in: bytes, from: 0) else { return nil }
        kindMembersAt = open - 9
        var at = open
        while at < bytes.count, bytes[at] != UInt8(ascii: "}") {
            guard bytes[at] == UInt8(ascii: "\"") else { at += 1; continue }
            var end = at + 1
            while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += 1 }
            let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(at + 1)..<end]), as: UTF8.self)
            at = end + 2 // past `":`
            var negative = false
            if at < bytes.count, bytes[at] == UInt8(ascii: "-") { negative = true; at += 1 }
            var value = 0
            while at < bytes.count, bytes[at] >= UInt8(ascii: "0"), bytes[at] <= UInt8(ascii: "9") {
                value = value &* 10 &+ Int(bytes[at] - UInt8(ascii: "0"))
                at += 1
            }
            if let fruit = Fruit(rawValue: name), let index = Fruit.allCases.firstIndex(of: fruit) {
                counts[index] = negative ? -value : value
            }
        }
    }
}

/// A juice bar bench client's own record (kept on its `Peer`).
struct StockPeer: BenchKeeping {
    /// The first stock it was shown (its join's state) and that state's version.
    var first: [Int]?
    var firstVersion: UInt64 = 0
    /// The latest stock it was shown.
    var last: [Int] = []
}

/// One worker's juice bar figures: the count invariant on every state frame,
/// the intents in flight, and per board what acknowledged intents moved.
struct StockTally: BenchKeeping {
    /// One intent: a juice (0..<7, `Juice.allCases`) or a restock (fruit, by).
    enum Sent { case make(Int), restock(Int, Int) }
    var statesChecked = 0
    var violations = 0
    var violationExamples: [String] = []
    var pending: [Int: Sent] = [:]
    /// Per board, per fruit: acknowledged restocks and fruit used by acknowledged makes.
    var restocked: [Int: [Int]] = [:]
    var used: [Int: [Int]] = [:]
    /// Per board: acknowledged makes, and the lowest version any acknowledgement carried.
    var madeAcked: [Int: Int] = [:]
    var lowestAckedVersion: [Int: UInt64] = [:]
    /// Intents sent in the measured window, by type; juices made in it.
    var sentInWindow: [String: Int] = [:]
    var madeInWindow = 0

    /// Share of restocks among intents, in percent (1 in 4).
    static let restockPercent = 25

    static func next(using random: inout some RandomNumberGenerator) -> Sent {
        if Int.random(in: 0..<100, using: &random) < restockPercent {
            return .restock(Int.random(in: 0..<Fruit.allCases.count, using: &random), Int.random(in: 1...5, using: &random))
        }
        return .make(Int.random(in: 0..<Juice.allCases.count, using: &random))
    }

    static func intent(_ sent: Sent) -> FruitStock.Intent {
        switch sent {
        case let .make(juice): .make(Juice.allCases[juice])
        case let .restock(fruit, by): .restock(Fruit.allCases[fruit], by: by)
        }
    }

    /// The invariant, checked on every state frame a client receives.
    mutating func check(_ view: StockView, board: String, version: UInt64) -> [Int] {
        statesChecked += 1
        var counts: [Int] = []
        for (index, count) in view.counts.enumerated() {
            guard let count, FruitStock.counts.contains(count) else {
                violations += 1
                if violationExamples.count < 5 {
                    violationExamples.append("\(board) v\(version): \(Fruit.allCases[index]) " +
                                             "\(view.counts[index].map(String.init) ?? "missing")")
                }
                counts.append(view.counts[index] ?? 0)
                continue
            }
            counts.append(count)
        }
        return counts
    }

    mutating func answered(ref: Int, board: Int, acked: Bool, version: UInt64, sentInWindow: Bool) {
        guard let sent = pending.removeValue(forKey: ref), acked else { return }
        lowestAckedVersion[board] = min(lowestAckedVersion[board] ?? .max, version)
        switch sent {
        case let .make(juice):
            madeAcked[board, default: 0] += 1
            if sentInWindow { madeInWindow += 1 }
            for use in Juice.allCases[juice].uses {
                let fruitIndex = Fruit.allCases.firstIndex(of: use.fruit)!
                used[board, default: Array(repeating: 0, count: Fruit.allCases.count)][fruitIndex] += use.count
            }
        case let .restock(fruit, by):
            restocked[board, default: Array(repeating: 0, count: Fruit.allCases.count)][fruit] += by
        }
    }
}

/// The juice bar part of a `--kind stock` report.
struct StockSummary: Codable {
    /// State frames checked (every one every client received) and counts outside 0...999 in them.
    var statesChecked: Int
    var countViolations: Int
    var violationExamples: [String]
    /// Juices made (acknowledged makes sent in the window) a second.
    var juicesMadePerSecond: Double
    /// Per board: start + acknowledged restocks - fruit used by acknowledged makes == final stock.
    var conserved: Bool
    var conservation: [String: Conservation]

    struct Conservation: Codable {
        var start: [String: Int]
        var restocked: [String: Int]
        var used: [String: Int]
        var makesAcknowledged: Int
        var expected: [String: Int]
        var final: [String: Int]
        var holds: Bool
    }
}

extension BenchWorker where Driver == StockBench {
    /// A juice bar client's next intent: a random juice, or 1 in 4 a restock
    /// of +1...+5 on a random fruit (so the stock keeps moving).
    func sendStockIntent(from peer: Peer, at now: UInt64, inWindow: Bool) -> Bool {
        guard let connection = peer.connection, connection.isOpen else { return false }
        var random = SystemRandomNumberGenerator()
        let sent = StockTally.next(using: &random)
        if inWindow {
            let type = if case .make = sent { "make" } else { "restock" }
            tally.sentInWindow[type, default: 0] += 1
        }
        let ref = track(from: peer, at: now)
        tally.pending[ref] = sent
        client.send(ClientMessage<FruitStock>.thinFrame(StockTally.intent(sent), ref: String(ref)), on: connection)
        return true
    }

    /// Every state frame: the invariant, and what the convergence and conservation checks compare.
    func readStock(_ bytes: UnsafeRawBufferPointer, version: UInt64, of peer: Peer) {
        guard let view = StockView(bytes) else {
            tally.statesChecked += 1
            tally.violations += 1
            if tally.violationExamples.count < 5 {
                tally.violationExamples.append("\(plan.boardNames[peer.board]) v\(version): no stock")
            }
            return
        }
        let counts = tally.check(view, board: plan.boardNames[peer.board], version: version)
        if peer.record.first == nil {
            peer.record.first = counts
            peer.record.firstVersion = version
        }
        peer.record.last = counts
        peer.stateTail = Array(UnsafeRawBufferPointer(rebasing: bytes[view.kindMembersAt...]))
    }
}

extension BenchReport {
    /// Fills the `--kind stock` figures in, after the run (the loops are quiet).
    mutating func addStock(_ workers: [BenchWorker<StockBench>], plan: BenchPlan, seconds: Double) {
        countAnswers(workers, plan: plan, seconds: seconds, sent: workers.map(\.tally.sentInWindow))
        let fruits = Fruit.allCases.count
        func named(_ values: [Int]) -> [String: Int] {
            Dictionary(uniqueKeysWithValues: zip(Fruit.allCases.map(\.rawValue), values))
        }
        var conservation: [String: StockSummary.Conservation] = [:]
        let peers = workers.flatMap(\.peers)
        for board in plan.boardNames.indices {
            let group = peers.filter { $0.board == board && $0.record.first != nil }
            // The start is the earliest state any client of the board was shown (its join's).
            guard let earliest = group.min(by: { $0.record.firstVersion < $1.record.firstVersion }),
                  let start = earliest.record.first, let final = group.first?.record.last else { continue }
            var restocked = Array(repeating: 0, count: fruits), used = Array(repeating: 0, count: fruits)
            var makes = 0
            var lowest = UInt64.max
            for worker in workers {
                for (index, value) in (worker.tally.restocked[board] ?? []).enumerated() { restocked[index] += value }
                for (index, value) in (worker.tally.used[board] ?? []).enumerated() { used[index] += value }
                makes += worker.tally.madeAcked[board] ?? 0
                lowest = min(lowest, worker.tally.lowestAckedVersion[board] ?? .max)
            }
            let expected = (0..<fruits).map { start[$0] + restocked[$0] - used[$0] }
            // The start must predate every acknowledged intent, or it already holds some of them.
            let holds = expected == final && earliest.record.firstVersion < lowest
            conservation[plan.boardNames[board]] = .init(
                start: named(start), restocked: named(restocked), used: named(used), makesAcknowledged: makes,
                expected: named(expected), final: named(final), holds: holds)
        }
        stock = StockSummary(
            statesChecked: workers.reduce(0) { $0 + $1.tally.statesChecked },
            countViolations: workers.reduce(0) { $0 + $1.tally.violations },
            violationExamples: Array(workers.flatMap(\.tally.violationExamples).prefix(10)),
            juicesMadePerSecond: Double(workers.reduce(0) { $0 + $1.tally.madeInWindow }) / seconds,
            conserved: conservation.count == plan.boardNames.count && conservation.values.allSatisfy(\.holds),
            conservation: conservation)
    }

    /// The summary of a `--kind stock` run: clients making juices from one stock.
    func stockText(_ p: (Percentiles) -> String) -> String {
        var lines = intentLines(p, boardsAre: "bars", clientsAre: "clients",
                                answered: "juices made \(Int(stock?.juicesMadePerSecond ?? 0))/s",
                                extra: ", stock changes \(Int(changesPerSecond))/s")
        lines.insert(contentsOf: hubSplitLines(p), at: lines.count - 1)
        if let usage = hubUsageLine() { lines.append(usage) }
        if let benchCPUPercent { lines.append("bench itself   CPU \(Int(benchCPUPercent))%") }
        if let stock {
            lines.append(stock.countViolations == 0
                ? "never below zero: yes (\(stock.statesChecked) states checked, every count within 0...999)"
                : "never below zero: NO, \(stock.countViolations) count violations in \(stock.statesChecked) states: " +
                  "\(stock.violationExamples.joined(separator: "; "))")
            for (name, board) in stock.conservation.sorted(by: { $0.key < $1.key }) {
                let order = Fruit.allCases.map(\.rawValue)
                func list(_ values: [String: Int]) -> String { order.map { "\(values[$0] ?? 0)" }.joined(separator: "/") }
                lines.append("conserved      \(name) \(board.holds ? "yes" : "NO"): start \(list(board.start)) + restocked " +
                             "\(list(board.restocked)) - used \(list(board.used)) (\(board.makesAcknowledged) makes) = " +
                             "\(list(board.expected)), final \(list(board.final))")
            }
            if stock.conservation.count < boards {
                lines.append("conserved      NO: \(boards - stock.conservation.count) bars never showed a stock")
            }
        }
        lines.append(converged ? "converged      yes: every client of every bar shows the same stock"
                               : "converged      NO: \(divergentBoards.joined(separator: ", "))")
        if unseen > 0 { lines.append("unseen         \(unseen) (operation, client) pairs never saw the change") }
        return lines.joined(separator: "\n")
    }
}

/// Clients of juice bars making juices and restocking, every state checked.
enum StockBench: BenchDriver {
    typealias Kind = FruitStock
    typealias Record = StockPeer
    typealias Tally = StockTally

    static let optionHelp = "juices made"
    static var discussion: String {
        """
        juice bars (/\(Kind.pathSegment)/PREFIX-N): each client joins as pN and \
        makes random juices, 1 intent in 4 a restock of +1..+5 on a random fruit; every state frame \
        any client receives is checked for counts outside 0...999, the summary adds answers, juices \
        made and refusals (not_enough_fruit) a second, and at the end every client must show the same \
        stock and each bar's stock must equal its start plus acknowledged restocks minus the fruit of \
        acknowledged makes (the run exits 1 otherwise).
        """
    }

    static func send(_ worker: BenchWorker<Self>, from peer: BenchWorker<Self>.Peer, at now: UInt64, inWindow: Bool) -> Bool {
        worker.sendStockIntent(from: peer, at: now, inWindow: inWindow)
    }
    static func read(_ worker: BenchWorker<Self>, state: UnsafeRawBufferPointer, version: UInt64, of peer: BenchWorker<Self>.Peer,
                     inWindow: Bool) {
        worker.readStock(state, version: version, of: peer)
    }
    static func answered(_ worker: BenchWorker<Self>, ref: Int, of peer: BenchWorker<Self>.Peer, acked: Bool, version: UInt64,
                         sentInWindow: Bool) {
        worker.tally.answered(ref: ref, board: peer.board, acked: acked, version: version, sentInWindow: sentInWindow)
    }
    static func report(_ report: inout BenchReport, workers: [BenchWorker<Self>], plan: BenchPlan, seconds: Double) {
        report.addStock(workers, plan: plan, seconds: seconds)
    }
    static func text(_ report: BenchReport, _ p: (BenchReport.Percentiles) -> String) -> String? { report.stockText(p) }
    static func held(_ report: BenchReport) -> Bool {
        report.stock.map { $0.countViolations == 0 && $0.conserved } ?? true
    }
}
