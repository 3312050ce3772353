import ArgumentParser

/// `syncclient admin disconnect|revoke|freeze|thaw|drain`: the console's
/// actions (O12), a `POST` each with a JSON body, audited by the hub.
/// Done: one line saying what happened (`--json`: the hub's answer).
struct AdminDisconnectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "disconnect",
        abstract: "Close connections with 4409 (POST /admin/api/disconnect); their clients wait 30 s before reconnecting.",
        discussion: "Give one of: --connection HUB/N (one connection), --sub S (all of a sub, on every hub), "
            + "--name N --board KIND/NAME (a name on one board).")
    @OptionGroup var admin: AdminOptions
    @Option(help: ArgumentHelp("One connection, HUB/N as admin board lists it.", valueName: "hub/n")) var connection: String?
    @Option(help: ArgumentHelp("Every connection of this sub (the token's subject), on every hub.", valueName: "sub")) var sub: String?
    @Option(help: ArgumentHelp("Every connection with this name on --board.", valueName: "name")) var name: String?
    @Option(help: ArgumentHelp("The board of --name, KIND/NAME.", valueName: "kind/name")) var board: String?

    func validate() throws { _ = try request() }

    func request() throws -> HTTPRequest {
        let forms = [connection != nil, sub != nil, name != nil || board != nil].filter { $0 }.count
        guard forms == 1 else { throw ValidationError("give one of --connection HUB/N, --sub S, or --name N with --board KIND/NAME") }
        let body: String
        if let connection {
            body = adminBody(["connection": try AdminTargets.connection(connection)])
        } else if let sub {
            body = adminBody(["sub": try AdminTargets.nonEmpty(sub, "--sub")])
        } else if let name, let board {
            body = adminBody(["name": try AdminTargets.nonEmpty(name, "--name"), "board": try AdminTargets.board(board)])
        } else {
            throw ValidationError("--name and --board go together: a name is disconnected on one board")
        }
        return HTTPRequest(method: "POST", path: "/admin/api/disconnect", body: body)
    }

    func run() throws {
        try admin.send(try request()) { body throws(AdminView.Unreadable) in
            try AdminView.done(body) { done in
                let asked = done.sentTo ?? []
                return "closed " + AdminView.count(done.closed ?? 0, "connection")
                    + (asked.isEmpty ? ""
                        : " here; asked " + AdminView.count(asked.count, "other hub") + " (" + asked.joined(separator: ", ") + ")")
            }
        }
    }
}

struct AdminRevokeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Refuse tokens from now on, on every hub, and close their connections with 4401 (POST /admin/api/revoke).",
        discussion: "Give one of: --jti J (every token with that id), --sub S (every token of that sub issued before now).")
    @OptionGroup var admin: AdminOptions
    @Option(help: ArgumentHelp("The token id (its jti claim).", valueName: "jti")) var jti: String?
    @Option(help: ArgumentHelp("The sub whose tokens issued before now are refused.", valueName: "sub")) var sub: String?

    func validate() throws { _ = try request() }

    func request() throws -> HTTPRequest {
        let body: String
        switch (jti, sub) {
        case let (jti?, nil): body = adminBody(["jti": try AdminTargets.nonEmpty(jti, "--jti")])
        case let (nil, sub?): body = adminBody(["sub": try AdminTargets.nonEmpty(sub, "--sub")])
        default: throw ValidationError("give one of --jti J or --sub S")
        }
        return HTTPRequest(method: "POST", path: "/admin/api/revoke", body: body)
    }

    func run() throws {
        let said = jti.map { "revoked every token with jti \($0)" } ?? "revoked the tokens of sub \(sub ?? "") issued before now"
        try admin.send(try request()) { body throws(AdminView.Unreadable) in try AdminView.done(body) { _ in said } }
    }
}

struct AdminFreezeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "freeze",
        abstract: "Refuse every intent on a board (code frozen) except an admin's, until thawed (POST .../freeze).")
    @OptionGroup var admin: AdminOptions
    @Argument(help: ArgumentHelp("The board, KIND/NAME.", valueName: "kind/name")) var board: String

    func validate() throws { _ = try request() }
    func request() throws -> HTTPRequest { try boardAction(board, "freeze") }
    func run() throws { try sendBoardAction(admin, try request(), said: "froze \(board)") }
}

struct AdminThawCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thaw", abstract: "Take intents on a frozen board again (POST .../thaw).")
    @OptionGroup var admin: AdminOptions
    @Argument(help: ArgumentHelp("The board, KIND/NAME.", valueName: "kind/name")) var board: String

    func validate() throws { _ = try request() }
    func request() throws -> HTTPRequest { try boardAction(board, "thaw") }
    func run() throws { try sendBoardAction(admin, try request(), said: "thawed \(board)") }
}

struct AdminDrainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drain",
        abstract: "Drain a hub: it takes no connections, moves its clients to the others, then exits (POST /admin/api/hubs/HUB/drain).")
    @OptionGroup var admin: AdminOptions
    @Argument(help: ArgumentHelp("The hub's id, as admin hubs lists it.", valueName: "hub")) var hub: String

    func validate() throws { _ = try request() }

    func request() throws -> HTTPRequest {
        HTTPRequest(method: "POST", path: "/admin/api/hubs/\(try AdminTargets.hubSegment(hub))/drain", body: "{}")
    }

    func run() throws {
        try admin.send(try request()) { body throws(AdminView.Unreadable) in
            try AdminView.done(body) { done in (done.sentTo ?? []).isEmpty ? "hub \(hub) is draining" : "asked hub \(hub) to drain" }
        }
    }
}

/// `POST /admin/api/boards/KIND/NAME/ACTION` with `{}` (freeze, thaw).
private func boardAction(_ board: String, _ action: String) throws -> HTTPRequest {
    HTTPRequest(method: "POST", path: "/admin/api/boards/\(try AdminTargets.board(board))/\(action)", body: "{}")
}

private func sendBoardAction(_ admin: AdminOptions, _ request: HTTPRequest, said: String) throws {
    try admin.send(request) { body throws(AdminView.Unreadable) in
        try AdminView.done(body) { done in said + (done.version.map { " at version \($0)" } ?? "") }
    }
}
