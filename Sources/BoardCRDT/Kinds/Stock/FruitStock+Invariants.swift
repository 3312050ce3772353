extension FruitStock {
    /// J1, J7: every fruit counted once, within 0...999 on every replica at
    /// every step (JC1); made counts not negative; at most `recentKept` recent makes.
    public static func violations(of state: State) -> [String] {
        var problems: [String] = []
        for fruit in Fruit.allCases {
            guard let count = state.stock[fruit] else {
                problems.append("\(fruit) has no count")
                continue
            }
            if !counts.contains(count) { problems.append("\(fruit) is \(count), outside 0...999") }
        }
        for (juice, count) in state.made where count < 0 { problems.append("\(juice) made \(count) times") }
        if state.recent.count > recentKept { problems.append("\(state.recent.count) recent makes kept, more than \(recentKept)") }
        return problems
    }
}
