import Testing
import WebSocketLoop
@testable import SyncHub

/// The hub's door, driven with request heads and a clock in nanoseconds.
struct UpgradeGateTests {
    static let second: UInt64 = 1_000_000_000

    func request(_ path: String = "/boards/b", query: [String] = [], origin: String? = nil, host: String? = "hub.example:8443",
                 token: String? = nil, peer: String = "203.0.113.7", tls: Bool = false) -> RequestHead {
        RequestHead(path: path, queryNames: query, origin: origin, host: host, bearerToken: token, peerAddress: peer, isTLS: tls)
    }

    @Test func aTokenInTheQueryIsRefused400WhateverItsCase() {
        var gate = UpgradeGate(policy: TransportPolicy())
        #expect(gate.admit(request(query: ["view", "token"]), now: 1)?.status == 400)
        #expect(gate.admit(request(query: ["Access_Token"]), now: 2)?.status == 400)
        #expect(gate.admit(request(query: ["view"]), now: 3) == nil)
        #expect(gate.counters.queryTokensRefused == 2)
    }

    @Test func listedOriginsAreTheOnlyOnesLetInAndNoOriginIsNotRefused() {
        var policy = TransportPolicy()
        policy.allowedOrigins = [TransportPolicy.normalise(origin: "https://Boards.example:443/")]
        var gate = UpgradeGate(policy: policy)
        #expect(gate.admit(request(origin: "https://boards.example"), now: 1) == nil)
        #expect(gate.admit(request(origin: "http://boards.example"), now: 2)?.status == 403)
        #expect(gate.admit(request(origin: nil), now: 3) == nil)
        #expect(gate.counters.originsRefused == 1)
    }

    @Test func withNoneListedAnOpenHubTakesAnyOriginAndAnAuthHubOnlyItsOwn() {
        var open = UpgradeGate(policy: TransportPolicy())
        #expect(open.admit(request(origin: "https://elsewhere.example"), now: 1) == nil)
        var policy = TransportPolicy()
        policy.authRequired = true
        var closed = UpgradeGate(policy: policy)
        #expect(closed.admit(request(origin: "https://elsewhere.example", tls: true), now: 1)?.status == 403)
        #expect(closed.admit(request(origin: "https://hub.example:8443", tls: true), now: 2) == nil)
        #expect(closed.admit(request(origin: "http://hub.example:8443", tls: true), now: 3)?.status == 403)
        #expect(closed.admit(request(origin: "https://hub.example", host: "hub.example:443", tls: true), now: 4) == nil)
    }

    @Test func connectsBeyondThePerMinuteLimitGet429AndRefillOverTheMinute() {
        var policy = TransportPolicy()
        policy.maxConnectsPerMinute = 3
        var gate = UpgradeGate(policy: policy)
        for n in 0..<3 { #expect(gate.admit(request(), now: UInt64(n)) == nil) }
        #expect(gate.admit(request(), now: 4)?.status == 429)
        #expect(gate.admit(request(peer: "203.0.113.8"), now: 5) == nil)
        #expect(gate.admit(request(peer: "127.0.0.1"), now: 6) == nil)
        #expect(gate.admit(request(), now: 20 * Self.second + 4) == nil)  // one more after a third of a minute
        #expect(gate.counters.connectsRateLimited == 1)
        #expect(gate.trackedAddresses == 2)
    }

    @Test func loopbackIsNeverCounted() {
        var policy = TransportPolicy()
        policy.maxConnectsPerMinute = 1
        var gate = UpgradeGate(policy: policy)
        for n in 0..<10 {
            #expect(gate.admit(request(peer: n % 2 == 0 ? "127.0.0.1" : "::1"), now: UInt64(n)) == nil)
        }
        #expect(gate.trackedAddresses == 0)
    }

    @Test func theAddressTableIsBoundedAndForgetsIdleAddresses() {
        var policy = TransportPolicy()
        policy.maxConnectsPerMinute = 10
        policy.maxTrackedAddresses = 4
        var gate = UpgradeGate(policy: policy)
        for n in 0..<4 { #expect(gate.admit(request(peer: "198.51.100.\(n)"), now: UInt64(n)) == nil) }
        #expect(gate.admit(request(peer: "198.51.100.9"), now: 5)?.status == 429)
        #expect(gate.trackedAddresses == 4)
        #expect(gate.admit(request(peer: "198.51.100.9"), now: 61 * Self.second) == nil)
        #expect(gate.trackedAddresses == 1)
    }

    @Test func preTokenLimitsApplyOnlyWithAuthOn() {
        var open = UpgradeGate(policy: TransportPolicy())
        open.opened(1, now: 0)
        #expect(open.unauthenticatedCount == 0)
        #expect(open.received(1, bytes: 1 << 20) == false)
        #expect(open.overdue(now: 60 * Self.second).isEmpty)
    }

    @Test func aConnectionWithoutATokenIsOverdueAfterTheTimeoutUnlessAuthenticated() {
        var policy = TransportPolicy()
        policy.authRequired = true
        policy.authTimeoutSeconds = 5
        var gate = UpgradeGate(policy: policy)
        gate.opened(1, now: 0)
        gate.opened(2, now: 0)
        gate.opened(3, now: 1 * Self.second)
        gate.authenticated(2)
        #expect(gate.overdue(now: 5 * Self.second - 1).isEmpty)
        #expect(gate.overdue(now: 5 * Self.second) == [1])
        #expect(gate.overdue(now: 6 * Self.second) == [3])
        #expect(gate.counters.authTimeouts == 2)
        #expect(gate.unauthenticatedCount == 0)
    }

    @Test func bytesBeforeATokenAreCountedUpToTheLimit() {
        var policy = TransportPolicy()
        policy.authRequired = true
        policy.maxPreauthBytes = 300
        var gate = UpgradeGate(policy: policy)
        gate.opened(1, now: 0)
        #expect(gate.received(1, bytes: 200) == false)
        #expect(gate.received(1, bytes: 100) == false)
        #expect(gate.received(1, bytes: 1) == true)
        #expect(!gate.isWaiting(1))
        #expect(gate.counters.preauthOverruns == 1)
    }

    @Test func upgradesWithoutATokenHeaderBeyondTheWaitingLimitGet503() {
        var policy = TransportPolicy()
        policy.authRequired = true
        policy.maxUnauthenticated = 2
        var gate = UpgradeGate(policy: policy)
        gate.opened(1, now: 0)
        gate.opened(2, now: 0)
        #expect(gate.admit(request(), now: 1)?.status == 503)
        #expect(gate.admit(request(token: "header.token.here"), now: 2) == nil)
        gate.closed(1)
        #expect(gate.admit(request(), now: 3) == nil)
        #expect(gate.counters.unauthenticatedRefused == 1)
    }

    @Test func aBearerTokenIsTakenFromTheAuthorizationHeaderOnly() {
        #expect(RequestHead.bearerToken(fromAuthorization: "Bearer abc.def") == "abc.def")
        #expect(RequestHead.bearerToken(fromAuthorization: "bearer   abc ") == "abc")
        #expect(RequestHead.bearerToken(fromAuthorization: "Basic dXNlcg==") == nil)
        #expect(RequestHead.bearerToken(fromAuthorization: "Bearer") == nil)
        #expect(!String(describing: request(token: "s3cret")).contains("s3cret"))
    }
}
