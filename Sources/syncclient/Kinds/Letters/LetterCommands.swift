import ArgumentParser
import BoardCRDT
import SyncWire

/// `syncclient select`, `deselect`, `move` and `reset`: one-shots on a
/// letter board (the first commands, from before kinds; their names stay).

/// Sends one intent to a letter board and exits with the codes of K3 (docs/rules/README.md).
private func runOneShot(_ options: BoardOptions, intent: LetterBoard.Intent) throws {
    let url = try options.parsedURL(of: LetterBoard.self)
    try runOneShot(url: url, members: LetterBoard.intentMembers(intent), timeout: options.timeout)
}

private func letterArgument(_ text: String) throws -> Letter {
    guard let letter = Letter(text.uppercased()) else {
        throw ValidationError("LETTER must be one letter A-Z, not \(text)")
    }
    return letter
}

struct SelectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "select", abstract: "Select LETTER (it joins the end of the order). Exit 1 if the hub refuses, e.g. board full.")
    @OptionGroup var board: BoardOptions
    @Argument(help: "A letter A-Z.") var letter: String
    func run() throws { try runOneShot(board, intent: .select(try letterArgument(letter))) }
}

struct DeselectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deselect", abstract: "Deselect LETTER (higher numbers close the gap).")
    @OptionGroup var board: BoardOptions
    @Argument(help: "A letter A-Z.") var letter: String
    func run() throws { try runOneShot(board, intent: .deselect(try letterArgument(letter))) }
}

struct MoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move",
        abstract: "Move selected LETTER to PLACE (1-based number). Exit 1 if it is not selected or PLACE is out of range.")
    @OptionGroup var board: BoardOptions
    @Argument(help: "A selected letter A-Z.") var letter: String
    @Argument(help: "The target place, 1...number of selected letters.") var place: Int
    func run() throws {
        try runOneShot(board, intent: .move(try letterArgument(letter), to: place))
    }
}

struct ResetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset", abstract: "Clear the board's selection for everyone.")
    @OptionGroup var board: BoardOptions
    func run() throws { try runOneShot(board, intent: .reset) }
}
