import BoardCRDT
import SyncWire

/// What a shop bench customer reads from a `state` frame (docs/rules/shop.md,
/// "Frames"), scanned in place: every dish's id, price and stock (signed, so
/// a stock below zero shows, PC1), and where the kind's members begin.
struct ShopView {
    struct Seen: Equatable {
        var id: String
        var price: Int
        var stock: Int
        var available: Bool
    }
    var dishes: [Seen] = []
    /// Where `"sections":` begins: equal tails with equal versions are equal shops.
    var kindMembersAt = 0

    init?(_ bytes: UnsafeRawBufferPointer) {
        guard let sections = BenchFrame.after("\"sections\":[", in: bytes, from: 0) else { return nil }
        kindMembersAt = sections - 12
        var at = sections
        // A dish object starts `{"id":"ID","title":...,"description"` (a section's has `"subtitle"` after its title).
        while let open = BenchFrame.after("{\"id\":\"", in: bytes, from: at) {
            var end = open
            while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += 1 }
            let id = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[open..<end]), as: UTF8.self)
            at = end
            guard let description = BenchFrame.after("\"description\":", in: bytes, from: end),
                  let subtitle = BenchFrame.after("\"subtitle\":", in: bytes, from: end).map({ $0 }) ?? Optional(Int.max),
                  description < subtitle else { continue }
            guard let price = BenchFrame.after("\"price\":", in: bytes, from: description),
                  let stock = BenchFrame.after("\"stock\":", in: bytes, from: price),
                  let available = BenchFrame.after("\"available\":", in: bytes, from: stock) else { return nil }
            dishes.append(Seen(id: id, price: Self.number(bytes, price), stock: Self.number(bytes, stock),
                               available: available < bytes.count && bytes[available] == UInt8(ascii: "t")))
            at = available
        }
    }

    static func number(_ bytes: UnsafeRawBufferPointer, _ start: Int) -> Int {
        var at = start
        var negative = false
        if at < bytes.count, bytes[at] == UInt8(ascii: "-") { negative = true; at += 1 }
        var value = 0
        while at < bytes.count, bytes[at] >= UInt8(ascii: "0"), bytes[at] <= UInt8(ascii: "9") {
            value = value &* 10 &+ Int(bytes[at] - UInt8(ascii: "0"))
            at += 1
        }
        return negative ? -value : value
    }
}

/// One worker's shop figures: stock never below zero in any state, the
/// intents in flight, and per shop what acknowledged intents moved.
struct ShopTally: BenchKeeping {
    enum Sent { case order([OrderLine]), restock(String, Int) }
    var statesChecked = 0
    var violations = 0
    var violationExamples: [String] = []
    var pending: [Int: Sent] = [:]
    /// Per shop, per dish: acknowledged restocks and ordered quantities.
    var restocked: [Int: [String: Int]] = [:]
    var ordered: [Int: [String: Int]] = [:]
    var ordersAcked: [Int: Int] = [:]
    var lowestAckedVersion: [Int: UInt64] = [:]
    var sentInWindow: [String: Int] = [:]
    var ordersInWindow = 0

    /// One intent in five restocks a dish (+5..+20), so stock keeps coming back.
    static let restockPercent = 20

    mutating func answered(ref: Int, board: Int, acked: Bool, version: UInt64, sentInWindow: Bool) {
        guard let sent = pending.removeValue(forKey: ref), acked else { return }
        lowestAckedVersion[board] = min(lowestAckedVersion[board] ?? .max, version)
        switch sent {
        case let .order(lines):
            ordersAcked[board, default: 0] += 1
            if sentInWindow { ordersInWindow += 1 }
            for line in lines { ordered[board, default: [:]][line.dish, default: 0] += line.quantity }
        case let .restock(dish, by):
            restocked[board, default: [:]][dish, default: 0] += by
        }
    }
}

/// A shop bench customer's own record (kept on its `Peer`).
struct ShopPeer: BenchKeeping {
    var first: [String: Int]?
    var firstVersion: UInt64 = 0
    var last: [ShopView.Seen] = []
}

/// The shop part of a `--kind shop` report.
struct ShopSummary: Codable {
    var statesChecked: Int
    var stockViolations: Int
    var violationExamples: [String]
    var ordersPerSecond: Double
    /// Per shop and dish: start + acknowledged restocks - acknowledged ordered == final stock.
    var conserved: Bool
    var unconserved: [String]
}

extension BenchWorker where Driver == ShopBench {
    /// A customer's next intent, from the shop it was shown last: an order
    /// of 1-3 of a dish on sale with stock, at the price shown (PC2), or 1 in
    /// 5 a restock of +5..+20 on a random dish (an open hub: everyone is staff).
    func sendShopIntent(from peer: Peer, at now: UInt64, inWindow: Bool) -> Bool {
        guard let connection = peer.connection, connection.isOpen, !peer.record.last.isEmpty else { return false }
        var random = SystemRandomNumberGenerator()
        let sent: ShopTally.Sent
        let onSale = peer.record.last.filter { $0.available && $0.stock > 0 }
        if Int.random(in: 0..<100, using: &random) < ShopTally.restockPercent || onSale.isEmpty {
            let dish = peer.record.last.randomElement(using: &random)!
            sent = .restock(dish.id, Int.random(in: 5...20, using: &random))
        } else {
            let dish = onSale.randomElement(using: &random)!
            sent = .order([OrderLine(dish: dish.id, quantity: Int.random(in: 1...min(3, dish.stock), using: &random), price: dish.price)])
        }
        let intent: BanchanShop.Intent
        switch sent {
        case let .order(lines): intent = .order(lines)
        case let .restock(dish, by): intent = .restock(dish, by: by)
        }
        if inWindow {
            let type = if case .order = sent { "order" } else { "restock" }
            tally.sentInWindow[type, default: 0] += 1
        }
        let ref = track(from: peer, at: now)
        tally.pending[ref] = sent
        client.send(ClientMessage<BanchanShop>.thinFrame(intent, ref: String(ref)), on: connection)
        return true
    }

    /// Every state frame: stock never below zero (PC1), and what conservation and convergence compare.
    func readShop(_ bytes: UnsafeRawBufferPointer, version: UInt64, of peer: Peer) {
        tally.statesChecked += 1
        guard let view = ShopView(bytes), !view.dishes.isEmpty else {
            tally.violations += 1
            if tally.violationExamples.count < 5 {
                tally.violationExamples.append("\(plan.boardNames[peer.board]) v\(version): no dishes")
            }
            return
        }
        for dish in view.dishes where !BanchanShop.stockRange.contains(dish.stock) {
            tally.violations += 1
            if tally.violationExamples.count < 5 {
                tally.violationExamples.append("\(plan.boardNames[peer.board]) v\(version): \(dish.id) \(dish.stock)")
            }
        }
        if peer.record.first == nil {
            peer.record.first = Dictionary(view.dishes.map { ($0.id, $0.stock) }, uniquingKeysWith: { a, _ in a })
            peer.record.firstVersion = version
        }
        peer.record.last = view.dishes
        peer.stateTail = Array(UnsafeRawBufferPointer(rebasing: bytes[view.kindMembersAt...]))
    }
}

extension BenchReport {
    /// Fills the `--kind shop` figures in, after the run.
    mutating func addShop(_ workers: [BenchWorker<ShopBench>], plan: BenchPlan, seconds: Double) {
        countAnswers(workers, plan: plan, seconds: seconds, sent: workers.map(\.tally.sentInWindow))
        let peers = workers.flatMap(\.peers)
        var unconserved: [String] = []
        for board in plan.boardNames.indices {
            let group = peers.filter { $0.board == board && $0.record.first != nil }
            guard let earliest = group.min(by: { $0.record.firstVersion < $1.record.firstVersion }), let start = earliest.record.first,
                  let final = group.first?.record.last else {
                unconserved.append("\(plan.boardNames[board]): no state")
                continue
            }
            var expected = start
            var lowest = UInt64.max
            for worker in workers {
                for (dish, by) in worker.tally.restocked[board] ?? [:] { expected[dish, default: 0] += by }
                for (dish, quantity) in worker.tally.ordered[board] ?? [:] { expected[dish, default: 0] -= quantity }
                lowest = min(lowest, worker.tally.lowestAckedVersion[board] ?? .max)
            }
            let shown = Dictionary(final.map { ($0.id, $0.stock) }, uniquingKeysWith: { a, _ in a })
            if expected != shown || earliest.record.firstVersion >= lowest {
                unconserved.append("\(plan.boardNames[board]): expected \(expected.sorted { $0.key < $1.key }), " +
                                   "final \(shown.sorted { $0.key < $1.key })")
            }
        }
        shop = ShopSummary(
            statesChecked: workers.reduce(0) { $0 + $1.tally.statesChecked },
            stockViolations: workers.reduce(0) { $0 + $1.tally.violations },
            violationExamples: Array(workers.flatMap(\.tally.violationExamples).prefix(10)),
            ordersPerSecond: Double(workers.reduce(0) { $0 + $1.tally.ordersInWindow }) / seconds,
            conserved: unconserved.isEmpty, unconserved: unconserved)
    }

    func shopText(_ p: (Percentiles) -> String) -> String {
        var lines = intentLines(p, boardsAre: "shops", clientsAre: "customers", answered: "orders \(Int(shop?.ordersPerSecond ?? 0))/s")
        if let usage = hubUsageLine() { lines.append(usage) }
        if let benchCPUPercent { lines.append("bench itself   CPU \(Int(benchCPUPercent))%") }
        if let shop {
            lines.append(shop.stockViolations == 0
                ? "never below zero: yes (\(shop.statesChecked) states checked)"
                : "never below zero: NO, \(shop.stockViolations) in \(shop.statesChecked) states: " +
                  "\(shop.violationExamples.joined(separator: "; "))")
            lines.append(shop.conserved ? "conserved      yes: every shop's stock is its start + restocks - acknowledged orders"
                                        : "conserved      NO: \(shop.unconserved.joined(separator: "; "))")
        }
        lines.append(converged ? "converged      yes: every customer of every shop shows the same shop"
                               : "converged      NO: \(divergentBoards.joined(separator: ", "))")
        if unseen > 0 { lines.append("unseen         \(unseen) (operation, client) pairs never saw the change") }
        return lines.joined(separator: "\n")
    }
}

/// Customers of banchan shops ordering at the prices shown, now and then restocking.
enum ShopBench: BenchDriver {
    typealias Kind = BanchanShop
    typealias Record = ShopPeer
    typealias Tally = ShopTally

    static let optionHelp = "dishes ordered"
    static var discussion: String {
        """
        banchan shops (/\(Kind.pathSegment)/PREFIX-N, opening with the sample \
        catalog): each client joins as pN and orders 1-3 of a random dish on sale with stock at the \
        price it was shown, 1 intent in 5 a restock of +5..+20 (an open hub: everyone is staff); every \
        state frame is checked for a stock below zero, and at the end every customer must show the same \
        shop and each dish's stock must be its start plus acknowledged restocks minus acknowledged \
        orders (the run exits 1 otherwise).
        """
    }
    static let refillsOnState = true

    static func send(_ worker: BenchWorker<Self>, from peer: BenchWorker<Self>.Peer, at now: UInt64, inWindow: Bool) -> Bool {
        worker.sendShopIntent(from: peer, at: now, inWindow: inWindow)
    }
    static func read(_ worker: BenchWorker<Self>, state: UnsafeRawBufferPointer, version: UInt64, of peer: BenchWorker<Self>.Peer,
                     inWindow: Bool) {
        worker.readShop(state, version: version, of: peer)
    }
    static func answered(_ worker: BenchWorker<Self>, ref: Int, of peer: BenchWorker<Self>.Peer, acked: Bool, version: UInt64,
                         sentInWindow: Bool) {
        worker.tally.answered(ref: ref, board: peer.board, acked: acked, version: version, sentInWindow: sentInWindow)
    }
    static func report(_ report: inout BenchReport, workers: [BenchWorker<Self>], plan: BenchPlan, seconds: Double) {
        report.addShop(workers, plan: plan, seconds: seconds)
    }
    static func text(_ report: BenchReport, _ p: (BenchReport.Percentiles) -> String) -> String? { report.shopText(p) }
    static func held(_ report: BenchReport) -> Bool {
        report.shop.map { $0.stockViolations == 0 && $0.conserved } ?? true
    }
}
