import BoardCRDT
import Foundation
import Testing
@testable import SyncHub

/// Who may do what, in the hub's core (A6, A8-A11): driven with no socket;
/// tokens minted with jwt-kit and checked by the hub's own verifier.
@Suite struct HubCoreAccessTests {
    struct Fixture {
        var hub: HubCoreHarness
        var secret: [UInt8]
        var keys: KeyDirectory

        static func make() async throws -> Fixture {
            let (verifier, secret, keys) = try await AuthFixtures.secretVerifier()
            var hub = HubCoreHarness(verifier: verifier)
            hub.clock = HubClock(nanos: 1_000_000_000, wall: AuthFixtures.now)
            return Fixture(hub: hub, secret: secret, keys: keys)
        }

        func token(sub: String = "ana", name: String? = nil, boards: [String: String] = ["boards/*": "write"],
                   exp: Date = AuthFixtures.now.addingTimeInterval(3600)) async throws -> String {
            try await AuthFixtures.mint(AuthFixtures.claims(sub: sub, name: name, exp: exp, boards: boards), secret: secret)
        }
    }

    static func closes(_ actions: [HubAction]) -> [(code: UInt16, reason: String)] {
        actions.compactMap { if case let .close(_, code, reason) = $0 { (code, reason) } else { nil } }
    }

    static func authFrame(_ token: String) -> String { #"{"type":"auth","token":"\#(token)"}"# }

    @Test func aConnectionWithoutATokenHearsNothingUntilItsAuthFrameA6() async throws {
        var fixture = try await Fixture.make()
        let joined = fixture.hub.join(1)
        #expect(joined.isEmpty)
        #expect(fixture.hub.turn().isEmpty)
        let token = try await fixture.token(name: "Ana")
        let actions = fixture.hub.send(1, Self.authFrame(token)) + fixture.hub.turn()
        #expect(actions.contains { if case .authenticated(1) = $0 { true } else { false } })
        let state = try #require(HubCoreHarness.published(actions))
        #expect(state["names"] as? [String] == ["Ana"])
    }

    @Test func anyOtherFirstFrameClosesWith4401() async throws {
        var fixture = try await Fixture.make()
        fixture.hub.join(1)
        let closes = Self.closes(fixture.hub.send(1, #"{"type":"select","letter":"A"}"#))
        #expect(closes.map(\.code) == [4401])
        #expect(closes.first?.reason.contains("auth") == true)
    }

    @Test func aBadTokenInTheAuthFrameClosesWith4401AndSaysWhy() async throws {
        var fixture = try await Fixture.make()
        fixture.hub.join(1)
        let expired = try await fixture.token(exp: AuthFixtures.now.addingTimeInterval(-1))
        let closes = Self.closes(fixture.hub.send(1, Self.authFrame(expired)))
        #expect(closes.map(\.code) == [4401])
        #expect(closes.first?.reason == "token expired")
        #expect(fixture.hub.core.boards["k"] == nil || fixture.hub.core.boards["k"]?.members.isEmpty == true)
    }

    @Test func aTokenForAnotherBoardClosesWith4403A8() async throws {
        var fixture = try await Fixture.make()
        fixture.hub.join(1)
        let token = try await fixture.token(boards: ["set/*": "write"])
        #expect(Self.closes(fixture.hub.send(1, Self.authFrame(token))).map(\.code) == [4403])
    }

    @Test func aHeaderGrantJoinsAtOnceWithTheTokensName() async throws {
        var fixture = try await Fixture.make()
        let token = try await fixture.token(sub: "bo")
        let grant = try #require(fixture.hub.core.verifier).verify(token, now: AuthFixtures.now)
        let actions = fixture.hub.join(1, grant: grant) + fixture.hub.turn()
        #expect(HubCoreHarness.published(actions)?["names"] as? [String] == ["bo"])
    }

    @Test func readConnectionsAreRefusedForbiddenAndTheTenthInAMinuteClosesA9() async throws {
        var fixture = try await Fixture.make()
        fixture.hub.join(1)
        let token = try await fixture.token(boards: ["boards/k": "read", "boards/*": "write"])
        fixture.hub.send(1, Self.authFrame(token))
        for attempt in 1...9 {
            let actions = fixture.hub.send(1, #"{"type":"select","letter":"A","ref":"r\#(attempt)"}"#)
            let answer = try #require(HubCoreHarness.frames(actions, to: 1).first)
            #expect(answer["type"] as? String == "rejected")
            #expect(answer["code"] as? String == "forbidden")
            #expect(answer["ref"] as? String == "r\(attempt)")
        }
        fixture.hub.hold()
        #expect(fixture.hub.inFlight.isEmpty)
        #expect(Self.closes(fixture.hub.send(1, #"{"type":"select","letter":"A"}"#)).map(\.code) == [4403])
    }

    @Test func theNameComesFromTheTokenAndJoinCannotChangeItA11() async throws {
        var fixture = try await Fixture.make()
        fixture.hub.join(1)
        fixture.hub.send(1, Self.authFrame(try await fixture.token(sub: "ana", name: "Ana")))
        let refused = HubCoreHarness.frames(fixture.hub.send(1, #"{"type":"join","name":"bo","ref":"j"}"#), to: 1)
        #expect(refused.first?["code"] as? String == "name_from_token")
        let same = HubCoreHarness.frames(fixture.hub.send(1, #"{"type":"join","name":"Ana","ref":"j2"}"#), to: 1)
        #expect(same.first?["type"] as? String == "ack")
    }

    @Test func aReplicaMustSayHelloUnderItsTokensName() async throws {
        var fixture = try await Fixture.make()
        fixture.hub.join(1)
        fixture.hub.send(1, Self.authFrame(try await fixture.token(sub: "ana")))
        let wrong = HubCoreHarness.frames(fixture.hub.send(1, #"{"type":"hello","replica":77,"name":"bo","sent":0}"#), to: 1)
        #expect(wrong.first?["code"] as? String == "not_your_name")
        let right = HubCoreHarness.frames(fixture.hub.send(1, #"{"type":"hello","replica":77,"name":"ana","sent":0}"#), to: 1)
        #expect(right.first?["type"] as? String == "sync")
    }

    @Test func atExpiryTheConnectionIsClosed4401UnlessRefreshedA10() async throws {
        var fixture = try await Fixture.make()
        fixture.hub.join(1)
        fixture.hub.join(2)
        let soon = AuthFixtures.now.addingTimeInterval(60)
        fixture.hub.send(1, Self.authFrame(try await fixture.token(sub: "ana", exp: soon)))
        fixture.hub.send(2, Self.authFrame(try await fixture.token(sub: "bo", exp: soon)))
        let newer = try await fixture.token(sub: "ana", exp: soon.addingTimeInterval(3600))
        let refreshed = HubCoreHarness.frames(fixture.hub.send(1, #"{"type":"auth","token":"\#(newer)","ref":"a"}"#), to: 1)
        #expect(refreshed.first?["type"] as? String == "ack")
        fixture.hub.clock.wall = soon
        let actions = fixture.hub.handle(.tick)
        let closed = actions.compactMap { if case let .close(id, code, reason) = $0 { "\(id) \(code) \(reason)" } else { nil } }
        #expect(closed == ["2 4401 token expired"])
    }

    @Test func aRefreshForAnotherSubIsRefusedAndANarrowerOneAppliesA10() async throws {
        var fixture = try await Fixture.make()
        fixture.hub.join(1)
        fixture.hub.send(1, Self.authFrame(try await fixture.token(sub: "ana")))
        let other = try await fixture.token(sub: "bo")
        let refused = HubCoreHarness.frames(fixture.hub.send(1, #"{"type":"auth","token":"\#(other)","ref":"a"}"#), to: 1)
        #expect(refused.first?["code"] as? String == "other_subject")
        let narrower = try await fixture.token(sub: "ana", boards: ["boards/*": "read"])
        fixture.hub.send(1, #"{"type":"auth","token":"\#(narrower)"}"#)
        let answer = HubCoreHarness.frames(fixture.hub.send(1, #"{"type":"select","letter":"A","ref":"s"}"#), to: 1)
        #expect(answer.first?["code"] as? String == "forbidden")
        let none = try await fixture.token(sub: "ana", boards: ["set/*": "write"])
        #expect(Self.closes(fixture.hub.send(1, Self.authFrame(none))).map(\.code) == [4403])
    }

    @Test func aWaitingConnectionsBoardIsReadWhenItsTokenArrivesNotAtTheUpgrade() async throws {
        var fixture = try await Fixture.make()
        let upgraded = fixture.hub.handle(.upgraded(connection: 1, board: BoardAddress(key: "k")), answerLoads: false)
        #expect(HubCoreHarness.loads(upgraded).isEmpty, "waiting, it asks the store for nothing")
        let bad = fixture.hub.send(1, #"{"type":"auth","token":"not-a-token"}"#, answerLoads: false)
        #expect(HubCoreHarness.loads(bad).isEmpty, "a bad token reads nothing")
        #expect(Self.closes(bad).map(\.code) == [4401])
        fixture.hub.handle(.upgraded(connection: 2, board: BoardAddress(key: "k")), answerLoads: false)
        let good = fixture.hub.send(2, Self.authFrame(try await fixture.token(sub: "ana")), answerLoads: false)
        #expect(HubCoreHarness.loads(good) == ["k"], "a valid token reads its board")
        #expect(good.contains { if case .authenticated(2) = $0 { true } else { false } }, "its token is good: the pre-token limits stop")
        #expect(fixture.hub.core.boardOf[2] == nil, "seated once the board is read")
        #expect(fixture.hub.core.counters.boardReads == 1)
    }

    @Test func nothingIsTakenAfterExpiryEvenBeforeTheTickClosesIt() async throws {
        var fixture = try await Fixture.make()
        fixture.hub.join(1)
        let soon = AuthFixtures.now.addingTimeInterval(60)
        fixture.hub.send(1, Self.authFrame(try await fixture.token(exp: soon)))
        fixture.hub.clock.wall = soon
        let actions = fixture.hub.send(1, #"{"type":"select","letter":"A","ref":"late"}"#)
        #expect(Self.closes(actions).map(\.code) == [4401])
        fixture.hub.hold()
        #expect(fixture.hub.inFlight.isEmpty)
    }

    @Test func aReadOnlyMemberDoesNotDealTheFirstGameOfAnUnplayedTable() async throws {
        var fixture = try await Fixture.make()
        fixture.hub.join(1, board: "set/t")
        fixture.hub.send(1, Self.authFrame(try await fixture.token(sub: "cy", boards: ["set/*": "read"])))
        fixture.hub.hold()
        #expect(fixture.hub.inFlight.isEmpty)
        fixture.hub.join(2, board: "set/t")
        fixture.hub.send(2, Self.authFrame(try await fixture.token(sub: "ana", boards: ["set/*": "write"])))
        fixture.hub.hold()
        #expect(fixture.hub.inFlight.count == 1)
    }

    @Test func aBinaryFirstFrameClosesWith4401() async throws {
        var fixture = try await Fixture.make()
        fixture.hub.join(1)
        #expect(Self.closes(fixture.hub.handle(.binary(connection: 1))).map(\.code) == [4401])
    }

    @Test func anotherTokensHolderCannotTakeOverAReplicaId() async throws {
        var fixture = try await Fixture.make()
        fixture.hub.join(1)
        fixture.hub.send(1, Self.authFrame(try await fixture.token(sub: "ana")))
        fixture.hub.send(1, #"{"type":"hello","replica":77,"name":"ana","sent":0}"#)
        fixture.hub.join(2)
        fixture.hub.send(2, Self.authFrame(try await fixture.token(sub: "bo")))
        let taken = HubCoreHarness.frames(fixture.hub.send(2, #"{"type":"hello","replica":77,"name":"bo","sent":0}"#), to: 2)
        #expect(taken.first?["code"] as? String == "not_your_replica")
        let own = HubCoreHarness.frames(fixture.hub.send(2, #"{"type":"hello","replica":78,"name":"bo","sent":0}"#), to: 2)
        #expect(own.first?["type"] as? String == "sync")
    }
}
