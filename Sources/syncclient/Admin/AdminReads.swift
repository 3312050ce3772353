import ArgumentParser

/// `syncclient admin hubs|boards|board|audit`: the console's reads (O11), a
/// `GET` each, printed as a table or, with `--json`, as the hub's answer.
struct AdminHubsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hubs", abstract: "Every live hub: id, address, connections, boards, CPU, memory (GET /admin/api/hubs).")
    @OptionGroup var admin: AdminOptions

    func request() -> HTTPRequest { HTTPRequest(method: "GET", path: "/admin/api/hubs") }
    func run() throws { try admin.send(request(), view: AdminView.hubs) }
}

struct AdminBoardsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "boards",
        abstract: "Every board with a connection on any hub, and how many boards are stored (GET /admin/api/boards).")
    @OptionGroup var admin: AdminOptions
    @Option(help: ArgumentHelp("Only boards of this kind: \(AdminTargets.kinds.joined(separator: ", ")).",
                               valueName: "kind"))
    var kind: String?
    @Option(help: ArgumentHelp("Only boards whose name, or a name present on them, holds TEXT.", valueName: "text"))
    var query: String?

    func validate() throws { _ = try request() }

    func request() throws -> HTTPRequest {
        var query: [String] = []
        if let kind {
            guard AdminTargets.kinds.contains(kind) else {
                throw ValidationError("--kind must be one of \(AdminTargets.kinds.joined(separator: ", ")), not \(kind)")
            }
            query.append("kind=" + kind)
        }
        // An empty --query (an empty variable in a script) filters nothing.
        if let text = self.query, !text.isEmpty { query.append("q=" + AdminTargets.escaped(text)) }
        return HTTPRequest(method: "GET", path: "/admin/api/boards" + (query.isEmpty ? "" : "?" + query.joined(separator: "&")))
    }

    func run() throws { try admin.send(try request(), view: AdminView.boards) }
}

struct AdminBoardCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "board",
        abstract: "One board: its version, its last changes and its connections (GET /admin/api/boards/KIND/NAME).",
        discussion: "The table shows the newest \(AdminView.changesShown) changes; --json has all the hub keeps (100) and the state.")
    @OptionGroup var admin: AdminOptions
    @Argument(help: ArgumentHelp("The board, KIND/NAME (todo/groceries).", valueName: "kind/name"))
    var board: String

    func validate() throws { _ = try request() }

    func request() throws -> HTTPRequest {
        HTTPRequest(method: "GET", path: "/admin/api/boards/" + (try AdminTargets.board(board)))
    }

    func run() throws { try admin.send(try request(), view: AdminView.board) }
}

struct AdminAuditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit", abstract: "Every operator action, newest first: time, sub, action, target, result (GET /admin/api/audit).")
    @OptionGroup var admin: AdminOptions

    func request() -> HTTPRequest { HTTPRequest(method: "GET", path: "/admin/api/audit") }
    func run() throws { try admin.send(request(), view: AdminView.audit) }
}
