import Testing
@testable import BoardCRDT

typealias Shop = Replica<BanchanShop>
typealias ShopOp = Operation<BanchanShop.Change>

/// A small catalog for rule tests: `a` (main, 5,000 won, stock `stockA`),
/// `b` (soup, 3,000 won, stock 2), `c` (side, 1,000 won, off sale, stock 9).
func shopState(stockA: Int = 5) -> BanchanShop.State {
    var state = BanchanShop.State(images: ["a.png": ShopImage(type: "image/png", digest: String(repeating: "a", count: 64), bytes: 10)])
    state.dishes = [
        Dish(id: "a", section: .main, title: "갈비", price: 5_000, originalPrice: 6_000, thumb: "a.png", stock: stockA),
        Dish(id: "b", section: .soup, title: "국", price: 3_000, stock: 2),
        Dish(id: "c", section: .side, title: "나물", price: 1_000, stock: 9, available: false),
    ]
    return state
}

/// A client replica of the shop (no compaction; the hub seals its order).
func shop(_ id: UInt64, _ state: BanchanShop.State? = nil,
          limits: ReplicaLimits = ReplicaLimits(compacts: false, hubSealsOrder: true)) -> Shop {
    Shop(id: ReplicaID(id), checkpoint: Checkpoint<BanchanShop>(state: state ?? shopState(), frontier: .origin, versions: VersionVector()),
         limits: limits)
}

/// The hub's replica as SyncHub runs it: an acknowledged operation is final.
func hubShop(_ id: UInt64, _ state: BanchanShop.State? = nil, keptOperations: Int = 1024) -> Shop {
    shop(id, state, limits: ReplicaLimits(keptOperations: keptOperations, sealsOrder: true))
}

/// Performs an intent that must record an operation and apply it.
@discardableResult
func act(_ replica: inout Shop, _ intent: BanchanShop.Intent, by name: String = "ana") throws -> ShopOp {
    let op = try #require(try replica.perform(intent, by: name), "\(intent) recorded nothing")
    #expect(replica.outcome(of: op.id) == .applied, "\(intent) by \(name) was prepared but not applied")
    return op
}

/// The refusal `intent` meets, or nil if it was accepted (or changed nothing).
func shopRefusal(_ replica: inout Shop, _ intent: BanchanShop.Intent, by name: String = "ana") -> ShopRefusal? {
    do {
        try replica.perform(intent, by: name)
        return nil
    } catch {
        return error
    }
}

func line(_ dish: String, _ quantity: Int, _ price: Int) -> OrderLine { OrderLine(dish: dish, quantity: quantity, price: price) }

/// Fails the test with every broken invariant of `replica`.
func expectShopInvariants(_ replica: Shop, sourceLocation: SourceLocation = #_sourceLocation) {
    let problems = replica.checkInvariants() + BanchanShop.violations(of: replica.state)
    #expect(problems.isEmpty, "\(problems)", sourceLocation: sourceLocation)
}
