import Foundation
import JWTKit

/// The claims of a hub token as jwt-kit decodes them. Every claim is
/// optional here so that a missing one is reported by name after the
/// signature has been checked (`grant(at:)`), not as a decoding failure.
/// A claim of the wrong JSON type fails decoding (a malformed token).
struct TokenClaims: JWTPayload, Equatable {
    /// The audience every hub token must name.
    static let audience = "synchub"
    /// How far `nbf` and `iat` may be ahead of the hub's clock.
    static let leeway: TimeInterval = 60
    static let maxSubLength = 64
    static let maxNameLength = 32
    /// Most entries a `boards` claim may hold.
    static let maxPatterns = 256

    var sub: SubjectClaim?
    var name: String?
    var exp: ExpirationClaim?
    var nbf: NotBeforeClaim?
    var iat: IssuedAtClaim?
    var aud: AudienceClaim?
    var boards: [String: String]?
    /// The token's id (O6: a revocation can name it); `synchub token` sets one.
    var jti: IDClaim?

    /// jwt-kit's own check, used only when these claims go through
    /// `JWTKeyCollection.verify` (tests, tools). The hub calls `grant(at:)`
    /// with the clock it was given.
    func verify(using algorithm: some JWTAlgorithm) async throws {
        _ = try grant(at: Date()).get()
    }

    /// The grant these claims make at `now`, or why they make none (A4).
    func grant(at now: Date) -> Result<Grant, TokenRefusal> {
        guard let aud else { return .failure(.missingClaim("aud")) }
        guard aud.value.contains(Self.audience) else { return .failure(.wrongAudience) }
        guard let exp else { return .failure(.missingClaim("exp")) }
        guard now < exp.value else { return .failure(.expired) }
        if let nbf, nbf.value > now.addingTimeInterval(Self.leeway) { return .failure(.notYetValid) }
        if let iat, iat.value > now.addingTimeInterval(Self.leeway) { return .failure(.issuedInFuture) }
        guard let sub = sub?.value else { return .failure(.missingClaim("sub")) }
        if let problem = Self.problem(withSub: sub) { return .failure(.badClaim(problem)) }
        if let name, let problem = Self.problem(withName: name) { return .failure(.badClaim(problem)) }
        guard let boards else { return .failure(.missingClaim("boards")) }
        switch Self.patterns(from: boards) {
        case .success(let patterns):
            return .success(Grant(sub: sub, displayName: name ?? sub, expiry: exp.value, patterns: patterns, jti: jti?.value,
                                  issuedAt: iat?.value))
        case .failure(let problem):
            return .failure(.badClaim(problem.message))
        }
    }

    /// Why `sub` is not acceptable, or nil.
    static func problem(withSub sub: String) -> String? {
        if sub.isEmpty || sub.count > maxSubLength { return "sub must be 1-\(maxSubLength) characters" }
        if hasControlCharacter(sub) { return "sub holds a line break, control or invisible formatting character" }
        return nil
    }

    /// Why `name` is not acceptable, or nil.
    static func problem(withName name: String) -> String? {
        if name.isEmpty || name.count > maxNameLength { return "name must be 1-\(maxNameLength) characters" }
        if hasControlCharacter(name) { return "name holds a line break, control or invisible formatting character" }
        return nil
    }

    /// The `boards` claim as patterns, or the first problem with it.
    static func patterns(from boards: [String: String]) -> Result<[BoardPattern], PatternProblem> {
        guard boards.count <= maxPatterns else { return .failure(PatternProblem("boards holds more than \(maxPatterns) patterns")) }
        var patterns: [BoardPattern] = []
        patterns.reserveCapacity(boards.count)
        for (text, roleName) in boards {
            guard let role = BoardRole(rawValue: roleName) else {
                return .failure(PatternProblem("a board's role must be \"read\", \"write\" or \"admin\""))
            }
            switch BoardPattern.parse(text, role: role) {
            case .success(let pattern): patterns.append(pattern)
            case .failure(let problem): return .failure(problem)
            }
        }
        return .success(patterns)
    }

    private static func hasControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator, .format: true
            default: false
            }
        }
    }
}
