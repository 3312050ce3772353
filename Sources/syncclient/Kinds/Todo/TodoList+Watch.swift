import ArgumentParser
import BoardCRDT
import WebSocketLoop

extension TodoList: WatchedKind {
    typealias Bench = TodoBench

    static func watch(url: WebSocketURL, boardName: String, name: String?, interactive: Bool) {
        WatchSession<TodoController>(url: url, boardName: boardName, name: name, interactive: interactive).run()
    }

    static let watchKeys = """
        Reminders (/\(pathSegment)/NAME): arrows select, Enter edits the title (on "No reminders" it adds one), Tab the \
        memo; while editing, typing, Backspace, Left/Right work, Return adds an item below, Esc or arrowing \
        off the item ends (an empty title deletes it); Space flips done, d deletes, a adds at the end, q quits; \
        a click on the circle flips done, on a row edits it, a drag moves it.
        """
    static let sendExample = #"{"type":"add","id":"a1","after":null,"title":"Milk","memo":""}"#
    static let commands: [any ParsableCommand.Type] = [TodoCommand.self]
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
