import ArgumentParser
import Foundation

/// `synchub token`: prints a signed token for the hub (A5, docs/SECURITY.md).
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Prints a token a hub with the matching key accepts.",
        discussion: """
            Signs with an HS256 secret (--secret-file, the same file the hub reads with --auth-secret-file) \
            or with an Ed25519 / P-256 private key (--private-key; the hub gets the public key with \
            --auth-public-key). Example: synchub token --secret-file hub.secret --sub ana --name Ana \
            --board 'set/*=write' --board 'boards/lobby=read' --ttl 8h
            """)

    @Option(help: ArgumentHelp("An HS256 secret: the file's bytes, at least 32.", valueName: "FILE"))
    var secretFile: String?

    @Option(help: ArgumentHelp("A PEM private key, Ed25519 (EdDSA) or P-256 (ES256).", valueName: "FILE"))
    var privateKey: String?

    @Option(help: "Who holds the token (1-64 characters): the sub claim.")
    var sub: String

    @Option(help: "The name others see (1-32 characters; sub when left out).")
    var name: String?

    @Option(name: .customLong("board"),
            help: ArgumentHelp("A board pattern and its role: boards/NAME, set/NAME, set/* or * = read or write. Repeatable; the " +
                               "longest matching pattern wins.", valueName: "PATTERN=ROLE"))
    var boards: [String] = []

    @Option(help: "How long the token lasts: 90s, 30m, 8h, 7d (at most 366d).")
    var ttl: String = "1h"

    @Option(help: """
        The kid header: the base name of the hub's key file without extension. Without it the hub tries each of its keys of the \
        token's algorithm.
        """)
    var kid: String?

    /// Longest --ttl accepted.
    static let maxTTL: TimeInterval = 366 * 86400

    func validate() throws {
        guard (secretFile == nil) != (privateKey == nil) else {
            throw ValidationError("give exactly one of --secret-file and --private-key")
        }
        if let problem = TokenClaims.problem(withSub: sub) { throw ValidationError("--sub: \(problem)") }
        if let name, let problem = TokenClaims.problem(withName: name) { throw ValidationError("--name: \(problem)") }
        guard let seconds = TokenMint.seconds(in: ttl), seconds <= Self.maxTTL else {
            throw ValidationError("--ttl must be a positive number of seconds, optionally followed by s, m, h or d, at most 366d")
        }
        if let kid, kid.isEmpty { throw ValidationError("--kid must not be empty") }
        _ = try parsedBoards()
    }

    /// The `--board` options as a `boards` claim.
    func parsedBoards() throws -> [String: BoardRole] {
        guard !boards.isEmpty else {
            throw ValidationError("give at least one --board PATTERN=ROLE (for example --board 'set/*=write')")
        }
        var claim: [String: BoardRole] = [:]
        for entry in boards {
            guard let equals = entry.lastIndex(of: "="),
                  let role = BoardRole(rawValue: String(entry[entry.index(after: equals)...])) else {
                throw ValidationError("--board \(entry): write PATTERN=read, PATTERN=write or PATTERN=admin")
            }
            let pattern = String(entry[..<equals])
            if case .failure(let problem) = BoardPattern.parse(pattern, role: role) {
                throw ValidationError("--board \(entry): \(problem.message)")
            }
            if claim[pattern] != nil { throw ValidationError("--board \(pattern) is given twice") }
            claim[pattern] = role
        }
        return claim
    }

    func run() throws {
        let key: TokenMint.SigningKey
        do {
            if let secretFile {
                guard case .secret(let secret) = try KeySource.secret(file: secretFile, option: "--secret-file").material else {
                    throw ValidationError("--secret-file \(secretFile) is not an HS256 secret")
                }
                key = .secret(secret)
            } else if let privateKey {
                key = try TokenMint.privateKey(file: privateKey, option: "--private-key")
            } else {
                throw ValidationError("give exactly one of --secret-file and --private-key")
            }
        } catch let error as KeyLoadError {
            throw ValidationError(error.description)
        }
        let mint = TokenMint(key: key, kid: kid)
        let claims = TokenMint.claims(sub: sub, name: name, boards: try parsedBoards(), now: Date(),
                                      ttl: TokenMint.seconds(in: ttl) ?? 3600)
        let token = try awaitAtStartup { try await mint.sign(claims) }
        print(token)
    }
}
