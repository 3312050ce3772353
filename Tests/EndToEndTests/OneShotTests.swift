import Foundation
import Testing

/// The one-shot subcommands exactly as K3 and docs/rules/letters.md ("Frames")
/// list them, run as the built `syncclient` binary against the real hub:
/// `state --json` prints the state object on one line; `select`,
/// `deselect`, `move`, `reset` exit 0 once the hub acknowledged, 1 with
/// the hub's message on standard error when it refused, 2 on a usage or
/// connection error.
@Suite(.serialized) struct OneShotTests {
    /// Runs a one-shot and returns its result.
    private func client(_ arguments: String...) throws -> CommandResult {
        try syncclient(arguments)
    }

    /// The state line, parsed (after checking it is exactly one line of JSON).
    private func state(_ url: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any]? {
        let result = try client("state", url, "--json")
        #expect(result.status == 0, "state: \(result.errors)", sourceLocation: sourceLocation)
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines[1].isEmpty, "one line: \(result.output)", sourceLocation: sourceLocation)
        return jsonObject(String(lines.first ?? ""))
    }

    private func order(_ url: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String]? {
        try state(url, sourceLocation: sourceLocation)?["order"] as? [String]
    }

    // MARK: state --json

    @Test func stateJSONPrintsTheStateObjectOnOneLineB3() throws {
        let hub = try HubProcess()
        let url = hub.board("fresh.board_1")
        let object = try #require(try state(url))
        #expect(object["type"] as? String == "state")
        #expect(object["board"] as? String == "fresh.board_1")
        #expect(object["order"] as? [String] == [], "B3: a new board is empty")
        #expect(object["version"] as? Int != nil)
        #expect((object["clients"] as? Int ?? 0) >= 1, "the one-shot itself is on the board")

        #expect(try client("select", url, "F").status == 0)
        #expect(try client("select", url, "d").status == 0, "a lower-case letter names the same tile")
        let after = try #require(try state(url))
        #expect(after["order"] as? [String] == ["F", "D"])
        #expect((after["version"] as? Int ?? 0) > (object["version"] as? Int ?? 0), "version grows with every change")
    }

    // MARK: Acknowledged intents exit 0

    @Test func selectDeselectMoveResetExitZeroOnAckB4B6B7B8() throws {
        let hub = try HubProcess()
        let url = hub.board("acks")
        for letter in ["F", "D", "A", "B"] {
            let result = try client("select", url, letter)
            #expect(result.status == 0, "select \(letter): \(result.errors)")
            #expect(result.errors.isEmpty)
        }
        #expect(try order(url) == ["F", "D", "A", "B"], "B4: each pick joins the end")

        // B7: F D A B, drag A onto D's place -> F A D B.
        #expect(try client("move", url, "A", "2").status == 0)
        #expect(try order(url) == ["F", "A", "D", "B"])

        // B6: deselect A -> higher numbers move down.
        #expect(try client("deselect", url, "A").status == 0)
        #expect(try order(url) == ["F", "D", "B"])

        // B9: repeats change nothing and are not errors.
        let version = try state(url)?["version"] as? Int
        #expect(try client("select", url, "F").status == 0)
        #expect(try client("deselect", url, "A").status == 0)
        #expect(try state(url)?["version"] as? Int == version)
        #expect(try order(url) == ["F", "D", "B"])

        // B8: reset empties the board for everyone.
        #expect(try client("reset", url).status == 0)
        #expect(try order(url) == [])
        #expect(try client("reset", url).status == 0, "a reset of an empty board is acknowledged too")
    }

    // MARK: Refusals exit 1 with the hub's message

    @Test func seventhSelectExitsOneWithTheHubsMessageB5() throws {
        let hub = try HubProcess()
        let url = hub.board("full")
        for letter in "ABCDEF" { #expect(try client("select", url, String(letter)).status == 0) }
        let full = try state(url)?["version"] as? Int

        let refused = try client("select", url, "G")
        #expect(refused.status == 1)
        #expect(refused.errors.contains("at most 6 letters can be selected"), "stderr: \(refused.errors)")
        #expect(refused.output.isEmpty)
        let after = try state(url)
        #expect(after?["order"] as? [String] == ["A", "B", "C", "D", "E", "F"], "B5: the order does not change")
        #expect(after?["version"] as? Int == full, "B5: nor does the version")

        // An already selected letter is not a seventh (B9).
        #expect(try client("select", url, "C").status == 0)
    }

    @Test func moveOfAnUnselectedLetterExitsOneB10() throws {
        let hub = try HubProcess()
        let url = hub.board("moves")
        #expect(try client("select", url, "K").status == 0)
        #expect(try client("select", url, "L").status == 0)
        let version = try state(url)?["version"] as? Int

        let unselected = try client("move", url, "Z", "1")
        #expect(unselected.status == 1)
        #expect(unselected.errors.contains("Z"), "a specific message: \(unselected.errors)")

        for place in ["0", "3", "9"] {
            let outside = try client("move", url, "K", place)
            #expect(outside.status == 1, "place \(place): \(outside.errors)")
            #expect(!outside.errors.isEmpty)
        }
        let after = try state(url)
        #expect(after?["order"] as? [String] == ["K", "L"], "B10: refusals change nothing")
        #expect(after?["version"] as? Int == version, "B10: not even the version")
    }

    // MARK: Usage and connection errors exit 2

    @Test func badURLOrLetterExitsTwo() throws {
        let hub = try HubProcess()
        let board = hub.board("usage")
        let cases: [[String]] = [
            ["state", "http://127.0.0.1:\(hub.port)/boards/usage", "--json"],
            ["state", "\(hub.url)/nope", "--json"],
            ["state", "\(hub.url)/boards/", "--json"],
            ["state", "not a url", "--json"],
            ["select", board, "7"],
            ["select", board, "AB"],
            ["select", board, ""],
            ["deselect", board, "é"],
            ["move", board, "A", "x"],
            ["select", board],
            ["move", board, "A"],
            ["state", board, "--bogus"],
            ["frobnicate", board],
        ]
        for arguments in cases {
            let result = try syncclient(arguments)
            #expect(result.status == 2, "\(arguments): status \(result.status), \(result.errors)")
            #expect(!result.errors.isEmpty, "\(arguments) says why")
        }
        let after = try state(board)
        #expect(after?["order"] as? [String] == [], "nothing reached the board")
        #expect(after?["version"] as? Int == 0, "nothing reached the board: it never changed")
    }

    @Test func unreachableOrRefusingHubExitsTwo() throws {
        // Nothing listens on a port just released.
        let closed = freePort()
        let unreachable = try syncclient(["select", "ws://127.0.0.1:\(closed)/boards/x", "A", "--timeout", "3"])
        #expect(unreachable.status == 2)
        #expect(!unreachable.errors.isEmpty)
        let state = try syncclient(["state", "ws://127.0.0.1:\(closed)/boards/x", "--json", "--timeout", "3"])
        #expect(state.status == 2)
        #expect(state.output.isEmpty)

        // A bad board NAME is refused by the hub before the upgrade (K1).
        let hub = try HubProcess()
        for name in [".hidden", String(repeating: "n", count: 65)] {
            let refused = try syncclient(["state", "\(hub.url)/boards/\(name)", "--json"])
            #expect(refused.status == 2, "\(name): \(refused.errors)")
        }

        // A hub that stopped is unreachable too.
        let url = hub.board("gone")
        #expect(try client("select", url, "A").status == 0)
        hub.stop()
        #expect(try syncclient(["reset", url, "--timeout", "3"]).status == 2)
    }

    // MARK: --help

    @Test func helpWorksForEverySubcommand() throws {
        let top = try client("--help")
        #expect(top.status == 0)
        for subcommand in ["watch", "state", "select", "deselect", "move", "reset"] {
            #expect(top.output.contains(subcommand), "syncclient --help lists \(subcommand)")
            let help = try client(subcommand, "--help")
            #expect(help.status == 0, "\(subcommand) --help: \(help.errors)")
            #expect(help.output.contains("USAGE: syncclient \(subcommand)"), "\(help.output)")
            #expect(help.output.contains("ws://HOST:PORT/boards/NAME"), "\(subcommand) explains URL")
            let viaHelp = try client("help", subcommand)
            #expect(viaHelp.status == 0)
            #expect(viaHelp.output.contains("USAGE: syncclient \(subcommand)"))
        }
        let state = try client("state", "--help")
        #expect(state.output.contains("--json"))
        let move = try client("move", "--help")
        #expect(move.output.contains("<place>"))
        let watch = try client("watch", "--help")
        #expect(watch.output.contains("--name"))
    }
}
