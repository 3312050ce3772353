import ArgumentParser
import Foundation
import WebSocketLoop

/// The flags of every command that talks to a hub: who this client is
/// (`--token`, `--token-file`, `SYNCHUB_TOKEN`) and how a `wss://` hub is
/// checked (`--ca`, `--insecure`). docs/SECURITY.md, "Clients".
struct AccessOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A bearer token (JWT) for a hub that checks tokens, sent as Authorization: Bearer (on the upgrade, " +
                               "or on admin's requests); default: $SYNCHUB_TOKEN. Never printed.", valueName: "token"))
    var token: String?

    @Option(
        name: .customLong("token-file"),
        help: ArgumentHelp("Read the token from FILE; watch reads FILE again shortly before the token expires and sends a newer one to " +
                           "the hub without reconnecting.", valueName: "file"))
    var tokenFile: String?

    @Option(help: ArgumentHelp("For wss:// (and admin's https://) hubs: trust only the CA certificates in this PEM file (default: " +
                               "the system's CAs).", valueName: "file"))
    var ca: String?

    @Flag(help: """
        For wss:// (and admin's https://) hubs: do not check the hub's certificate (self-signed, unknown CA, other host, expired). Tests \
        only; says so on standard error.
        """)
    var insecure = false

    /// The access for a hub at `url` (a usage error, exit 2, when the flags
    /// are wrong); prints the `--insecure` warning.
    func resolve(for url: WebSocketURL) throws -> HubAccess {
        do {
            let access = try HubAccess.resolve(
                token: token, tokenFile: tokenFile, environment: ProcessInfo.processInfo.environment,
                ca: ca, insecure: insecure, secure: url.isSecure,
                readFile: { try String(contentsOfFile: $0, encoding: .utf8) })
            if access.tls?.insecure == true {
                FileHandle.standardError.write(Data((HubAccess.insecureWarning + "\n").utf8))
            }
            return access
        } catch let error as AccessError {
            throw ValidationError(error.description)
        }
    }
}
