import Foundation
import Testing
import WebSocketLoop
@testable import syncclient

/// `wss://` addresses, the access flags (--token, --token-file,
/// SYNCHUB_TOKEN, --ca, --insecure), the hub's refusals and token refresh.
struct WebSocketURLTests {
    @Test func wssIsAcceptedWithDefaultPort443() throws {
        let url = try #require(WebSocketURL("wss://hub.example/boards/kitchen"))
        #expect(url.isSecure && url.host == "hub.example" && url.port == 443 && url.path == "/boards/kitchen")
        #expect(url.description == "wss://hub.example:443/boards/kitchen")
    }

    @Test func wsKeepsDefaultPort80AndAnExplicitPortWins() throws {
        let plain = try #require(WebSocketURL("ws://hub.example/set/t1"))
        #expect(!plain.isSecure && plain.port == 80)
        let secure = try #require(WebSocketURL("wss://127.0.0.1:8443/stock/bar"))
        #expect(secure.isSecure && secure.port == 8443 && secure.host == "127.0.0.1")
        #expect(secure.with(path: "/boards/x") == WebSocketURL(host: "127.0.0.1", port: 8443, path: "/boards/x", isSecure: true))
    }

    @Test(arguments: ["https://hub/boards/a", "wss://", "wss://:443/boards/a", "wss://hub:0/boards/a",
                      "wss://hub:70000/boards/a", "wss://user@hub/boards/a", "WSS//hub/boards/a"])
    func badAddressesAreRefused(text: String) {
        #expect(WebSocketURL(text) == nil)
    }
}

struct HubAccessTests {
    let token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbmEifQ.c2ln"
    private func resolve(token: String? = nil, tokenFile: String? = nil, environment: [String: String] = [:],
                         ca: String? = nil, insecure: Bool = false, secure: Bool = true,
                         files: [String: String] = [:]) throws -> HubAccess {
        try HubAccess.resolve(token: token, tokenFile: tokenFile, environment: environment, ca: ca, insecure: insecure,
                              secure: secure, readFile: { path in
                                  guard let text = files[path] else { throw CocoaError(.fileNoSuchFile) }
                                  return text
                              })
    }

    @Test func flagWinsOverEnvironment() throws {
        let access = try resolve(token: "flag", environment: ["SYNCHUB_TOKEN": token])
        #expect(access.token == "flag")
        #expect(try resolve(environment: ["SYNCHUB_TOKEN": token]).token == token)
        #expect(try resolve().token == nil)
    }

    @Test func tokenFileIsReadTrimmedAndRemembered() throws {
        let access = try resolve(tokenFile: "/t", files: ["/t": token + "\n"])
        #expect(access.token == token && access.tokenFile == "/t")
    }

    @Test func tokenAndTokenFileTogetherAreAUsageError() {
        #expect(throws: AccessError.usage("give --token or --token-file, not both")) {
            try resolve(token: token, tokenFile: "/t", files: ["/t": token])
        }
    }

    @Test(arguments: ["", "  ", "s3cr3t q9z", "abc\r\nX-Evil: 1", "tök"])
    func tokensThatCouldBreakTheHeaderAreRefusedWithoutEchoing(bad: String) throws {
        let error = try #require(throws: AccessError.self) { try resolve(token: bad) }
        if !bad.trimmingCharacters(in: .whitespaces).isEmpty { #expect(!error.description.contains(bad)) }
    }

    @Test func tlsIsSetForWssOnly() throws {
        #expect(try resolve(secure: true).tls == ClientTLS())
        #expect(try resolve(secure: false).tls == nil)
        #expect(try resolve(insecure: true).tls == ClientTLS(insecure: true))
    }

    @Test func caMustHoldAPEMCertificate() throws {
        let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
        #expect(try resolve(ca: "/ca.pem", files: ["/ca.pem": pem]).tls == ClientTLS(caFile: "/ca.pem"))
        #expect(throws: AccessError.usage("--ca /x.pem holds no PEM certificate (-----BEGIN CERTIFICATE-----)")) {
            try resolve(ca: "/x.pem", files: ["/x.pem": "hello"])
        }
        #expect(throws: AccessError.self) { try resolve(ca: "/missing.pem") }
    }

    @Test func caAndInsecureExcludeEachOtherAndNeedWss() {
        #expect(throws: AccessError.usage("give --ca FILE or --insecure, not both")) {
            try resolve(ca: "/ca.pem", insecure: true)
        }
        #expect(throws: AccessError.usage("--ca and --insecure apply to wss:// hubs only")) {
            try resolve(insecure: true, secure: false)
        }
    }

    @Test func commandLineFlagsParse() throws {
        let command = try StateCommand.parse(["wss://hub/boards/a", "--token", "abc", "--insecure"])
        #expect(command.board.access.token == "abc" && command.board.access.insecure)
        let bench = try BenchCommand.parse(["wss://hub:8443", "--ca", "/ca.pem", "--connect-only", "--connections", "10"])
        #expect(bench.access.ca == "/ca.pem" && bench.connectOnly && bench.connections == 10)
    }
}

struct AccessDenialTests {
    @Test func refusedUpgradeAndCloseCodesAreDenials() {
        #expect(AccessDenial.of(refusedStatus: 401, refusedReason: "token expired", closeCode: nil, closeReason: "")
                == AccessDenial(code: 401, reason: "token expired"))
        #expect(AccessDenial.of(refusedStatus: nil, refusedReason: "", closeCode: 4403, closeReason: "")?.message
                == "not allowed: no role on this board (4403)")
        #expect(AccessDenial.of(refusedStatus: nil, refusedReason: "", closeCode: 4401, closeReason: "token expired")?.message
                == "not allowed: token expired (4401)")
    }

    @Test func otherEndingsAreNot() {
        #expect(AccessDenial.of(refusedStatus: 404, refusedReason: "", closeCode: nil, closeReason: "") == nil)
        #expect(AccessDenial.of(refusedStatus: nil, refusedReason: "", closeCode: 1001, closeReason: "going away") == nil)
        #expect(AccessDenial.of(refusedStatus: nil, refusedReason: "", closeCode: nil, closeReason: "") == nil)
    }

    @Test func bearerChallengeGivesTheHubsWords() {
        #expect(BearerChallenge(#"Bearer realm="synchub", error="invalid_token", error_description="token expired""#).description
                == "token expired")
        #expect(BearerChallenge(#"Bearer error="insufficient_scope""#).description == "insufficient_scope")
        #expect(BearerChallenge(#"Bearer error_description="say \"no\"", error=x"#).description == #"say "no""#)
        #expect(BearerChallenge("Basic realm=x").description == nil)
        #expect(BearerChallenge("").description == nil)
    }

    @Test func refusedIsShownOnTheStatusLine() {
        #expect(ConnectionState.refused("token expired").label == "Not allowed: token expired")
    }
}

struct TokenRefreshTests {
    /// An unsigned JWT-shaped token with `exp` (the client never checks signatures).
    func token(exp: Int, sub: String = "ana") -> String {
        func part(_ json: String) -> String {
            Data(json.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        return part(#"{"alg":"HS256"}"#) + "." + part(#"{"sub":"\#(sub)","exp":\#(exp)}"#) + ".c2ln"
    }

    @Test func expiryIsReadFromThePayload() {
        #expect(TokenRefresh.expiry(of: token(exp: 1_900_000_000)) == 1_900_000_000)
        #expect(TokenRefresh.expiry(of: "not-a-jwt") == nil)
    }

    @Test func looksOnlyNearExpiryAndNotTooOften() {
        var refresh = TokenRefresh(token: token(exp: 1000))
        let looks = [900, 941, 942, 943.5].map { refresh.wantsLook(now: $0) }
        #expect(looks == [false, true, false, true])
    }

    @Test func aNewerTokenBecomesAnAuthFrameOnce() {
        var refresh = TokenRefresh(token: token(exp: 1000))
        let newer = token(exp: 2000)
        let frames = [token(exp: 1000), token(exp: 999, sub: "bo"), "garbage\u{1}", newer + "\n", newer].map { refresh.offer($0) }
        #expect(frames == [nil, nil, nil, #"{"type":"auth","token":"\#(newer)"}"#, nil])
        #expect(refresh.token == newer)
    }
}

/// Review finding: the hub's words were printed as received.
@Suite struct HubWordsTests {
    @Test func escapeSequencesAndLineBreaksFromTheHubArePrintedAsQuestionMarks() {
        #expect(HubWords.printable("token expired\u{1B}[2J\nrm -rf") == "token expired?[2J?rm -rf")
        #expect(HubWords.printable("ana deleted this reminder") == "ana deleted this reminder")
        #expect(HubWords.printable("caf\u{E9} \u{202E}txt") == "café ?txt")
        #expect(HubWords.printable(String(repeating: "x", count: 500)).count == 300)
        let denial = AccessDenial.of(refusedStatus: nil, refusedReason: "", closeCode: 4401, closeReason: "bad\u{7}")
        #expect(denial?.message == "not allowed: bad? (4401)")
    }
}
