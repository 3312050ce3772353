import BoardCRDT
import WebSocketLoop

extension FruitStock: WatchedKind {
    static func watch(url: WebSocketURL, boardName: String, name: String?, interactive: Bool) {
        WatchSession<StockController>(url: url, boardName: boardName, name: name, interactive: interactive).run()
    }
}

extension StockController: KindScreen {
    typealias Kind = FruitStock

    /// Piped: one line per change of the stock, e.g.
    /// `bar v5: strawberry 10 banana 9 pineapple 10 kiwi 9 mango 8 | made 1 | ana Mango-kiwi juice`.
    static func transcriptLine(boardName: String, snapshot: LinkSnapshot<FruitStock>, previous: LinkSnapshot<FruitStock>?) -> String? {
        guard previous == nil || previous?.board != snapshot.board else { return nil }
        let state = snapshot.board
        let counts = Fruit.allCases.map { "\($0) \(state.count(of: $0))" }.joined(separator: " ")
        var line = "\(boardName) v\(snapshot.version): \(counts) | made " +
                   "\(state.made.values.reduce(0) { $0.addingReportingOverflow($1).overflow ? Int.max : $0 + $1 })"
        if let last = state.recent.last { line += " | \(last.who.isEmpty ? "someone" : last.who) \(last.juice.title)" }
        return line
    }
}
