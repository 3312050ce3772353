import ArgumentParser
import BoardCRDT
import WebSocketLoop

extension FruitStock: WatchedKind {
    typealias Bench = StockBench

    static func watch(url: WebSocketURL, boardName: String, name: String?, interactive: Bool) {
        WatchSession<StockController>(url: url, boardName: boardName, name: name, interactive: interactive).run()
    }

    static let watchKeys = """
        Juice bars (/\(pathSegment)/NAME): 1-7 make that juice, arrows or Tab move and Enter or Space presses the \
        button under the cursor, a click presses a button; after a make, OK (Enter) dismisses "is ready"; \
        when fruit is short, y opens the stock editor and n or Esc closes the question; e opens the \
        editor ("Add stock"): arrows move, - and + change the fruit by one (never below 0), Esc or \
        Close returns; r resets every fruit to 10 after y confirms; q quits.
        """
    static let sendExample = #"{"type":"make","juice":"mango_kiwi"}"#
    static let commands: [any ParsableCommand.Type] = [StockCommand.self]
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
