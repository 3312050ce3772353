import ArgumentParser
import Foundation
import SyncWire
import WebSocketLoop

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Mirror a board, Set table, juice bar or reminders list live, full screen, and play it; q quits.",
        discussion: """
            Letter boards (/boards/NAME): a letter A-Z toggles it; 1-6 moves the focused letter to that place; < and > (or \
            arrows left/right) move it one place; Tab moves the focus; - hides, + shows, ! resets; \
            ? toggles the key list; q (Shift-Q toggles Q), Esc, Ctrl-C or Ctrl-D quits. \
            Mouse: click a tile to toggle it, drag a letter in the top grid onto another cell to move it, \
            click Hide / Show / Reset, drag the action bar up or down. \
            Set tables (/set/NAME): arrows move the cursor, Space or Enter chooses the card under it, \
            a click chooses a card; d deals three more, n starts a new game after y confirms; q quits. \
            Juice bars (/stock/NAME): 1-7 make that juice, arrows or Tab move and Enter or Space presses the \
            button under the cursor, a click presses a button; after a make, OK (Enter) dismisses "is ready"; \
            when fruit is short, y opens the stock editor and n or Esc closes the question; e opens the \
            editor ("Add stock"): arrows move, - and + change the fruit by one (never below 0), Esc or \
            Close returns; r resets every fruit to 10 after y confirms; q quits. \
            Reminders (/todo/NAME): arrows select, Enter edits the title (on "No reminders" it adds one), Tab the \
            memo; while editing, typing, Backspace, Left/Right work, Return adds an item below, Esc or arrowing \
            off the item ends (an empty title deletes it); Space flips done, d deletes, a adds at the end, q quits; \
            a click on the circle flips done, on a row edits it, a drag moves it. \
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
