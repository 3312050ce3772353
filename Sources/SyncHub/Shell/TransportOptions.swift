import ArgumentParser
import Foundation
import WebSocketLoop

/// The hub's transport flags: TLS, browser origins and abuse limits
/// (docs/OPERATIONS.md lists them, docs/SECURITY.md explains them).
struct TransportOptions: ParsableArguments {
    @Option(help: "PEM certificate (chain) file: with --tls-key, the hub serves only wss:// and https://.") var tlsCert: String?
    @Option(help: "PEM private key file of --tls-cert.") var tlsKey: String?
    @Option(help: ArgumentHelp("An origin (scheme://host[:port]) whose browser pages may connect; repeatable. None given: any origin " +
                               "on an open hub, only the hub's own when auth is on.", valueName: "origin"))
    var allowedOrigin: [String] = []
    @Option(help: """
        WebSocket upgrade attempts a minute one address may make; beyond get HTTP 429 (0: no limit; loopback addresses are not \
        counted).
        """)
    var maxConnectsPerMinute = 300
    @Option(help: """
        With auth on: connections open that have not yet presented a valid token; upgrades beyond (without a token header) get HTTP \
        503.
        """)
    var maxUnauthenticated = 1000
    @Option(help: "With auth on: seconds a connection has to present a valid token before it is closed with 4401.")
    var authTimeoutSeconds: UInt64 = 5
    @Option(help: "With auth on: bytes a connection may send before it has presented a valid token; beyond closes it with 4401.")
    var maxPreauthBytes = 16_384

    func validate() throws {
        switch (tlsCert, tlsKey) {
        case (nil, nil): break
        case (.some, nil): throw ValidationError("--tls-cert needs --tls-key (the certificate's private key)")
        case (nil, .some): throw ValidationError("--tls-key needs --tls-cert (the certificate it belongs to)")
        case let (.some(cert), .some(key)):
            try Self.checkPEM(cert, flag: "--tls-cert", marker: "CERTIFICATE")
            try Self.checkPEM(key, flag: "--tls-key", marker: "PRIVATE KEY")
            if let problem = TLSFiles(certificatePath: cert, keyPath: key).pairProblem() {
                throw ValidationError("--tls-cert \(cert) with --tls-key \(key): \(problem)")
            }
        }
        for origin in allowedOrigin {
            let normalised = TransportPolicy.normalise(origin: origin)
            guard normalised.hasPrefix("http://") || normalised.hasPrefix("https://"),
                  let url = URL(string: normalised), url.host != nil, url.path.isEmpty, url.query == nil else {
                throw ValidationError("--allowed-origin \(origin): expected scheme://host[:port] with scheme http or https and no path, " +
                                      "e.g. https://boards.example.org")
            }
        }
        guard maxConnectsPerMinute >= 0 else { throw ValidationError("--max-connects-per-minute must be 0 (no limit) or more") }
        guard maxUnauthenticated >= 1 else { throw ValidationError("--max-unauthenticated must be at least 1") }
        guard authTimeoutSeconds >= 1 else { throw ValidationError("--auth-timeout-seconds must be at least 1") }
        guard maxPreauthBytes >= 256 else { throw ValidationError("--max-preauth-bytes must be at least 256 (a token frame must fit)") }
    }

    /// The TLS files, when both flags are given.
    var tlsFiles: TLSFiles? {
        guard let tlsCert, let tlsKey else { return nil }
        return TLSFiles(certificatePath: tlsCert, keyPath: tlsKey)
    }

    /// The policy for `HubServer`; the auth flags decide `authRequired`.
    func policy(authRequired: Bool) -> TransportPolicy {
        var policy = TransportPolicy()
        policy.authRequired = authRequired
        policy.allowedOrigins = Set(allowedOrigin.map(TransportPolicy.normalise(origin:)))
        policy.maxConnectsPerMinute = maxConnectsPerMinute
        policy.maxUnauthenticated = maxUnauthenticated
        policy.authTimeoutSeconds = authTimeoutSeconds
        policy.maxPreauthBytes = maxPreauthBytes
        return policy
    }

    /// Checked at start-up so a wrong file is a clear error now rather than
    /// a failed handshake at the first connection.
    private static func checkPEM(_ path: String, flag: String, marker: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("\(flag) \(path): cannot read the file (missing, or no permission)")
        }
        let text = String(decoding: data, as: UTF8.self)
        guard text.contains("-----BEGIN"), text.contains(marker) else {
            throw ValidationError("\(flag) \(path): not a PEM file with a \(marker) block")
        }
    }
}
