import ArgumentParser
import Foundation
import JWTKit
import Testing
@testable import SyncHub

/// A2: which key files the hub takes, how it names them, and what it says
/// about the ones it refuses.
struct KeyRingTests {
    static func problem(_ load: () throws(KeyLoadError) -> KeySource) -> String? {
        do {
            _ = try load()
            return nil
        } catch {
            return error.description
        }
    }

    @Test func secretNeedsAtLeast32Bytes() throws {
        let directory = try KeyDirectory()
        let short = try directory.write("short.secret", Array(repeating: 1, count: 31))
        let enough = try directory.write("enough.secret", Array(repeating: 1, count: 32))
        let message = try #require(Self.problem { () throws(KeyLoadError) in try KeySource.secret(file: short,
                                                                                                  option: "--auth-secret-file") })
        #expect(message.contains("--auth-secret-file \(short)"))
        #expect(message.contains("holds 31 bytes") && message.contains("at least 32"))
        #expect(Self.problem { () throws(KeyLoadError) in try KeySource.secret(file: enough, option: "--auth-secret-file") } == nil)
    }

    @Test func missingFileIsNamed() throws {
        let message = try #require(Self.problem { () throws(KeyLoadError) in
            try KeySource.secret(file: "/nonexistent/hub.secret", option: "--auth-secret-file")
        })
        #expect(message == "--auth-secret-file /nonexistent/hub.secret: does not exist")
    }

    @Test func kidIsTheBaseNameWithoutExtension() {
        #expect(KeySource.kid(ofFile: "/etc/synchub/2026-06.pem") == "2026-06")
        #expect(KeySource.kid(ofFile: "keys/hub.v2.secret") == "hub.v2")
        #expect(KeySource.kid(ofFile: "plain") == "plain")
    }

    @Test func publicKeysAreEd25519OrP256Only() throws {
        let directory = try KeyDirectory()
        let ed = try directory.write("ed.pem", text: try EdDSA.PrivateKey().publicKey.pemRepresentation)
        let p256 = try directory.write("p256.pem", text: ES256PrivateKey().publicKey.pemRepresentation)
        let p384 = try directory.write("p384.pem", text: ES384PrivateKey().publicKey.pemRepresentation)
        let privateKey = try directory.write("private.pem", text: try EdDSA.PrivateKey().pemRepresentation)
        let junk = try directory.write("junk.pem", text: "hello")
        func load(_ file: String) -> String? {
            Self.problem { () throws(KeyLoadError) in try KeySource.publicKey(file: file, option: "--auth-public-key") }
        }
        #expect(load(ed) == nil)
        #expect(load(p256) == nil)
        #expect(load(p384)?.contains("is not an Ed25519 or P-256 public key") == true)
        #expect(load(privateKey)?.contains("holds a private key") == true)
        #expect(load(junk)?.contains("is not PEM") == true)
    }

    @Test func twoKeysWithOneNameAreRefused() async throws {
        let one = try KeyDirectory(), two = try KeyDirectory()
        let sources = [
            try KeySource.secret(file: try one.secret("hub.secret").file, option: "--auth-secret-file"),
            try KeySource.secret(file: try two.secret("hub.key").file, option: "--auth-secret-file"),
        ]
        await #expect(throws: KeyLoadError.self) { try await KeyRing(sources: sources) }
    }

    @Test func loopbackHostsAreRecognised() {
        for host in ["127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST", "::1", "[::1]", "0:0:0:0:0:0:0:1"] {
            #expect(AuthOptions.isLoopback(host), "\(host)")
        }
        for host in ["0.0.0.0", "", "10.0.0.1", "::", "128.0.0.1", "127.0.0", "127.0.0.1.5", "localhost.example", "1270.0.0.1"] {
            #expect(!AuthOptions.isLoopback(host), "\(host)")
        }
    }

    @Test func openHubRefusesANonLoopbackAddressUnlessAllowed() throws {
        let open = try AuthOptions.parse([])
        #expect(open.isOpen)
        #expect(throws: ValidationError.self) { try open.checkOpenMode(host: "0.0.0.0") }
        try open.checkOpenMode(host: "127.0.0.1")
        try AuthOptions.parse(["--allow-anonymous"]).checkOpenMode(host: "0.0.0.0")
        let directory = try KeyDirectory()
        let keyed = try AuthOptions.parse(["--auth-secret-file", try directory.secret("hub.secret").file])
        #expect(!keyed.isOpen)
        try keyed.checkOpenMode(host: "0.0.0.0")
        do {
            try open.checkOpenMode(host: "0.0.0.0")
        } catch let error as ValidationError {
            #expect(error.message.contains("--allow-anonymous") && error.message.contains("--auth-secret-file"))
        }
    }

    @Test func hubCommandRunsTheCheckAndKeepsItsDefault() throws {
        #expect(throws: (any Error).self) { try SyncHubCommand.parseAsRoot(["--host", "0.0.0.0"]) }
        #expect(try SyncHubCommand.parseAsRoot(["--host", "0.0.0.0", "--allow-anonymous"]) is SyncHubCommand)
        #expect(try SyncHubCommand.parseAsRoot(["--port", "0", "--in-memory"]) is SyncHubCommand)
        #expect(try SyncHubCommand.parseAsRoot(["token", "--secret-file", "x", "--sub", "ana", "--board", "*=read"]) is TokenCommand)
    }

    @Test func metricsTokenMustBeLongEnough() {
        #expect(throws: (any Error).self) { try AuthOptions.parse(["--metrics-token", "short"]) }
        #expect((try? AuthOptions.parse(["--metrics-token", "0123456789abcdef"]))?.metricsToken == "0123456789abcdef")
    }

    @Test func makeVerifierLoadsEveryKeyOrSaysWhichFails() async throws {
        let directory = try KeyDirectory()
        let secret = try directory.secret("a.secret")
        let ed = try EdDSA.PrivateKey()
        let pem = try directory.write("b.pem", text: ed.publicKey.pemRepresentation)
        let options = try AuthOptions.parse(["--auth-secret-file", secret.file, "--auth-public-key", pem])
        let verifier = try #require(try await onOwnThread { try options.makeVerifier() })
        #expect(verifier.keys.keys.map(\.kid) == ["a", "b"])
        let token = try await AuthFixtures.mint(AuthFixtures.claims(), eddsa: ed, kid: "b")
        #expect(try verifier.verify(token, now: AuthFixtures.now).sub == "ana")

        #expect(try await onOwnThread { try AuthOptions.parse([]).makeVerifier() } == nil)
        // A bad file stops the command line before anything starts.
        let short = try directory.write("short.secret", [1, 2, 3])
        let refusal = try #require(Self.parseError(["--auth-secret-file", short]))
        #expect(refusal == "--auth-secret-file \(short): holds 3 bytes; an HS256 secret needs at least 32 (make one with: " +
                           "head -c 32 /dev/urandom > FILE)")
        #expect(Self.parseError(["--auth-public-key", secret.file])?.contains("is not PEM") == true)
        // Two good files with one name pass alone but not together.
        let other = try KeyDirectory()
        let clash = try AuthOptions.parse(["--auth-secret-file", secret.file, "--auth-secret-file", try other.secret("a.key").file])
        await #expect(throws: ValidationError.self) { try await onOwnThread { try clash.makeVerifier() } }
    }

    static func parseError(_ arguments: [String]) -> String? {
        do {
            _ = try AuthOptions.parse(arguments)
            return nil
        } catch {
            return AuthOptions.message(for: error)
        }
    }
}
