import Foundation
import Synchronization
import WebSocketLoop

/// What `syncclient` presents to a hub and how it checks one: the bearer
/// token (A6-A7) and the TLS trust for `wss://` (A12). Resolved once from the
/// command line and the environment; never printed, since the token is a secret.
struct HubAccess: Sendable, Equatable {
    /// Sent as `Authorization: Bearer TOKEN` on every upgrade.
    var token: String?
    /// `--token-file`: where `watch` looks for a newer token before this one expires.
    var tokenFile: String?
    /// Set for `wss://` hubs.
    var tls: ClientTLS?

    init(token: String? = nil, tokenFile: String? = nil, tls: ClientTLS? = nil) {
        self.token = token
        self.tokenFile = tokenFile
        self.tls = tls
    }

    /// The access a command chose, for the `watch` of any kind (whose entry
    /// point names only the board). Written once by the command before any
    /// connection starts, read after.
    static let chosen = Mutex<HubAccess>(HubAccess())

    /// A token as the command line or a file gave it: surrounding white
    /// space dropped, then only the characters of a bearer token (RFC 6750
    /// `b64token`; a JWT is base64url with dots), so that it cannot break
    /// the upgrade request's headers.
    static func checkedToken(_ text: String, from source: String) throws -> String {
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw AccessError.token("\(source) is empty") }
        guard token.utf8.count <= 8192 else { throw AccessError.token("\(source) is longer than 8192 characters") }
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=".utf8)
        guard token.utf8.allSatisfy(allowed.contains) else {
            throw AccessError.token("\(source) holds characters a bearer token cannot have (only A-Z a-z 0-9 - . _ ~ + / =)")
        }
        return token
    }

    /// Resolves the flags: `--token` wins over `--token-file`, which wins over
    /// `SYNCHUB_TOKEN`. `--ca` and `--insecure` need a `wss://` hub and exclude
    /// each other; the CA file must hold a PEM certificate.
    static func resolve(token: String?, tokenFile: String?, environment: [String: String], ca: String?, insecure: Bool,
                        secure: Bool, readFile: (String) throws -> String) throws -> HubAccess {
        var access = HubAccess()
        if let token {
            if tokenFile != nil { throw AccessError.usage("give --token or --token-file, not both") }
            access.token = try checkedToken(token, from: "--token")
        } else if let tokenFile {
            let text: String
            do { text = try readFile(tokenFile) } catch {
                throw AccessError.usage("--token-file \(tokenFile) cannot be read: \(error.localizedDescription)")
            }
            access.token = try checkedToken(text, from: "--token-file \(tokenFile)")
            access.tokenFile = tokenFile
        } else if let variable = environment["SYNCHUB_TOKEN"], !variable.isEmpty {
            access.token = try checkedToken(variable, from: "SYNCHUB_TOKEN")
        }
        if ca != nil, insecure { throw AccessError.usage("give --ca FILE or --insecure, not both") }
        guard secure else {
            if ca != nil || insecure { throw AccessError.usage("--ca and --insecure apply to wss:// hubs only") }
            return access
        }
        if let ca {
            let text: String
            do { text = try readFile(ca) } catch {
                throw AccessError.usage("--ca \(ca) cannot be read: \(error.localizedDescription)")
            }
            guard text.contains("-----BEGIN CERTIFICATE-----") else {
                throw AccessError.usage("--ca \(ca) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
            }
        }
        access.tls = ClientTLS(caFile: ca, insecure: insecure)
        return access
    }

    /// The line `--insecure` prints on standard error.
    static let insecureWarning = "syncclient: --insecure: the hub's certificate is not checked; "
        + "the connection is encrypted, but anyone in between could pose as the hub"
}

/// A bad `--token`, `--token-file`, `SYNCHUB_TOKEN`, `--ca` or `--insecure` (exit 2).
enum AccessError: Error, Equatable, CustomStringConvertible {
    case token(String)
    case usage(String)

    var description: String {
        switch self {
        case let .token(text): "bad token: \(text)"
        case let .usage(text): text
        }
    }
}
