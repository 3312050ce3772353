/// Why a token was refused: a stable `code` for logs, metrics and tests,
/// and a `message` short enough for a WebSocket close reason (at most 123
/// bytes). Neither ever holds the token, and nothing in them is copied from
/// the token unchecked, so both may be logged.
///
/// Every refusal means "not authenticated": HTTP 401 before the upgrade, or
/// close code 4401 after it. A valid token without a role on the board is
/// not a refusal of the token (`Grant.role(for:)` is nil: 403 / 4403).
enum TokenRefusal: Error, Equatable, Sendable {
    /// No token, or an empty one.
    case missing
    /// Not a compact JWT whose header and claims are JSON of the right types.
    case malformed(String)
    /// `alg: none`: a token anybody can make.
    case unsigned
    /// The header's `kid` names no configured key.
    case unknownKey(kid: String)
    /// The header's `alg` is not the algorithm of the key that would verify
    /// it (an HS256 token against a public key, say), or no key has it.
    case wrongAlgorithm(String)
    /// The signature does not match any candidate key.
    case badSignature
    /// `exp` has passed.
    case expired
    /// `nbf` is more than the leeway ahead.
    case notYetValid
    /// `iat` is more than the leeway ahead.
    case issuedInFuture
    /// `aud` does not hold "synchub".
    case wrongAudience
    /// A required claim is absent.
    case missingClaim(String)
    /// A claim is present but not acceptable.
    case badClaim(String)
    /// An operator revoked it (O6: its `jti`, or its `sub`'s tokens issued before then).
    case revoked

    /// A stable, machine-readable name for this kind of refusal.
    var code: String {
        switch self {
        case .missing: "missing_token"
        case .malformed: "malformed_token"
        case .unsigned: "unsigned_token"
        case .unknownKey: "unknown_kid"
        case .wrongAlgorithm: "wrong_algorithm"
        case .badSignature: "bad_signature"
        case .expired: "token_expired"
        case .notYetValid: "token_not_yet_valid"
        case .issuedInFuture: "issued_in_future"
        case .wrongAudience: "wrong_audience"
        case .missingClaim: "missing_claim"
        case .badClaim: "bad_claim"
        case .revoked: "token_revoked"
        }
    }

    /// A sentence for the close reason, the HTTP body and the log.
    var message: String {
        switch self {
        case .missing: "no token presented"
        case .malformed(let why): "malformed token: \(why)"
        case .unsigned: "unsigned token (alg none) refused"
        case .unknownKey(let kid): "token names key '\(kid)', which this hub does not have"
        case .wrongAlgorithm(let why): "wrong algorithm: \(why)"
        case .badSignature: "bad token signature"
        case .expired: "token expired"
        case .notYetValid: "token not yet valid (nbf is in the future)"
        case .issuedInFuture: "token issued in the future (iat is ahead of the hub's clock)"
        case .wrongAudience: "token not meant for this hub (aud must be \"synchub\")"
        case .missingClaim(let claim): "token lacks the \(claim) claim"
        case .badClaim(let why): "bad claim: \(why)"
        case .revoked: "token revoked"
        }
    }

    /// The WebSocket close code for a refusal after the upgrade.
    var closeCode: UInt16 { 4401 }
    /// The HTTP status for a refusal before the upgrade.
    var httpStatus: UInt32 { 401 }

    /// `text` made safe to show in a message: at most 32 characters of
    /// `A-Z a-z 0-9 . _ -`, anything else replaced by `?`.
    static func shown(_ text: String) -> String {
        let safe = text.unicodeScalars.prefix(32).map { scalar -> Character in
            switch scalar {
            case "A"..."Z", "a"..."z", "0"..."9", ".", "_", "-": Character(scalar)
            default: "?"
            }
        }
        return String(safe) + (text.unicodeScalars.count > 32 ? "..." : "")
    }
}
