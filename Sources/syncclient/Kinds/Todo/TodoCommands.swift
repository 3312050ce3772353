import ArgumentParser
import BoardCRDT
import Foundation
import SyncWire
import WebSocketLoop

/// `syncclient todo ...`: one-shots on a reminders list (/todo/NAME,
/// docs/rules/todo.md). Exit 0 on ack, 1 when the hub refuses (its message
/// on standard error), 2 on a usage or connection error (K3, docs/rules/README.md).
struct TodoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "todo",
        abstract: "Add, tick, edit, move, delete and list reminders (ws://HOST:PORT/todo/NAME).",
        discussion: """
            One-shot commands: exit 0 once the hub acknowledged, 1 when it refused (its message on \
            standard error, e.g. "ana deleted this reminder"), 2 on a usage or connection error. \
            An ID is 1 to 64 of A-Z a-z 0-9 _ -; `todo list` shows them.
            """,
        subcommands: [TodoAddCommand.self, TodoDoneCommand.self, TodoEditCommand.self, TodoMoveCommand.self,
                      TodoDeleteCommand.self, TodoListCommand.self])
}

/// An item id as T1 allows it, or a usage error naming the option.
func todoIDArgument(_ text: String, _ what: String = "ID") throws -> String {
    guard TodoList.isValidID(text) else {
        throw ValidationError("\(what) must be 1 to 64 of A-Z a-z 0-9 _ -, not \"\(text.prefix(70))\"")
    }
    return text
}

/// A title or memo as T1 allows it, or a usage error.
func todoTextArgument(_ text: String, field: TodoList.Field) throws -> String {
    if let problem = TodoList.textProblem(text, field: field) { throw ValidationError(problem.message) }
    return text
}

/// Sends one todo intent and exits with K3's codes; `printing` is
/// what to print on the ack (the new item's id for `add`).
private func runTodo(_ board: BoardOptions, _ intent: TodoList.Intent, printing line: String? = nil) throws {
    let url = try board.parsedURL(of: TodoList.self)
    let outcome = ThinRequest(url: url, intentMembers: TodoList.intentMembers(intent), timeoutSeconds: board.timeout).run()
    switch outcome {
    case .done:
        if let line { print(line) }
    case let .refused(message), let .failed(message):
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
    if outcome.exitCode != 0 { throw ExitCode(outcome.exitCode) }
}

/// The list's state frame as the hub sends it, or exit 2 (1 when refused).
private func todoState(_ url: WebSocketURL, timeout: Double) throws -> (line: String, items: [[String: Any]]) {
    let outcome = ThinRequest(url: url, intentMembers: nil, timeoutSeconds: timeout).run()
    guard case let .done(line?) = outcome else {
        if case let .refused(message) = outcome { FileHandle.standardError.write(Data((message + "\n").utf8)) }
        if case let .failed(message) = outcome { FileHandle.standardError.write(Data((message + "\n").utf8)) }
        throw ExitCode(outcome.exitCode == 0 ? 2 : outcome.exitCode)
    }
    guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
          let items = object["items"] as? [[String: Any]] else {
        FileHandle.standardError.write(Data("not a reminders list's state: \(line.prefix(200))\n".utf8))
        throw ExitCode(2)
    }
    return (line, items)
}

/// `--after ID` or `--top`, exactly one (nil when neither and `optional`).
private func placement(after: String?, top: Bool) throws -> String?? {
    if let after {
        guard !top else { throw ValidationError("give --after ID or --top, not both") }
        return .some(try todoIDArgument(after, "--after"))
    }
    return top ? .some(nil) : nil
}

struct TodoAddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a reminder titled TITLE (at the end unless --after or --top); prints its id.",
        discussion: """
            Example: syncclient todo add ws://127.0.0.1:8080/todo/home "Buy milk" --memo "2 litres" --top. \
            Exit 1 if --after names no item (no_such_item) or --id is taken (duplicate_id).
            """)
    @OptionGroup var board: BoardOptions
    @Argument(help: "The title (one line; may be empty: \"\").") var title: String
    @Option(help: "The memo (notes under the title).") var memo = ""
    @Option(help: "Put it right after the item with this id.") var after: String?
    @Flag(help: "Put it first.") var top = false
    @Option(help: "The new item's id (default: 8 random letters and digits).") var id: String?

    func run() throws {
        let title = try todoTextArgument(title, field: .title)
        let memo = try todoTextArgument(memo, field: .memo)
        let id = try id.map { try todoIDArgument($0, "--id") } ?? TodoController.newID(avoiding: TodoList.initialState)
        let anchor: String?
        if let placed = try placement(after: after, top: top) {
            anchor = placed
        } else {
            // At the end: after the last item the hub shows now.
            let url = try board.parsedURL(of: TodoList.self)
            anchor = try todoState(url, timeout: board.timeout).items.last?["id"] as? String
        }
        try runTodo(board, .add(id: id, after: anchor, title: title, memo: memo), printing: id)
    }
}

struct TodoDoneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "done", abstract: "Mark the reminder ID done (--undo: not done). Exit 1 if there is no such item.")
    @OptionGroup var board: BoardOptions
    @Argument(help: "The item's id.") var id: String
    @Flag(help: "Mark it not done.") var undo = false
    func run() throws { try runTodo(board, .done(id: try todoIDArgument(id), done: !undo)) }
}

struct TodoEditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract: "Change the title and/or memo of the reminder ID.",
        discussion: """
            With --base (the text you started from, for one field), a concurrent change elsewhere in the \
            text is kept (TC2); without it the field is replaced. Exit 1 if there is no such item.
            """)
    @OptionGroup var board: BoardOptions
    @Argument(help: "The item's id.") var id: String
    @Option(help: "The new title (one line).") var title: String?
    @Option(help: "The new memo.") var memo: String?
    @Option(help: "The text the edited field had when you started (with one of --title or --memo).") var base: String?

    func run() throws {
        let id = try todoIDArgument(id)
        guard title != nil || memo != nil else { throw ValidationError("give --title, --memo or both") }
        if base != nil, title != nil, memo != nil {
            throw ValidationError("--base goes with one field: give --title or --memo, not both")
        }
        let title = try title.map { try todoTextArgument($0, field: .title) }
        let memo = try memo.map { try todoTextArgument($0, field: .memo) }
        try runTodo(board, .edit(id: id, title: title.map { TodoList.TextEdit($0, base: base) },
                                 memo: memo.map { TodoList.TextEdit($0, base: base) }))
    }
}

struct TodoMoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move", abstract: "Put the reminder ID right after another (--after ID) or first (--top).")
    @OptionGroup var board: BoardOptions
    @Argument(help: "The item's id.") var id: String
    @Option(help: "Put it right after the item with this id.") var after: String?
    @Flag(help: "Put it first.") var top = false

    func run() throws {
        let id = try todoIDArgument(id)
        guard let anchor = try placement(after: after, top: top) else { throw ValidationError("give --after ID or --top") }
        try runTodo(board, .move(id: id, after: anchor))
    }
}

struct TodoDeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete the reminder ID. Exit 1 if there is no such item.")
    @OptionGroup var board: BoardOptions
    @Argument(help: "The item's id.") var id: String
    func run() throws { try runTodo(board, .delete(id: try todoIDArgument(id))) }
}

struct TodoListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "Print the list: one line per item, \"[x] ID TITLE\" or \"[ ] ID TITLE\", its memo indented under it.")
    @OptionGroup var board: BoardOptions
    @Flag(help: "Print the hub's state message as JSON instead.") var json = false

    func run() throws {
        let url = try board.parsedURL(of: TodoList.self)
        let (line, items) = try todoState(url, timeout: board.timeout)
        if json {
            print(line)
            return
        }
        print(Self.text(items), terminator: "")
    }

    /// `[ ] a1 Milk` / `    2 litres` lines; "No reminders" for an empty list.
    static func text(_ items: [[String: Any]]) -> String {
        guard !items.isEmpty else { return TodoScreen.empty + "\n" }
        var out = ""
        for item in items {
            let done = item["done"] as? Bool ?? false
            out += "[\(done ? "x" : " ")] \(item["id"] as? String ?? "?") \(item["title"] as? String ?? "")\n"
            let memo = item["memo"] as? String ?? ""
            if !memo.isEmpty {
                for line in memo.split(separator: "\n", omittingEmptySubsequences: false) { out += "    \(line)\n" }
            }
        }
        return out
    }
}
