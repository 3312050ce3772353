import Testing
@testable import BoardCRDT

/// Seeded convergence fuzzing of the shop through a sealing, compacting hub.
///
/// `BOARDCRDT_SHOP_SEED=<n> BOARDCRDT_SHOP_SCHEDULES=<k> swift test --filter ShopConvergence`
/// runs k schedules from seed n; `BOARDCRDT_SHOP_TRACE=1` prints each step of a failure.
///
/// One schedule: 2 to 4 clients (some under one name) order from what they
/// see (sometimes at a price they saw long ago), restock, set stock, edit
/// prices, availability and stock, add and remove dishes; they send their
/// operations to the hub in batches, sometimes twice; the hub (sealing,
/// compacting with a tiny window) relays what it integrated to every
/// client's inbox, and each client takes its messages in random order,
/// some twice. After every step: the engine's and the shop's invariants on
/// every replica (stock never below zero, every order's total its lines'
/// sum); an outcome the hub gave never changes (PC6); and **conservation**
/// on the hub, by plain arithmetic over the outcomes it gave: per dish,
/// stock = start + restocks + stock edits − ordered, sold = ordered. At the
/// end, after full delivery, every client shows the hub's state.
@Suite struct ShopConvergenceTests {
    static let knobs = FuzzKnobs(prefix: "BOARDCRDT_SHOP", defaultSeed: 0x5_40F, defaultSchedules: 120, shards: 2)

    static func runShard(_ shard: Int) {
        let tracing = knobs.value("TRACE") != nil
        for seed in knobs.seeds(shard: shard) {
            var schedule = ShopFuzzSchedule(seed: seed, tracing: tracing)
            do {
                try schedule.run()
            } catch {
                Issue.record("\(error)")
                return
            }
        }
    }

    @Test func shopConvergenceShard0() { Self.runShard(0) }
    @Test func shopConvergenceShard1() { Self.runShard(1) }
}

struct ShopFuzzFailure: Error, CustomStringConvertible {
    var seed: UInt64
    var step: Int
    var problems: [String]
    var trace: [String]
    var description: String {
        "Shop convergence failure, reproduce with BOARDCRDT_SHOP_SEED=\(seed) BOARDCRDT_SHOP_SCHEDULES=1 BOARDCRDT_SHOP_TRACE=1 swift test --filter ShopConvergence\n"
            + "step \(step): " + problems.joined(separator: "\n  ") + (trace.isEmpty ? "" : "\ntrace:\n" + trace.joined(separator: "\n"))
    }
}

struct ShopFuzzSchedule {
    let seed: UInt64
    var rng: SplitMix64
    var hub: Shop
    var clients: [Shop] = []
    var names: [String] = []
    var unsent: [[ShopOp]] = []
    var sent: [[ShopOp]] = []
    var inbox: [[[ShopOp]]] = []
    /// The hub's outcome of each operation when it integrated it (its ack).
    var acked: [OperationID: Outcome<ShopRefusal>] = [:]
    /// Conservation, by plain arithmetic from the hub's outcomes.
    var stockLedger: [String: Int] = [:]
    /// The hub's integrated operations replayed in the order it integrated them.
    var mirror: BanchanShop.State
    var problemsSeen: [String] = []
    var soldLedger: [String: Int] = [:]
    let tracing: Bool
    var trace: [String] = []
    var step = 0

    init(seed: UInt64, tracing: Bool) {
        self.seed = seed
        self.tracing = tracing
        rng = SplitMix64(seed: seed)
        var start = shopState()
        for index in start.dishes.indices {
            start.dishes[index].stock = rng.below(5)
            start.dishes[index].available = rng.below(5) > 0
        }
        hub = hubShop(100, start, keptOperations: 1 + rng.below(6))
        mirror = start
        let count = 2 + rng.below(3)
        for index in 0..<count {
            clients.append(shop(UInt64(index + 1), start))
            names.append(["ana", "bo", "cy", "ana"][index])
        }
        unsent = Array(repeating: [], count: count)
        sent = Array(repeating: [], count: count)
        inbox = Array(repeating: [], count: count)
        for dish in start.dishes {
            stockLedger[dish.id] = dish.stock
            soldLedger[dish.id] = 0
        }
    }

    mutating func run() throws {
        for _ in 0..<(40 + rng.below(80)) {
            step += 1
            switch rng.below(10) {
            case 0...3: act(client: rng.below(clients.count))
            case 4...5: send(from: rng.below(clients.count))
            case 6...8: deliver(to: rng.below(clients.count))
            default: hub.compact(keeping: rng.below(3))
            }
            try check()
        }
        for index in clients.indices { while !unsent[index].isEmpty { send(from: index) } }
        for index in clients.indices { while !inbox[index].isEmpty { deliver(to: index) } }
        try check()
        let diverged = clients.indices.filter { clients[$0].state != hub.state }
        if !diverged.isEmpty { throw failure(["clients \(diverged) differ from the hub after full delivery"]) }
    }

    mutating func act(client index: Int) {
        let view = clients[index].state
        let ids = view.dishes.map(\.id) + ["gone"]
        let id = ids[rng.below(ids.count)]
        let dish = view.dish(id)
        let intent: BanchanShop.Intent
        switch rng.below(8) {
        case 0, 1, 2:
            var lines: [OrderLine] = []
            for _ in 0...rng.below(2) {
                let pick = view.dishes.isEmpty ? nil : view.dishes[rng.below(view.dishes.count)]
                // Sometimes a price seen long ago.
                let price = rng.below(6) == 0 ? 5_000 : (pick?.price ?? 100)
                lines.append(OrderLine(dish: pick?.id ?? "gone", quantity: 1 + rng.below(3), price: price))
            }
            intent = .order(lines)
        case 3: intent = .restock(id, by: [-2, -1, 1, 3, 9_999][rng.below(5)])
        case 4: intent = .setStock(id, to: rng.below(6), from: dish?.stock ?? 0)
        case 5:
            let field = [DishField.price, .available, .stock][rng.below(3)]
            let value: ShopValue = switch field {
            case .price: .int([900, 1_000, 3_000, 4_000][rng.below(4)])
            case .available: .bool(rng.below(2) == 0)
            default: .int(rng.below(6))
            }
            intent = .editDish(id, set: [FieldValue(field, value)], from: [FieldValue(field, dish?.value(of: field) ?? .null)])
        case 6: intent = .addDish(Dish(id: "n\(rng.below(4))", section: .side, title: "새", price: 1_000, stock: rng.below(4)), idGiven: true)
        default: intent = .removeDish(id)
        }
        do {
            if let op = try clients[index].perform(intent, by: names[index]) {
                unsent[index].append(op)
                if tracing {
                    let outcome = clients[index].outcome(of: op.id).map { "\($0)" } ?? "?"
                    note("client \(index) \(intent) -> \(op.id) \(outcome)")
                }
            }
        } catch {
            note("client \(index) \(intent) refused locally: \(error.code)")
        }
    }

    mutating func send(from index: Int) {
        var batch = Array(unsent[index].prefix(1 + rng.below(3)))
        unsent[index].removeFirst(batch.count)
        sent[index] += batch
        if rng.below(4) == 0, !sent[index].isEmpty { batch.append(sent[index][rng.below(sent[index].count)]) }  // a resend
        let report = hub.receive(batch)
        for op in report.integratedOperations {
            if acked[op.id] != nil { problemsSeen.append("the hub integrated \(op.id) twice") }
            let outcome = BanchanShop.apply(op, to: &mirror)
            if let onHub = hub.outcome(of: op.id), onHub != outcome {
                problemsSeen.append("\(op.id) is \(onHub) on the hub, \(outcome) replayed in the order it was integrated")
            }
            acked[op.id] = outcome
            if case .applied = outcome { account(op) }
        }
        note("hub took \(batch.map(\.id)) integrated \(report.integratedOperations.map(\.id)) refused \(report.refused)")
        if !report.integratedOperations.isEmpty {
            for target in clients.indices { inbox[target].append(report.integratedOperations) }
        }
    }

    mutating func deliver(to index: Int) {
        guard !inbox[index].isEmpty else { return }
        let pick = rng.below(inbox[index].count)
        let message = inbox[index][pick]
        if rng.below(5) > 0 { inbox[index].remove(at: pick) }  // else delivered again later
        clients[index].receive(message)
        note("client \(index) got \(message.map(\.id))")
    }

    /// The independent model: what an applied change does to stock and sold, by arithmetic.
    mutating func account(_ op: ShopOp) {
        switch op.change {
        case let .order(lines):
            for line in lines {
                stockLedger[line.dish, default: 0] -= line.quantity
                if stockLedger[line.dish, default: 0] < 0 { problemsSeen.append("\(op.id) oversold \(line.dish) (PC1)") }
                soldLedger[line.dish, default: 0] += line.quantity
            }
        case let .restock(id, by): stockLedger[id, default: 0] += by
        case let .setStock(id, to, _): stockLedger[id] = to
        case let .editDish(id, set, _):
            for change in set { if change.field == .stock, case let .int(to) = change.value { stockLedger[id] = to } }
        case let .addDish(dish):
            stockLedger[dish.id] = dish.stock
            soldLedger[dish.id] = 0
        case let .removeDish(id):
            stockLedger[id] = nil
            soldLedger[id] = nil
        case .addImage: break
        }
    }

    func check() throws {
        var problems = problemsSeen
        if hub.state != mirror { problems.append("the hub's state is not its integrated operations replayed in order") }
        for (index, replica) in ([hub] + clients).enumerated() {
            problems += (replica.checkInvariants() + BanchanShop.violations(of: replica.state)).map { "replica \(index - 1): \($0)" }
        }
        // A compacted operation's outcome is folded into the checkpoint (nil); any other must stay.
        for (id, outcome) in acked {
            if let now = hub.outcome(of: id), now != outcome { problems.append("the hub's outcome of \(id) changed from \(outcome) to \(now)") }
        }
        let stock = Dictionary(uniqueKeysWithValues: hub.state.dishes.map { ($0.id, $0.stock) })
        let sold = Dictionary(uniqueKeysWithValues: hub.state.dishes.map { ($0.id, $0.sold) })
        if stock != stockLedger { problems.append("stock \(stock) but the ledger says \(stockLedger)") }
        if sold != soldLedger { problems.append("sold \(sold) but the ledger says \(soldLedger)") }
        if !problems.isEmpty { throw failure(problems) }
    }

    func failure(_ problems: [String]) -> ShopFuzzFailure {
        ShopFuzzFailure(seed: seed, step: step, problems: problems, trace: tracing ? trace : [])
    }

    mutating func note(_ line: @autoclosure () -> String) {
        if tracing { trace.append("\(step): \(line())") }
    }
}
