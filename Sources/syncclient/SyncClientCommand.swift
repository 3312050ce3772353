import ArgumentParser
import Foundation

/// `syncclient`: the terminal client of SyncHub (CONTRACT.md).
@main
struct SyncClientCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "syncclient",
        abstract: "Watch, play, script and load-test SyncHub letter boards.",
        discussion: """
            URL is ws://HOST:PORT/boards/NAME. One-shot commands exit 0 once the hub acknowledged, \
            1 when it refused (its message on standard error), 2 on a usage or connection error.
            """,
        subcommands: [WatchCommand.self, StateCommand.self, SelectCommand.self, DeselectCommand.self,
                      MoveCommand.self, ResetCommand.self, BenchCommand.self])

    /// Parses and runs like ArgumentParser's own `main`, except that usage
    /// errors exit 2 (CONTRACT) instead of 64.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}
