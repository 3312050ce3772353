import BoardCRDT
import WebSocketLoop

extension SetTable: WatchedKind {
    typealias Bench = SetBench

    static func watch(url: WebSocketURL, boardName: String, name: String?, interactive: Bool) {
        WatchSession<SetController>(url: url, boardName: boardName, name: name, interactive: interactive).run()
    }

    static let watchKeys = """
        Set tables (/\(pathSegment)/NAME): arrows move the cursor, Space or Enter chooses the card under it, \
        a click chooses a card; d deals three more, n starts a new game after y confirms; q quits.
        """
    static let sendExample = #"{"type":"choose","card":"2SFR"}"#
}

extension SetController: KindScreen {
    typealias Kind = SetTable

    /// Piped: one line per change of the table, e.g.
    /// `t1 v9 game 1: deck 66, 4 sets on table | 2SFR 1DOP -- ... | ana 1/0`.
    static func transcriptLine(boardName: String, snapshot: LinkSnapshot<SetTable>, previous: LinkSnapshot<SetTable>?) -> String? {
        guard previous == nil || previous?.board != snapshot.board else { return nil }
        let state = snapshot.board
        guard state.game > 0 else { return "\(boardName) v\(snapshot.version): no game yet" }
        let table = state.table.map { $0?.code ?? "----" }.joined(separator: " ")
        let players = state.players.sorted { $0.key < $1.key }
            .map { "\($0.key) \($0.value.score)/\($0.value.misses)" }
            .joined(separator: " ")
        return "\(boardName) v\(snapshot.version) game \(state.game): deck \(state.deck.count), \(state.setsOnTable) sets on table"
            + (state.over ? ", over" : "") + " | \(table)" + (players.isEmpty ? "" : " | \(players)")
    }
}
