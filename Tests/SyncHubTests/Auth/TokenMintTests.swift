import ArgumentParser
import Foundation
import JWTKit
import Testing
@testable import SyncHub

/// A5: `synchub token` makes tokens the verifier accepts, and refuses bad
/// options with a sentence saying which.
struct TokenMintTests {
    @Test func mintedHS256TokenVerifies() async throws {
        let directory = try KeyDirectory()
        let secret = try directory.secret("hub.secret")
        let source = try KeySource.secret(file: secret.file, option: "--secret-file")
        guard case .secret(let key) = source.material else { Issue.record("not a secret"); return }
        let now = Date(timeIntervalSince1970: 1_900_000_000.7)
        let claims = TokenMint.claims(sub: "ana", name: "Ana", boards: ["set/*": .write, "boards/lobby": .read], now: now, ttl: 3600)
        let token = try await TokenMint(key: .secret(key), kid: "hub").sign(claims)
        let verifier = try await AuthFixtures.verifier([source])
        let grant = try verifier.verify(token, now: now)
        #expect(grant.sub == "ana" && grant.displayName == "Ana")
        #expect(grant.expiry == Date(timeIntervalSince1970: 1_900_003_600))
        #expect(grant.role(for: "set/x") == .write && grant.role(for: "boards/lobby") == .read)
        // Whole seconds in the claims, as other verifiers expect.
        let payload = String(token.split(separator: ".")[1])
        let json = try #require(Data(base64Encoded: Self.padded(payload)))
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains("\"exp\":1900003600,") && text.contains("\"iat\":1900000000,"))
        #expect(text.contains("\"aud\":\"synchub\""))
    }

    @Test func mintedEdDSAAndES256TokensVerify() async throws {
        let directory = try KeyDirectory()
        let ed = try EdDSA.PrivateKey(), p256 = ES256PrivateKey()
        let edPrivate = try directory.write("ed-private.pem", text: ed.pemRepresentation)
        let p256Private = try directory.write("p256-private.pem", text: p256.pemRepresentation)
        let verifier = try await AuthFixtures.verifier([
            KeySource.publicKey(file: try directory.write("ed.pem", text: ed.publicKey.pemRepresentation), option: "--auth-public-key"),
            KeySource.publicKey(file: try directory.write("p256.pem", text: p256.publicKey.pemRepresentation), option: "--auth-public-key"),
        ])
        let claims = TokenMint.claims(sub: "ana", name: nil, boards: ["*": .read], now: AuthFixtures.now, ttl: 60)
        for (file, kid) in [(edPrivate, "ed"), (p256Private, "p256")] {
            let key = try TokenMint.privateKey(file: file, option: "--private-key")
            let token = try await TokenMint(key: key, kid: kid).sign(claims)
            #expect(try verifier.verify(token, now: AuthFixtures.now).role(for: "todo/a") == .read)
        }
        #expect(throws: KeyLoadError.self) {
            try TokenMint.privateKey(file: try directory.write("pub.pem", text: ed.publicKey.pemRepresentation), option: "--private-key")
        }
    }

    @Test func durationsAreParsed() {
        #expect(TokenMint.seconds(in: "90") == 90)
        #expect(TokenMint.seconds(in: "90s") == 90)
        #expect(TokenMint.seconds(in: "30m") == 1800)
        #expect(TokenMint.seconds(in: "1h") == 3600)
        #expect(TokenMint.seconds(in: "7d") == 604_800)
        for bad in ["", "h", "0", "-1h", "1.5h", "1w", "１h"] { #expect(TokenMint.seconds(in: bad) == nil, "\(bad)") }
    }

    @Test func badOptionsAreRefusedWithASentence() throws {
        let base = ["--secret-file", "hub.secret", "--sub", "ana"]
        func message(_ arguments: [String]) -> String? {
            do {
                _ = try TokenCommand.parse(arguments)
                return nil
            } catch {
                return TokenCommand.message(for: error)
            }
        }
        #expect(message(base + ["--board", "set/*=write"]) == nil)
        #expect(message(base)?.contains("at least one --board") == true)
        #expect(message(base + ["--board", "set/*"])?.contains("PATTERN=read, PATTERN=write or PATTERN=admin") == true)
        #expect(message(base + ["--board", "set/*=owner"])?.contains("PATTERN=read, PATTERN=write or PATTERN=admin") == true)
        #expect(message(base + ["--board", "set/*x=read"])?.contains("only at its end") == true)
        #expect(message(base + ["--board", "a=read", "--board", "a=write"])?.contains("given twice") == true)
        #expect(message(base + ["--board", "*=read", "--ttl", "400d"])?.contains("--ttl") == true)
        #expect(message(base + ["--board", "*=read", "--name", String(repeating: "n", count: 33)])?.contains("--name") == true)
        #expect(message(["--sub", "ana", "--board", "*=read"])?.contains("exactly one of --secret-file and --private-key") == true)
        #expect(message(["--secret-file", "a", "--private-key", "b", "--sub", "ana", "--board", "*=read"])?
            .contains("exactly one") == true)
    }

    static func padded(_ base64url: String) -> String {
        let plain = base64url.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        return plain + String(repeating: "=", count: (4 - plain.count % 4) % 4)
    }
}
