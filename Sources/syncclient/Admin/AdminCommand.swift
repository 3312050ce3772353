import ArgumentParser
import Foundation
import SyncWire

/// `syncclient admin ...`: the operator's console from scripts (O10,
/// docs/ADMIN.md): each subcommand is one call of the console's JSON API
/// on any hub of the cluster. Exit 0 done, 1 the hub refused (`CODE:
/// message` on standard error), 2 a usage or connection problem (K3).
struct AdminCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "Script the operator's console: list hubs and boards, disconnect, revoke, freeze, drain.",
        discussion: """
            URL is any hub of the cluster, http://HOST:PORT or https://HOST:PORT (--ca FILE, --insecure); \
            each hub answers for the whole cluster. The token needs "admin" on "*" (synchub token --board '*=admin'), \
            given as --token TOKEN, --token-file FILE or SYNCHUB_TOKEN. Reads print a table, or the hub's JSON \
            answer on one line with --json. Exit 0 when done, 1 when the hub refused (its "CODE: message" on \
            standard error: unauthorized, forbidden, not_found, bad_request, unavailable), 2 on a usage or \
            connection problem. docs/ADMIN.md has every call.
            """,
        subcommands: [AdminHubsCommand.self, AdminBoardsCommand.self, AdminBoardCommand.self, AdminAuditCommand.self,
                      AdminDisconnectCommand.self, AdminRevokeCommand.self, AdminFreezeCommand.self, AdminThawCommand.self,
                      AdminDrainCommand.self])
}

/// What every admin subcommand shares: the hub, who asks, how to print.
struct AdminOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("Any hub: http://HOST:PORT, or https://HOST:PORT for a hub with TLS.", valueName: "url"))
    var url: String

    @OptionGroup var access: AccessOptions

    @Flag(help: "Print the hub's JSON answer on one line instead of a table.")
    var json = false

    @Option(help: "Seconds to wait for the hub's answer before giving up (exit 2).")
    var timeout: Double = 10

    func validate() throws {
        guard timeout > 0, timeout <= 86_400 else {
            throw ValidationError("--timeout must be more than 0 and at most 86400 seconds, not \(timeout)")
        }
        let hub = try AdminTargets.hub(url)
        if !hub.isSecure, access.ca != nil || access.insecure {
            throw ValidationError("--ca and --insecure apply to https:// hubs only")
        }
    }

    /// Sends `request`, prints the answer (`view` renders a done one for a
    /// person) and exits with K3's codes.
    func send(_ request: HTTPRequest, view: ([UInt8]) throws(AdminView.Unreadable) -> String) throws {
        let hub = try AdminTargets.hub(url)
        let resolved = try access.resolve(for: hub)
        let answer = HubHTTP.send(request, to: hub, token: resolved.token, tls: resolved.tls, seconds: timeout)
        try report(AdminOutcome.of(answer, from: url, json: json, view: view))
    }
}

/// An action's JSON body: `members` in order, each value a string.
func adminBody(_ members: KeyValuePairs<String, String>) -> String {
    var out = "{"
    for (index, member) in members.enumerated() {
        if index > 0 { out += "," }
        HubMessage.appendJSONString(member.key, to: &out)
        out += ":"
        HubMessage.appendJSONString(member.value, to: &out)
    }
    return out + "}"
}
