import Foundation
import JWTKit
@testable import SyncHub

/// Keys in a temporary directory and tokens minted with jwt-kit, for the
/// auth tests. Nothing secret is committed: every key is made per test.
final class KeyDirectory: @unchecked Sendable {
    // Sendable: written only while a test sets it up, then only read.
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("auth-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `bytes` to `name` and returns its path.
    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let file = (path as NSString).appendingPathComponent(name)
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return file
    }

    func write(_ name: String, text: String) throws -> String { try write(name, Array(text.utf8)) }

    /// A fresh random 32-byte secret written to `name`.
    func secret(_ name: String) throws -> (file: String, bytes: [UInt8]) {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return (try write(name, bytes), bytes)
    }
}

enum AuthFixtures {
    /// The clock every verification in these tests is given.
    static let now = Date(timeIntervalSince1970: 1_900_000_000)

    static func claims(sub: String? = "ana", name: String? = nil,
                       exp: Date? = now.addingTimeInterval(3600), nbf: Date? = nil, iat: Date? = now,
                       aud: [String]? = ["synchub"], boards: [String: String]? = ["set/*": "write"]) -> TokenClaims {
        TokenClaims(sub: sub.map { SubjectClaim(value: $0) }, name: name,
                    exp: exp.map { ExpirationClaim(value: $0) }, nbf: nbf.map { NotBeforeClaim(value: $0) },
                    iat: iat.map { IssuedAtClaim(value: $0) }, aud: aud.map { AudienceClaim(value: $0) },
                    boards: boards)
    }

    /// A token signed by jwt-kit with an HS256 secret.
    static func mint(_ claims: TokenClaims, secret: [UInt8], kid: String? = nil) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return try await keys.sign(claims, header: header(kid: kid))
    }

    static func mint(_ claims: TokenClaims, eddsa: EdDSA.PrivateKey, kid: String? = nil) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(eddsa: eddsa)
        return try await keys.sign(claims, header: header(kid: kid))
    }

    static func mint(_ claims: TokenClaims, es256: ES256PrivateKey, kid: String? = nil) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: es256)
        return try await keys.sign(claims, header: header(kid: kid))
    }

    /// An unsigned token (`alg: none`), as jwt-kit makes one.
    static func mintUnsigned(_ claims: TokenClaims) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.addUnsecuredNone()
        return try await keys.sign(claims)
    }

    private static func header(kid: String?) -> JWTHeader {
        var header = JWTHeader()
        if let kid { header.kid = kid }
        return header
    }

    /// A verifier over `sources`.
    static func verifier(_ sources: [KeySource], rememberedTokens: Int = 1024) async throws -> TokenVerifier {
        TokenVerifier(keys: try await KeyRing(sources: sources), rememberedTokens: rememberedTokens)
    }

    /// A verifier over one fresh HS256 secret, and the secret.
    static func secretVerifier(rememberedTokens: Int = 1024) async throws -> (TokenVerifier, [UInt8], KeyDirectory) {
        let directory = try KeyDirectory()
        let (file, bytes) = try directory.secret("hub.secret")
        let verifier = try await verifier([KeySource.secret(file: file, option: "--auth-secret-file")],
                                          rememberedTokens: rememberedTokens)
        return (verifier, bytes, directory)
    }

    /// The refusal `verify` throws, or nil when it accepts.
    static func refusal(_ verifier: TokenVerifier, _ token: String, at now: Date = now) -> TokenRefusal? {
        do {
            _ = try verifier.verify(token, now: now)
            return nil
        } catch {
            return error
        }
    }
}

/// Runs `body` on a thread of its own, outside Swift's concurrency pool, as
/// the hub's main and service threads are: for code that blocks.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
