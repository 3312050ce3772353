import Foundation
import JWTKit
import Testing
@testable import SyncHub

/// A3 and A4: what a token must be for the hub to accept it, each refusal
/// with its code. Tokens are minted with jwt-kit; nothing is hand-made but
/// the tampered one, spliced from two jwt-kit tokens.
struct TokenVerifierTests {
    typealias F = AuthFixtures

    @Test func validTokenGivesItsGrant() async throws {
        let (verifier, secret, _) = try await F.secretVerifier()
        let token = try await F.mint(F.claims(name: "Ana", boards: ["set/*": "write", "boards/lobby": "read"]), secret: secret)
        let grant = try verifier.verify(token, now: F.now)
        #expect(grant.sub == "ana")
        #expect(grant.displayName == "Ana")
        #expect(grant.expiry == F.now.addingTimeInterval(3600))
        #expect(grant.patterns.map(\.description) == ["boards/lobby=read", "set/*=write"])
        #expect(grant.role(for: "set/kitchen") == .write)
        #expect(grant.role(for: "boards/lobby") == .read)
        #expect(grant.role(for: "boards/other") == nil)
    }

    @Test func displayNameIsSubWithoutName() async throws {
        let (verifier, secret, _) = try await F.secretVerifier()
        let grant = try verifier.verify(try await F.mint(F.claims(name: nil), secret: secret), now: F.now)
        #expect(grant.displayName == "ana")
    }

    @Test func expiredTokenIsRefusedFromItsExpOn() async throws {
        let (verifier, secret, _) = try await F.secretVerifier()
        let token = try await F.mint(F.claims(exp: F.now.addingTimeInterval(10)), secret: secret)
        #expect(F.refusal(verifier, token, at: F.now.addingTimeInterval(9)) == nil)
        #expect(F.refusal(verifier, token, at: F.now.addingTimeInterval(10)) == .expired)
        let past = try await F.mint(F.claims(exp: F.now.addingTimeInterval(-1)), secret: secret)
        #expect(F.refusal(verifier, past) == .expired)
        #expect(TokenRefusal.expired.message == "token expired")
    }

    @Test func notBeforeHonouredWithSixtySecondsLeeway() async throws {
        let (verifier, secret, _) = try await F.secretVerifier()
        let inside = try await F.mint(F.claims(nbf: F.now.addingTimeInterval(59)), secret: secret)
        let outside = try await F.mint(F.claims(nbf: F.now.addingTimeInterval(61)), secret: secret)
        let past = try await F.mint(F.claims(nbf: F.now.addingTimeInterval(-3600)), secret: secret)
        #expect(F.refusal(verifier, inside) == nil)
        #expect(F.refusal(verifier, outside) == .notYetValid)
        #expect(F.refusal(verifier, past) == nil)
        // The same token becomes valid once the clock is within the leeway.
        #expect(F.refusal(verifier, outside, at: F.now.addingTimeInterval(2)) == nil)
    }

    @Test func issuedAtHonouredWithSixtySecondsLeeway() async throws {
        let (verifier, secret, _) = try await F.secretVerifier()
        let inside = try await F.mint(F.claims(iat: F.now.addingTimeInterval(59)), secret: secret)
        let outside = try await F.mint(F.claims(iat: F.now.addingTimeInterval(61)), secret: secret)
        let none = try await F.mint(F.claims(iat: nil), secret: secret)
        #expect(F.refusal(verifier, inside) == nil)
        #expect(F.refusal(verifier, outside) == .issuedInFuture)
        #expect(F.refusal(verifier, none) == nil)
    }

    @Test func audienceMustBeOrContainSynchub() async throws {
        let (verifier, secret, _) = try await F.secretVerifier()
        #expect(F.refusal(verifier, try await F.mint(F.claims(aud: ["other"]), secret: secret)) == .wrongAudience)
        #expect(F.refusal(verifier, try await F.mint(F.claims(aud: ["other", "synchub"]), secret: secret)) == nil)
        #expect(F.refusal(verifier, try await F.mint(F.claims(aud: nil), secret: secret)) == .missingClaim("aud"))
    }

    @Test func missingClaimsAreNamed() async throws {
        let (verifier, secret, _) = try await F.secretVerifier()
        #expect(F.refusal(verifier, try await F.mint(F.claims(sub: nil), secret: secret)) == .missingClaim("sub"))
        #expect(F.refusal(verifier, try await F.mint(F.claims(exp: nil), secret: secret)) == .missingClaim("exp"))
        #expect(F.refusal(verifier, try await F.mint(F.claims(boards: nil), secret: secret)) == .missingClaim("boards"))
    }

    @Test func badClaimsAreRefused() async throws {
        let (verifier, secret, _) = try await F.secretVerifier()
        func code(_ claims: TokenClaims) async throws -> String? {
            F.refusal(verifier, try await F.mint(claims, secret: secret))?.code
        }
        #expect(try await code(F.claims(sub: "")) == "bad_claim")
        #expect(try await code(F.claims(sub: String(repeating: "a", count: 65))) == "bad_claim")
        #expect(try await code(F.claims(sub: String(repeating: "a", count: 64))) == nil)
        #expect(try await code(F.claims(name: String(repeating: "n", count: 33))) == "bad_claim")
        #expect(try await code(F.claims(name: String(repeating: "n", count: 32))) == nil)
        #expect(try await code(F.claims(name: "Ana\nBob")) == "bad_claim")
        #expect(try await code(F.claims(boards: ["set/*": "owner"])) == "bad_claim")
        #expect(try await code(F.claims(boards: ["set/*/x": "read"])) == "bad_claim")
        #expect(try await code(F.claims(boards: ["": "read"])) == "bad_claim")
        #expect(try await code(F.claims(boards: [:])) == nil)
    }

    @Test func tokenOfAnotherKeyHasABadSignature() async throws {
        let (verifier, _, _) = try await F.secretVerifier()
        let other = try KeyDirectory().secret("other.secret").bytes
        #expect(F.refusal(verifier, try await F.mint(F.claims(), secret: other)) == .badSignature)
    }

    @Test func tamperedPayloadHasABadSignature() async throws {
        let (verifier, secret, _) = try await F.secretVerifier()
        let reader = try await F.mint(F.claims(boards: ["set/*": "read"]), secret: secret)
        let writer = try await F.mint(F.claims(boards: ["set/*": "write"]), secret: secret)
        // The writer's header and claims under the reader's signature.
        let parts = reader.split(separator: ".")
        let forged = writer.split(separator: ".").prefix(2).joined(separator: ".") + "." + parts[2]
        #expect(F.refusal(verifier, reader) == nil)
        #expect(F.refusal(verifier, forged) == .badSignature)
    }

    @Test func unsignedTokenIsRefused() async throws {
        let (verifier, _, _) = try await F.secretVerifier()
        let token = try await F.mintUnsigned(F.claims())
        #expect(F.refusal(verifier, token) == .unsigned)
    }

    /// The classic confusion: a token "signed" HS256 with the public key's
    /// PEM text as the secret must not pass as a token of that public key.
    @Test func hs256TokenMadeWithThePublicKeyIsRefused() async throws {
        let directory = try KeyDirectory()
        let privateKey = try EdDSA.PrivateKey()
        let pem = privateKey.publicKey.pemRepresentation
        let file = try directory.write("ed.pem", text: pem)
        let verifier = try await F.verifier([KeySource.publicKey(file: file, option: "--auth-public-key")])
        let forged = try await F.mint(F.claims(), secret: Array(pem.utf8))
        let forgedWithKid = try await F.mint(F.claims(), secret: Array(pem.utf8), kid: "ed")
        #expect(F.refusal(verifier, forged)?.code == "wrong_algorithm")
        #expect(F.refusal(verifier, forgedWithKid)?.code == "wrong_algorithm")
        #expect(F.refusal(verifier, try await F.mint(F.claims(), eddsa: privateKey)) == nil)
    }

    @Test func kidRotationAcceptsEitherKeyAndRefusesAnUnknownKid() async throws {
        let directory = try KeyDirectory()
        let old = try directory.secret("2026-05.secret"), new = try directory.secret("2026-06.secret")
        let verifier = try await F.verifier([
            KeySource.secret(file: old.file, option: "--auth-secret-file"),
            KeySource.secret(file: new.file, option: "--auth-secret-file"),
        ])
        #expect(verifier.keys.keys.map(\.kid) == ["2026-05", "2026-06"])
        #expect(F.refusal(verifier, try await F.mint(F.claims(), secret: old.bytes, kid: "2026-05")) == nil)
        #expect(F.refusal(verifier, try await F.mint(F.claims(), secret: new.bytes, kid: "2026-06")) == nil)
        // Without a kid every HS256 key is tried.
        #expect(F.refusal(verifier, try await F.mint(F.claims(), secret: old.bytes)) == nil)
        #expect(F.refusal(verifier, try await F.mint(F.claims(), secret: new.bytes)) == nil)
        // A kid names exactly one key.
        #expect(F.refusal(verifier, try await F.mint(F.claims(), secret: new.bytes, kid: "2026-05")) == .badSignature)
        #expect(F.refusal(verifier, try await F.mint(F.claims(), secret: new.bytes, kid: "2026-04"))
            == .unknownKey(kid: "2026-04"))
    }

    @Test func eddsaAndES256TokensVerifyAgainstTheirPublicKeys() async throws {
        let directory = try KeyDirectory()
        let ed = try EdDSA.PrivateKey(), p256 = ES256PrivateKey()
        let verifier = try await F.verifier([
            KeySource.publicKey(file: try directory.write("ed.pem", text: ed.publicKey.pemRepresentation), option: "--auth-public-key"),
            KeySource.publicKey(file: try directory.write("p256.pem", text: p256.publicKey.pemRepresentation), option: "--auth-public-key"),
        ])
        #expect(verifier.keys.keys.map(\.algorithmName) == ["EdDSA", "ES256"])
        let edToken = try await F.mint(F.claims(sub: "ed"), eddsa: ed)
        let p256Token = try await F.mint(F.claims(sub: "p"), es256: p256, kid: "p256")
        #expect(try verifier.verify(edToken, now: F.now).sub == "ed")
        #expect(try verifier.verify(p256Token, now: F.now).sub == "p")
        // A kid naming a key of the other algorithm: the key decides.
        #expect(F.refusal(verifier, try await F.mint(F.claims(), es256: p256, kid: "ed"))?.code == "wrong_algorithm")
        // Another key of the right algorithm.
        #expect(F.refusal(verifier, try await F.mint(F.claims(), eddsa: try EdDSA.PrivateKey())) == .badSignature)
        // An HS256 token where only public keys are configured.
        #expect(F.refusal(verifier, try await F.mint(F.claims(), secret: Array(repeating: 7, count: 32)))?.code
            == "wrong_algorithm")
    }

    @Test func malformedTokensAreRefused() async throws {
        let (verifier, secret, _) = try await F.secretVerifier()
        #expect(F.refusal(verifier, "") == .missing)
        for junk in ["abc", "a.b", "a.b.c.d", "!!!.???.***", "eyJhbGciOiJIUzI1NiJ9.bm90IGpzb24.c2ln"] {
            #expect(F.refusal(verifier, junk)?.code == "malformed_token", "\(junk)")
        }
        let good = try await F.mint(F.claims(), secret: secret)
        #expect(F.refusal(verifier, good + String(repeating: "A", count: TokenVerifier.maxTokenBytes))?.code
            == "malformed_token")
    }

    @Test func refusalsFitACloseReasonAndNeverHoldTheToken() async throws {
        let (verifier, secret, _) = try await F.secretVerifier()
        let long = String(repeating: "k", count: 500)
        let tokens = [
            try await F.mint(F.claims(), secret: secret, kid: long),
            try await F.mint(F.claims(exp: F.now), secret: secret),
            try await F.mint(F.claims(sub: long), secret: secret),
            try await F.mint(F.claims(aud: [long]), secret: secret),
        ]
        for token in tokens {
            let refusal = try #require(F.refusal(verifier, token))
            #expect(refusal.message.utf8.count <= 123, "\(refusal.code)")
            #expect(!refusal.message.contains(token))
            #expect(!refusal.message.contains(long))
            #expect(refusal.closeCode == 4401 && refusal.httpStatus == 401)
        }
        let every: [TokenRefusal] = [.missing, .malformed("not three base64url parts separated by dots"), .unsigned,
                                     .unknownKey(kid: TokenRefusal.shown(long)),
                                     .wrongAlgorithm("no EdDSA key here (this hub has HS256, ES256)"),
                                     .badSignature, .expired, .notYetValid, .issuedInFuture, .wrongAudience,
                                     .missingClaim("boards"),
                                     .badClaim("name holds a line break, control or invisible formatting character")]
        for refusal in every { #expect(refusal.message.utf8.count <= 123, "\(refusal.code)") }
        #expect(Set(every.map(\.code)).count == every.count)
    }

    @Test func rememberedTokenIsStillCheckedForExpiry() async throws {
        let (verifier, secret, _) = try await F.secretVerifier()
        let token = try await F.mint(F.claims(exp: F.now.addingTimeInterval(30)), secret: secret)
        let first = try verifier.verify(token, now: F.now)
        let again = try verifier.verify(token, now: F.now.addingTimeInterval(1))
        #expect(first == again)
        #expect(F.refusal(verifier, token, at: F.now.addingTimeInterval(30)) == .expired)
        // A refused token is not remembered: it is refused again, for the same reason.
        let outsider = try await F.mint(F.claims(), secret: try KeyDirectory().secret("x").bytes)
        #expect(F.refusal(verifier, outsider) == .badSignature)
        #expect(F.refusal(verifier, outsider) == .badSignature)
    }

    @Test func rememberedTokensAreBounded() async throws {
        let (verifier, secret, _) = try await F.secretVerifier(rememberedTokens: 8)
        for index in 0..<20 {
            _ = try verifier.verify(try await F.mint(F.claims(sub: "user\(index)"), secret: secret), now: F.now)
        }
        let memory = VerifiedTokens(capacity: 3)
        let entry = VerifiedTokens.Entry(grant: Grant(sub: "a", displayName: "a", expiry: F.now, patterns: []), validFrom: nil, kid: "k")
        for token in ["t1", "t2", "t3", "t4", "t2"] { memory.insert(token, entry) }
        #expect(memory.count == 3)
        #expect(memory.lookup("t1") == nil)
        #expect(memory.lookup("t4") != nil)
    }

    /// Not a timed test (nothing asserts a duration): prints what one
    /// verification costs, on a plain thread as the hub's service thread is.
    @Test func verifyCostIsReported() async throws {
        let (hsVerifier, secret, _) = try await F.secretVerifier(rememberedTokens: 0)
        let cachedVerifier = TokenVerifier(keys: hsVerifier.keys)
        let directory = try KeyDirectory()
        let ed = try EdDSA.PrivateKey(), p256 = ES256PrivateKey()
        let publicVerifier = try await F.verifier([
            KeySource.publicKey(file: try directory.write("ed.pem", text: ed.publicKey.pemRepresentation), option: "--auth-public-key"),
            KeySource.publicKey(file: try directory.write("p256.pem", text: p256.publicKey.pemRepresentation), option: "--auth-public-key"),
        ], rememberedTokens: 0)
        let claims = F.claims(name: "Ana", boards: ["set/*": "write", "boards/lobby": "read"])
        let cases: [(String, TokenVerifier, String)] = [
            ("HS256", hsVerifier, try await F.mint(claims, secret: secret)),
            ("HS256 remembered", cachedVerifier, try await F.mint(claims, secret: secret)),
            ("EdDSA", publicVerifier, try await F.mint(claims, eddsa: ed)),
            ("ES256", publicVerifier, try await F.mint(claims, es256: p256)),
        ]
        let rounds = Int(ProcessInfo.processInfo.environment["AUTH_VERIFY_ROUNDS"] ?? "") ?? 300
        for (label, verifier, token) in cases {
            let report = try await onOwnThread { () throws -> String in
                let start = DispatchTime.now().uptimeNanoseconds
                for _ in 0..<rounds { _ = try verifier.verify(token, now: F.now) }
                let perVerify = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(rounds) / 1000
                return "\(label): \(String(format: "%.1f", perVerify)) µs a verify (\(rounds) rounds)"
            }
            print("verify cost: \(report)")
        }
    }
}
