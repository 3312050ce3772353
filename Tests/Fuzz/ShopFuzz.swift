// The banchan shop (`BanchanShop`, docs/rules/shop.md) in the decoder fuzz
// harness (docs/FUZZING.md): compiled with DecoderFuzz.swift into the
// harness's module by scripts/fuzz.sh.
//
// Besides checks 2-5, which every kind gets (`KindFuzz<BanchanShop>`), this
// file gives the harness the shop's main invariants, checked apart from
// `BanchanShop.violations` on every decoded state and every replica after
// every step (stock never below zero nor above 9,999, ids unique, every
// order's total the sum of its lines), and a read-back of the `state`
// frame's `sections`: the three sections in order, each with exactly its
// dishes, every field and string as the state holds it.

import Foundation
@testable import BoardCRDT

extension BanchanShop: FuzzedKind {
    static func independentViolations(of state: State) -> [String] {
        var problems: [String] = []
        var ids = Set<[UInt8]>()
        for dish in state.dishes {
            if !ids.insert(Array(dish.id.utf8)).inserted { problems.append("\(dish.id) twice") }
            if !(0...9_999).contains(dish.stock) { problems.append("\(dish.id) stock \(dish.stock)") }
            if dish.sold < 0 { problems.append("\(dish.id) sold \(dish.sold)") }
            if !(0...10_000_000).contains(dish.price) { problems.append("\(dish.id) price \(dish.price)") }
            if let original = dish.originalPrice, original <= dish.price {
                problems.append("\(dish.id) original \(original) not above \(dish.price)")
            }
        }
        for order in state.orders {
            var sum = 0
            for line in order.lines {
                guard (1...99).contains(line.quantity), (0...10_000_000).contains(line.price) else {
                    problems.append("order \(order.id) has a line out of bounds")
                    break
                }
                sum += line.quantity * line.price
            }
            if sum != order.total, order.lines.allSatisfy({ (1...99).contains($0.quantity) && (0...10_000_000).contains($0.price) }) {
                problems.append("order \(order.id) totals \(order.total), its lines \(sum)")
            }
        }
        if state.orders.count > 5_000 { problems.append("\(state.orders.count) orders kept") }
        return problems
    }

    private struct StateFrame: Decodable {
        /// A dish as the frame shows it: no `section` (it sits in one).
        struct FrameDish: Decodable, Equatable {
            var id: String
            var title: String
            var description: String
            var price: Int
            var original_price: Int?
            var badges: [String]
            var thumb: String?
            var images: [String]
            var detail_images: [String]
            var stock: Int
            var available: Bool
            var sold: Int
        }
        struct Section: Decodable {
            var id: String
            var title: String
            var subtitle: String
            var dishes: [FrameDish]
        }
        var type: String
        var kind: String
        var sections: [Section]
    }

    static func stateFrameProblem(_ frame: Data, _ state: State) -> String? {
        let read: StateFrame
        do { read = try JSONDecoder().decode(StateFrame.self, from: frame) } catch { return "does not decode: \(error)" }
        guard read.type == "state", read.kind == name else { return "type \(read.type), kind \(read.kind)" }
        guard read.sections.map(\.id) == ["main", "soup", "side"] else { return "sections \(read.sections.map(\.id))" }
        for section in read.sections {
            let shown = section.dishes
            let held = state.dishes.filter { $0.section.rawValue == section.id }.map {
                StateFrame.FrameDish(id: $0.id, title: $0.title, description: $0.description, price: $0.price,
                                     original_price: $0.originalPrice,
                                     badges: $0.badges, thumb: $0.thumb, images: $0.images, detail_images: $0.detailImages,
                                     stock: $0.stock, available: $0.available, sold: $0.sold)
            }
            let bytes = { (dishes: [StateFrame.FrameDish]) in dishes.map { [$0.id, $0.title, $0.description].map { Array($0.utf8) } } }
            guard shown == held, bytes(shown) == bytes(held) else {
                return "section \(section.id) read back \(shown), the state holds \(held)"
            }
        }
        return nil
    }
}
