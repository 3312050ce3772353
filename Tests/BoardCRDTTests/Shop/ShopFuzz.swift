@testable import BoardCRDT

/// The shop in the convergence fuzz (inbox topology; see
/// `ShopConvergenceTests`): clients (some under one name) order from what
/// they see (sometimes at a price they saw long ago), restock, set stock,
/// edit prices, availability and stock, add and remove dishes; the hub takes
/// thin orders too and compacts on its own. On every replica
/// `BanchanShop.violations` (stock never below zero, every order's total its
/// lines' sum). On the hub, **conservation** by plain arithmetic over the
/// outcomes it gave: per dish, stock = start + restocks + stock edits −
/// ordered, never below zero (PC1), and sold = ordered.
extension BanchanShop: FuzzedKind {
    struct Ledger {
        var stock: [String: Int] = [:]
        var sold: [String: Int] = [:]
    }

    static var fuzz: FuzzSetup {
        FuzzSetup(title: "Shop", knobs: FuzzKnobs(prefix: "BOARDCRDT_SHOP", defaultSeed: 0x5_40F, defaultSchedules: 120, shards: 2),
                  filter: "ShopConvergence",
                  topology: .inbox(InboxMix(localIntent: 40, hubIntent: 4, send: 20, deliver: 26, catchUp: 5, compact: 5)),
                  steps: 40...119, players: ["ana", "bo", "cy"])
    }

    static func start(_ rng: inout SplitMix64) -> (state: State, late: Bool) {
        var start = shopState()
        for index in start.dishes.indices {
            start.dishes[index].stock = rng.below(5)
            start.dishes[index].available = rng.below(5) > 0
        }
        return (start, false)
    }

    static func randomIntent(_ rng: inout SplitMix64, in view: State, by name: String) -> Intent {
        let ids = view.dishes.map(\.id) + ["gone"]
        let id = ids[rng.below(ids.count)]
        let dish = view.dish(id)
        switch rng.below(8) {
        case 0, 1, 2:
            var lines: [OrderLine] = []
            for _ in 0...rng.below(2) {
                let pick = view.dishes.isEmpty ? nil : view.dishes[rng.below(view.dishes.count)]
                // Sometimes a price seen long ago.
                let price = rng.below(6) == 0 ? 5_000 : (pick?.price ?? 100)
                lines.append(OrderLine(dish: pick?.id ?? "gone", quantity: 1 + rng.below(3), price: price))
            }
            return .order(lines)
        case 3: return .restock(id, by: [-2, -1, 1, 3, 9_999][rng.below(5)])
        case 4: return .setStock(id, to: rng.below(6), from: dish?.stock ?? 0)
        case 5:
            let field = [DishField.price, .available, .stock][rng.below(3)]
            let value: ShopValue = switch field {
            case .price: .int([900, 1_000, 3_000, 4_000][rng.below(4)])
            case .available: .bool(rng.below(2) == 0)
            default: .int(rng.below(6))
            }
            return .editDish(id, set: [FieldValue(field, value)], from: [FieldValue(field, dish?.value(of: field) ?? .null)])
        case 6: return .addDish(Dish(id: "n\(rng.below(4))", section: .side, title: "새", price: 1_000, stock: rng.below(4)), idGiven: true)
        default: return .removeDish(id)
        }
    }

    static func ledger(from start: State) -> Ledger {
        var ledger = Ledger()
        for dish in start.dishes {
            ledger.stock[dish.id] = dish.stock
            ledger.sold[dish.id] = dish.sold
        }
        return ledger
    }

    /// What an applied change does to stock and sold, by arithmetic.
    static func book(_ op: Operation<Change>, outcome: Outcome<Refusal>, before: State, after: State,
                     in ledger: inout Ledger, counts: inout FuzzCounts) -> [String] {
        guard outcome == .applied else { return [] }
        var problems: [String] = []
        switch op.change {
        case let .order(lines):
            counts.bump("orders applied by the hub")
            for line in lines {
                ledger.stock[line.dish, default: 0] -= line.quantity
                if ledger.stock[line.dish, default: 0] < 0 { problems.append("\(op.id) oversold \(line.dish) (PC1)") }
                ledger.sold[line.dish, default: 0] += line.quantity
            }
        case let .restock(id, by): ledger.stock[id, default: 0] += by
        case let .setStock(id, to, _): ledger.stock[id] = to
        case let .editDish(id, set, _):
            for change in set { if change.field == .stock, case let .int(to) = change.value { ledger.stock[id] = to } }
        case let .addDish(dish):
            ledger.stock[dish.id] = dish.stock
            ledger.sold[dish.id] = 0
        case let .removeDish(id):
            ledger.stock[id] = nil
            ledger.sold[id] = nil
        case .addImage: break
        }
        return problems
    }

    static func hubProblems(_ hub: Replica<Self>, ledger: Ledger) -> [String] {
        var problems: [String] = []
        let stock = Dictionary(uniqueKeysWithValues: hub.state.dishes.map { ($0.id, $0.stock) })
        let sold = Dictionary(uniqueKeysWithValues: hub.state.dishes.map { ($0.id, $0.sold) })
        if stock != ledger.stock { problems.append("stock \(stock) but the ledger says \(ledger.stock)") }
        if sold != ledger.sold { problems.append("sold \(sold) but the ledger says \(ledger.sold)") }
        return problems
    }

    static func describe(_ state: State) -> String { state.dishes.map { "\($0.id):\($0.stock)/\($0.sold)" }.joined(separator: " ") }
}
