import ArgumentParser
import BoardCRDT
import Foundation
import WebSocketLoop

/// Options every command that talks to one board shares.
struct BoardOptions: ParsableArguments {
    @Argument(help: "The board, as ws://HOST:PORT/boards/NAME.")
    var url: String

    @Option(help: "Seconds to wait for the hub before giving up (exit 2).")
    var timeout: Double = 5

    func parsedURL() throws -> WebSocketURL {
        guard let parsed = WebSocketURL(url), parsed.path.hasPrefix("/boards/"), parsed.path.count > 8 else {
            throw ValidationError("URL must look like ws://HOST:PORT/boards/NAME, not \(url)")
        }
        return parsed
    }
}

/// Runs one exchange and exits with CONTRACT's codes.
func runOneShot(_ options: BoardOptions, intent: LetterBoard.Intent?) throws {
    let outcome = ThinRequest(url: try options.parsedURL(), intent: intent, timeoutSeconds: options.timeout).run()
    switch outcome {
    case let .done(line):
        if let line { print(line) }
    case let .refused(message), let .failed(message):
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
    if outcome.exitCode != 0 { throw ExitCode(outcome.exitCode) }
}

func letterArgument(_ text: String) throws -> Letter {
    guard let letter = Letter(text.uppercased()) else {
        throw ValidationError("LETTER must be one letter A-Z, not \(text)")
    }
    return letter
}

struct StateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state", abstract: "Print the board's current state message on one line.")
    @OptionGroup var board: BoardOptions
    @Flag(help: "Print the hub's state message as JSON (the only format; kept for scripts).") var json = false
    func run() throws { try runOneShot(board, intent: nil) }
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
        commandName: "move", abstract: "Move selected LETTER to PLACE (1-based number). Exit 1 if it is not selected or PLACE is out of range.")
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
