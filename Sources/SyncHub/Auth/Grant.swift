import Foundation

/// What a token lets its holder do on one board. `write` includes `read`;
/// `admin` includes `write` (A13).
enum BoardRole: String, Sendable, Comparable, CaseIterable {
    /// Sees the board (its state, presence), changes nothing.
    case read
    /// Also changes it.
    case write
    /// Also what a kind reserves for its staff (the shop's catalog, images).
    case admin

    private var rank: Int { BoardRole.allCases.firstIndex(of: self) ?? 0 }
    static func < (lhs: BoardRole, rhs: BoardRole) -> Bool { lhs.rank < rhs.rank }
}

/// A verified token, reduced to what the hub acts on: who, the name others
/// see, until when, and which boards it may read or write.
struct Grant: Sendable, Equatable {
    /// The token's `sub`: who holds it (1-64 characters).
    var sub: String
    /// The token's `name`, or `sub` when it has none: what presence, players
    /// and authors show. A client cannot choose another.
    var displayName: String
    /// The token's `exp`: the hub closes the connection then unless a newer
    /// token has arrived.
    var expiry: Date
    /// The `boards` claim, most specific first (see `BoardPattern`).
    var patterns: [BoardPattern]

    /// The token's `jti` and `iat`, when it has them (O6: what a revocation names).
    var jti: String?
    var issuedAt: Date?

    init(sub: String, displayName: String, expiry: Date, patterns: [BoardPattern], jti: String? = nil, issuedAt: Date? = nil) {
        self.jti = jti
        self.issuedAt = issuedAt
        self.sub = sub
        self.displayName = displayName
        self.expiry = expiry
        self.patterns = patterns.sorted { $0.isMoreSpecific(than: $1) }
    }

    /// The role on the board at `path` (`boards/NAME`, `set/NAME`,
    /// `todo/NAME`, `stock/NAME`: the board's URL path without its leading
    /// `/`), or nil when no pattern matches. The most specific matching
    /// pattern decides, also when it grants less than a broader one.
    func role(for path: some StringProtocol) -> BoardRole? {
        patterns.first { $0.matches(path) }?.role
    }

    /// The role on the board at `address`.
    func role(for address: BoardAddress) -> BoardRole? {
        guard let kind = HostedKinds.kind(named: address.kind) else { return nil }
        return role(for: kind.pathSegment + "/" + address.name)
    }

    /// Whether the grant has run out at `now` (`exp` has no leeway).
    func hasExpired(at now: Date) -> Bool { now >= expiry }
}

/// One entry of a token's `boards` claim: a board path (`set/kitchen`) or a
/// prefix ending in `*` (`set/*`, `*`), and the role it gives.
///
/// The longest matching pattern wins. Length is that of the literal part
/// (without the `*`), and at equal length an exact pattern beats a
/// wildcard, so `set/kitchen` is more specific than `set/kitchen*`, which
/// is more specific than `set/*`.
struct BoardPattern: Sendable, Equatable, CustomStringConvertible {
    /// The pattern as the token spells it.
    let text: String
    let role: BoardRole
    /// The text before a trailing `*`, or all of it for an exact pattern.
    let literal: Substring
    let isWildcard: Bool

    /// Longest pattern accepted, in bytes: a kind, a slash and a 64-byte name fit well inside.
    static let maxLength = 128

    /// A pattern, or why `text` is not one (a sentence for the close reason).
    static func parse(_ text: String, role: BoardRole) -> Result<BoardPattern, PatternProblem> {
        if text.isEmpty { return .failure(PatternProblem("a board pattern is empty")) }
        if text.utf8.count > maxLength {
            return .failure(PatternProblem("a board pattern is longer than \(maxLength) bytes"))
        }
        let stars = text.utf8.filter { $0 == UInt8(ascii: "*") }.count
        if stars > 1 || (stars == 1 && text.last != "*") {
            return .failure(PatternProblem("a board pattern may hold one '*', only at its end"))
        }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == " " }) {
            return .failure(PatternProblem("a board pattern holds a space or a control character"))
        }
        return .success(BoardPattern(text: text, role: role))
    }

    private init(text: String, role: BoardRole) {
        self.text = text
        self.role = role
        isWildcard = text.hasSuffix("*")
        literal = isWildcard ? text.dropLast() : text[...]
    }

    func matches(_ path: some StringProtocol) -> Bool {
        isWildcard ? path.utf8.starts(with: literal.utf8) : path.utf8.elementsEqual(literal.utf8)
    }

    func isMoreSpecific(than other: BoardPattern) -> Bool {
        let mine = literal.utf8.count, theirs = other.literal.utf8.count
        if mine != theirs { return mine > theirs }
        if isWildcard != other.isWildcard { return !isWildcard }
        return text < other.text
    }

    var description: String { "\(text)=\(role.rawValue)" }
}

/// Why a board pattern is refused.
struct PatternProblem: Error, Equatable, Sendable {
    var message: String
    init(_ message: String) { self.message = message }
}
