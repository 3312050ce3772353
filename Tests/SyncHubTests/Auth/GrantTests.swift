import Foundation
import Testing
@testable import SyncHub

/// A4: which role a token's `boards` claim gives on a board.
struct GrantTests {
    static func grant(_ boards: [String: String]) throws -> Grant {
        let patterns = try TokenClaims.patterns(from: boards).get()
        return Grant(sub: "ana", displayName: "ana", expiry: AuthFixtures.now, patterns: patterns)
    }

    @Test func exactPatternMatchesOnlyItsBoard() throws {
        let grant = try Self.grant(["boards/lobby": "write"])
        #expect(grant.role(for: "boards/lobby") == .write)
        #expect(grant.role(for: "boards/lobby2") == nil)
        #expect(grant.role(for: "boards/lob") == nil)
        #expect(grant.role(for: "set/lobby") == nil)
    }

    @Test func kindWildcardMatchesEveryBoardOfTheKind() throws {
        let grant = try Self.grant(["set/*": "read"])
        #expect(grant.role(for: "set/kitchen") == .read)
        #expect(grant.role(for: "set/a") == .read)
        #expect(grant.role(for: "todo/kitchen") == nil)
        #expect(grant.role(for: "settings/x") == nil)
    }

    @Test func starAloneMatchesEveryBoard() throws {
        let grant = try Self.grant(["*": "read"])
        for path in ["boards/x", "set/y", "todo/z", "stock/w"] { #expect(grant.role(for: path) == .read) }
    }

    @Test func longestMatchingPatternWinsEvenWhenNarrower() throws {
        let grant = try Self.grant(["*": "read", "set/*": "write", "set/kitchen": "read", "set/kit*": "write"])
        #expect(grant.role(for: "set/kitchen") == .read)
        #expect(grant.role(for: "set/kite") == .write)
        #expect(grant.role(for: "set/hall") == .write)
        #expect(grant.role(for: "todo/hall") == .read)
    }

    @Test func exactBeatsWildcardOfTheSameLiteral() throws {
        let grant = try Self.grant(["set/kitchen*": "write", "set/kitchen": "read"])
        #expect(grant.role(for: "set/kitchen") == .read)
        #expect(grant.role(for: "set/kitchen2") == .write)
    }

    @Test func readAndWriteAreOrdered() throws {
        #expect(BoardRole.read < .write)
        let grant = try Self.grant(["boards/a": "read", "boards/b": "write"])
        #expect(grant.role(for: "boards/a") == .read)
        #expect(grant.role(for: "boards/b") == .write)
        #expect(grant.role(for: "boards/c") == nil)
    }

    @Test func addressIsMatchedByItsURLPath() throws {
        let grant = try Self.grant(["boards/lobby": "write", "set/*": "read"])
        #expect(grant.role(for: BoardAddress(kind: "letters", name: "lobby")) == .write)
        #expect(grant.role(for: BoardAddress(kind: "set", name: "t1")) == .read)
        #expect(grant.role(for: BoardAddress(kind: "letters", name: "other")) == nil)
        #expect(grant.role(for: BoardAddress(kind: "nosuchkind", name: "lobby")) == nil)
    }

    @Test func badPatternsAreRefused() {
        for pattern in ["", "set/*x", "*/*", "set/a b", "set/\n", String(repeating: "a", count: BoardPattern.maxLength + 1)] {
            if case .success = BoardPattern.parse(pattern, role: .read) { Issue.record("accepted \(pattern.debugDescription)") }
        }
        for pattern in ["*", "set/*", "boards/lobby", "set/kit*"] {
            if case .failure(let problem) = BoardPattern.parse(pattern, role: .read) { Issue.record("\(pattern): \(problem.message)") }
        }
    }
}
