import ArgumentParser
import Foundation
import SyncWire
import WebSocketLoop

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Mirror a board of any kind live, full screen, and play it; q quits.",
        discussion: WatchedKinds.all.map { $0.watchKeys }.joined(separator: " ") + " " + """
            When standard output is not a terminal, prints one line per change of the order (or the table) instead.
            """)

    @OptionGroup var board: BoardOptions
    @Option(help: """
        Your name, shown to the others on the board and the one your picks and scores go under (1 to 32 characters; default: $USER).
        """)
    var name: String?

    func run() throws {
        let (url, kind) = try board.parsedURL()
        let boardName = String(url.path.split(separator: "/").last ?? "")
        // A hub that checks tokens takes the name from the token (A11):
        // a replica's hello must carry exactly that name.
        let tokenName = HubAccess.chosen.withLock { $0.token }.flatMap(TokenRefresh.displayName(of:))
        if let tokenName, let name, name != tokenName {
            throw ValidationError("--name \(name) differs from your token's name \(tokenName): a hub that checks tokens shows the " +
                                  "token's name")
        }
        let chosen = tokenName ?? name ?? ProcessInfo.processInfo.environment["USER"].map { String($0.prefix(ClientLimits.maxNameLength)) }
        if let chosen, ClientLimits.problem(withName: chosen) != nil {
            throw ValidationError("--name must be one line of 1 to \(ClientLimits.maxNameLength) characters")
        }
        // Without a name a replica acts as "" (docs/PROTOCOL.md): fine for
        // watching, but a player needs one to recognise their own picks.
        kind.watch(url: url, boardName: boardName, name: chosen.flatMap { $0.isEmpty ? nil : $0 }, interactive: Terminal.isInteractive)
    }
}
