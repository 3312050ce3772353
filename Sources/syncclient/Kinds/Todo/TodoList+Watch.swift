import BoardCRDT
import WebSocketLoop

extension TodoList: WatchedKind {
    static func watch(url: WebSocketURL, boardName: String, name: String?, interactive: Bool) {
        WatchSession<TodoController>(url: url, boardName: boardName, name: name, interactive: interactive).run()
    }
}

extension TodoController: KindScreen {
    typealias Kind = TodoList

    /// Piped: one line per change of the list, e.g.
    /// `home v7: [ ] Buy oat milk | [x] Call bo | [ ] Pick up parcel`.
    static func transcriptLine(boardName: String, snapshot: LinkSnapshot<TodoList>, previous: LinkSnapshot<TodoList>?) -> String? {
        guard previous == nil || previous?.board.items != snapshot.board.items else { return nil }
        let items = snapshot.board.items
        guard !items.isEmpty else { return "\(boardName) v\(snapshot.version): \(TodoScreen.empty)" }
        return "\(boardName) v\(snapshot.version): " + items.map { "[\($0.done ? "x" : " ")] \($0.title)" }.joined(separator: " | ")
    }
}
