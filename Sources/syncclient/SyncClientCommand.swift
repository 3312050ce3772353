import ArgumentParser
import Foundation

/// `syncclient`: the terminal client of SyncHub (K3 in docs/rules/README.md;
/// the frames it speaks: docs/PROTOCOL.md).
@main
struct SyncClientCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "syncclient",
        abstract: "Watch, play, script and load-test SyncHub boards of every kind.",
        discussion: "URL is ws://HOST:PORT/KIND/NAME (KIND one of " + WatchedKinds.all.map { $0.pathSegment }.joined(separator: ", ")
            + """
            ), or wss://... for a hub with TLS (--ca FILE, --insecure). \
            A hub that checks tokens takes --token TOKEN or SYNCHUB_TOKEN (a refused token: exit 2, \
            "not allowed: ..."). One-shot commands exit 0 once the hub acknowledged, \
            1 when it refused (its message on standard error), 2 on a usage or connection error.
            """,
        subcommands: [WatchCommand.self, StateCommand.self] + WatchedKinds.all.flatMap { $0.commands }
            + [SendCommand.self, BenchCommand.self, AdminCommand.self])

    /// Parses and runs like ArgumentParser's own `main`, except that usage
    /// errors exit 2 (K3) instead of 64.
    static func main() {
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            fail(error, usage: fullMessage(for: error))
        }
        do {
            try command.run()
        } catch {
            // A check inside a subcommand's run (URL, letter): show that
            // subcommand's usage, not the root's.
            let subcommand = type(of: command)
            let words = path(to: subcommand)?.joined(separator: " ") ?? subcommand._commandName
            fail(error, usage: "Error: \(message(for: error))\nUsage: \(usageString(for: subcommand))\n"
                 + "  See 'syncclient \(words) --help' for more information.")
        }
    }

    /// The words naming `command` below `root` (`admin hubs`, `shop image put`).
    private static func path(to command: any ParsableCommand.Type,
                             from root: any ParsableCommand.Type = SyncClientCommand.self) -> [String]? {
        if ObjectIdentifier(root) == ObjectIdentifier(command) { return [] }
        for child in root.configuration.subcommands {
            if let rest = path(to: command, from: child) { return [child._commandName] + rest }
        }
        return nil
    }

    private static func fail(_ error: any Error, usage: String) -> Never {
        if exitCode(for: error) == .validationFailure {
            FileHandle.standardError.write(Data((usage + "\n").utf8))
            Foundation.exit(2)
        }
        exit(withError: error)
    }
}
