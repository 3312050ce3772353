import Foundation
import Testing

/// `syncclient watch` on a hub that checks tokens (docs/SECURITY.md, A6-A11),
/// run for real in tmux: a token with `--token` or `SYNCHUB_TOKEN` plays
/// under the token's name, a read-only token's change is refused and said
/// so, a token without a role on the board ends the watch with exit 2.
/// Tokens come from `synchub token`; the secret is made per test in a
/// temporary directory. Everything is waited for, nothing is timed.
@Suite(.serialized) struct AuthWatchTests {
    /// A fresh HS256 secret (48 random bytes) in its own temporary directory.
    struct Secret {
        let directory: URL
        let file: URL

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("synchub-auth-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            file = directory.appendingPathComponent("hub.secret")
            var generator = SystemRandomNumberGenerator()
            try Data((0..<48).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).write(to: file)
        }

        /// `synchub token --secret-file FILE --sub SUB [--name NAME] --board B... --ttl TTL`.
        func token(sub: String, name: String? = nil, boards: [String], ttl: String = "10m") throws -> String {
            var arguments = ["token", "--secret-file", file.path, "--sub", sub, "--ttl", ttl]
            if let name { arguments += ["--name", name] }
            for board in boards { arguments += ["--board", board] }
            let result = try run(Build.synchub, arguments)
            #expect(result.status == 0, "synchub token: \(result.errors)")
            return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    /// The board as the hub has it, read with a token: (order, names).
    static func hubBoard(_ url: String, token: String) -> (order: String, names: [String])? {
        guard let result = try? syncclient(["state", url, "--json", "--token", token]), result.status == 0,
              let object = jsonObject(result.output.trimmingCharacters(in: .whitespacesAndNewlines)),
              let order = object["order"] as? [String] else { return nil }
        return (order.joined(), (object["names"] as? [String]) ?? [])
    }

    /// The watch's exit status as the pane's shell printed it (`[exited N]`).
    /// Not `TmuxSession.exitStatus` alone: its fallback reads the status of
    /// the wrapping shell, 0, when the pane's last lines are not captured yet.
    static func exitStatus(of watch: TmuxSession) -> Int32? {
        var status: Int32?
        let ended = eventually(timeout: 20) {
            status = watch.capture().firstMatch(of: /\[exited (\d+)\]/).flatMap { Int32($0.1) }
            return status != nil
        }
        if !ended { Issue.record("the watch did not end: \(watch.paneState)\n\(watch.capture())") }
        return status
    }

    @Test func aWatchWithATokenPlaysUnderTheTokensName() throws {
        let secret = try Secret()
        defer { secret.remove() }
        let hub = try HubProcess(arguments: ["--auth-secret-file", secret.file.path])
        let url = hub.board("auth-play")
        let token = try secret.token(sub: "u-17", name: "Ana", boards: ["boards/*=write"])
        let watch = try TmuxSession([Build.syncclient.path, "watch", url, "--token", token, "--name", "Ana"])
        watch.waitFor("live") { $0.isLive }
        watch.type("F")
        watch.type("A")
        watch.waitFor("F A selected") { $0.topOrder == "FA" }
        var last: (order: String, names: [String])?
        let stored = eventually(timeout: 20) {
            last = Self.hubBoard(url, token: token)
            return last?.order == "FA" && last?.names.contains("Ana") == true
        }
        #expect(stored, "the hub has \(String(describing: last))")
        // The token never shows on the screen.
        #expect(!watch.capture().contains(token.prefix(20)))
    }

    @Test func aWatchWithATokenAndNoNameActsUnderTheTokensName() throws {
        let secret = try Secret()
        defer { secret.remove() }
        let hub = try HubProcess(arguments: ["--auth-secret-file", secret.file.path])
        let url = hub.board("auth-noname")
        let token = try secret.token(sub: "u-18", name: "Bo", boards: ["boards/*=write"])
        let watch = try TmuxSession([Build.syncclient.path, "watch", url, "--token", token])
        watch.waitFor("live") { $0.isLive }
        watch.type("K")
        watch.waitFor("K selected on the screen") { $0.topOrder == "K" }
        // A11: the name is the token's; the watch needs no --name for its
        // changes to be taken (its hello goes out under the token's name).
        var last: (order: String, names: [String])?
        let stored = eventually(timeout: 20) {
            last = Self.hubBoard(url, token: token)
            return last?.order == "K" && last?.names.contains("Bo") == true
        }
        #expect(stored, "the hub has \(String(describing: last)); screen:\n\(watch.capture())")
    }

    @Test func aReadOnlyTokensChangeIsRefusedAndSaidSo() throws {
        let secret = try Secret()
        defer { secret.remove() }
        let hub = try HubProcess(arguments: ["--auth-secret-file", secret.file.path])
        let url = hub.board("auth-read")
        let writer = try secret.token(sub: "ana", boards: ["boards/*=write"])
        let reader = try secret.token(sub: "cy", boards: ["boards/*=read"])
        // SYNCHUB_TOKEN instead of --token (A7).
        let watch = try TmuxSession([Build.syncclient.path, "watch", url, "--name", "cy"],
                                    environment: ["SYNCHUB_TOKEN": reader])
        watch.waitFor("live") { $0.isLive }
        // A read token sees the board: someone else's change arrives.
        let select = try syncclient(["select", url, "Q", "--token", writer])
        #expect(select.status == 0, "select with a write token: \(select.errors)")
        watch.waitFor("Q from the writer") { $0.topOrder == "Q" }
        // A9: its own change is refused `forbidden`, and the watch says so.
        watch.type("D")
        watch.waitFor("the refusal on the status line") {
            $0.text.contains("forbidden: your token lets you read this board")
        }
        #expect(Self.hubBoard(url, token: writer)?.order == "Q")
        // The refused change is taken back: the watch reloads the board from the hub.
        watch.waitFor("D gone from the screen") { $0.topOrder == "Q" }
        // Later changes are refused at once, never shown.
        watch.type("E")
        watch.waitFor("E refused") { $0.text.contains("forbidden") && $0.topOrder == "Q" }
    }

    @Test func aTokenWithNoRoleOnTheBoardSaysNotAllowedAndExits2() throws {
        let secret = try Secret()
        defer { secret.remove() }
        let hub = try HubProcess(arguments: ["--auth-secret-file", secret.file.path])
        let url = hub.board("auth-none")
        let token = try secret.token(sub: "bo", boards: ["set/*=write"])
        let watch = try TmuxSession([Build.syncclient.path, "watch", url, "--token", token])
        watch.waitFor("Not allowed on the status line") {
            $0.text.contains("Not allowed: your token gives no role on this board")
        }
        watch.type("q")
        #expect(Self.exitStatus(of: watch) == 2)
    }

    @Test func aBadTokenSaysNotAllowedAndExits2() throws {
        let secret = try Secret()
        defer { secret.remove() }
        let other = try Secret()
        defer { other.remove() }
        let hub = try HubProcess(arguments: ["--auth-secret-file", secret.file.path])
        let url = hub.board("auth-bad")
        let forged = try other.token(sub: "ana", boards: ["*=write"])
        let watch = try TmuxSession([Build.syncclient.path, "watch", url, "--token", forged])
        watch.waitFor("Not allowed on the status line") { $0.text.contains("Not allowed: bad token signature") }
        watch.type("q")
        #expect(Self.exitStatus(of: watch) == 2)
    }
}
