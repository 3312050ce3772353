import ArgumentParser

/// The hub's authentication flags (A1, A2). With no key the hub is open:
/// every client reads and writes every board, which is only allowed on a
/// loopback address unless `--allow-anonymous` says it is meant.
struct AuthOptions: ParsableArguments {
    @Option(name: .customLong("auth-secret-file"),
            help: ArgumentHelp("A file whose bytes (at least 32) are an HS256 secret tokens may be signed with; repeatable. The key's " +
                               "kid is the file's base name without extension.", valueName: "FILE"))
    var secretFiles: [String] = []

    @Option(name: .customLong("auth-public-key"),
            help: ArgumentHelp("A PEM public key (Ed25519 for EdDSA, P-256 for ES256) tokens may be signed for; repeatable. The key's " +
                               "kid is the file's base name without extension.", valueName: "FILE"))
    var publicKeyFiles: [String] = []

    @Option(help: ArgumentHelp("With auth on, GET /metrics needs 'Authorization: Bearer TOKEN' with this value (at least 16 characters).",
                               valueName: "TOKEN"))
    var metricsToken: String?

    @Flag(help: "Serve an open hub (no keys: anyone may read and write every board) on an address other than loopback.")
    var allowAnonymous = false

    /// Shortest `--metrics-token` accepted.
    static let minimumMetricsTokenLength = 16

    /// No key configured: the hub is open (A1).
    var isOpen: Bool { secretFiles.isEmpty && publicKeyFiles.isEmpty }

    /// Reads and checks every key file, so a bad one stops the hub before
    /// it listens, with the file and the reason.
    func validate() throws {
        if let metricsToken, metricsToken.count < Self.minimumMetricsTokenLength {
            throw ValidationError("--metrics-token must be at least \(Self.minimumMetricsTokenLength) characters")
        }
        do {
            for file in secretFiles { _ = try KeySource.secret(file: file, option: "--auth-secret-file") }
            for file in publicKeyFiles { _ = try KeySource.publicKey(file: file, option: "--auth-public-key") }
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// Refuses an open hub on an address others can reach, unless
    /// `--allow-anonymous` (A1).
    func checkOpenMode(host: String) throws {
        guard isOpen, !allowAnonymous, !Self.isLoopback(host) else { return }
        throw ValidationError("""
            refusing to serve an open hub on \(host.isEmpty ? "all addresses" : host): with no key configured, \
            anyone who can reach it may read and change every board. Give --auth-secret-file or --auth-public-key, \
            listen on 127.0.0.1, or pass --allow-anonymous if an open hub there is what you want
            """)
    }

    /// The verifier for the configured keys, or nil when the hub is open.
    /// Reads every key file; call it once at start-up on the main thread.
    func makeVerifier() throws -> TokenVerifier? {
        if isOpen { return nil }
        let keys: KeyRing
        do {
            keys = try KeyRing.load(secretFiles: secretFiles, publicKeyFiles: publicKeyFiles)
        } catch {
            throw ValidationError(error.description)
        }
        return TokenVerifier(keys: keys)
    }

    /// Whether `host` names only this machine: `localhost`, 127.0.0.0/8 or ::1.
    static func isLoopback(_ host: String) -> Bool {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4 else { return false }
        let values = octets.map { $0.count <= 3 && $0.allSatisfy(\.isASCII) ? UInt8($0) : nil }
        return values.allSatisfy { $0 != nil } && values[0] == 127
    }
}
