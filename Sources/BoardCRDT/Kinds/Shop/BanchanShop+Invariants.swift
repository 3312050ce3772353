extension BanchanShop {
    /// P2 on every dish, unique ids, stock never below zero (PC1), sold not
    /// negative, every order's total the sum of its lines, at most
    /// `ordersKept` orders: on every replica at every step.
    public static func violations(of state: State) -> [String] {
        var problems: [String] = []
        var seen = Set<String>()
        var lastSection = 0
        for dish in state.dishes {
            if !seen.insert(dish.id).inserted { problems.append("dish \(dish.id) twice") }
            if dish.stock < 0 { problems.append("\(dish.id) stock \(dish.stock) below zero") }
            if dish.sold < 0 { problems.append("\(dish.id) sold \(dish.sold)") }
            if let problem = DishRules.problem(with: dish, images: state.images) { problems.append("\(dish.id): \(problem.message)") }
            if dish.section.order < lastSection { problems.append("\(dish.id) out of its section's place") }
            lastSection = dish.section.order
        }
        if state.dishes.count > dishesMax { problems.append("\(state.dishes.count) dishes, more than \(dishesMax)") }
        let samples = Set(SampleCatalog.imageNames)
        for (name, image) in state.images {
            if image.digest.isEmpty {
                if !samples.contains(name) { problems.append("image \(name) has no bytes and is not the sample's") }
            } else if let problem = DishRules.imageProblem(name: name, image: image) {
                problems.append("image \(name): \(problem.message)")
            }
        }
        if state.storedImages > imagesMax { problems.append("\(state.storedImages) images, more than \(imagesMax)") }
        if state.orders.count > ordersKept { problems.append("\(state.orders.count) orders kept, more than \(ordersKept)") }
        for order in state.orders {
            if let problem = DishRules.problem(with: order.lines) { problems.append("order \(order.id): \(problem.message)") }
        }
        for order in state.orders where order.total != total(of: order.lines) {
            problems.append("order \(order.id) totals \(order.total), its lines \(total(of: order.lines))")
        }
        return problems
    }
}
