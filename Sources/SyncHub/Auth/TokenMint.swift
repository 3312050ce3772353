import Foundation
import JWTKit

/// Makes hub tokens with jwt-kit (A5): for operators, scripts and tests.
/// The hub never signs; it only verifies.
struct TokenMint: Sendable {
    /// A key tokens can be signed with.
    enum SigningKey: Sendable {
        /// HS256 with a secret's raw bytes.
        case secret(HMACKey)
        /// EdDSA with an Ed25519 private key.
        case ed25519(EdDSA.PrivateKey)
        /// ES256 with a P-256 private key.
        case p256(ES256PrivateKey)
    }

    var key: SigningKey
    /// The `kid` header, naming the hub's key file (without extension); nil
    /// leaves it out, and the hub then tries its keys of the same algorithm.
    var kid: String?

    /// The signed compact token for `claims`, with whole seconds for times.
    func sign(_ claims: TokenClaims) async throws -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .integerSecondsSince1970
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let serializer = DefaultJWTSerializer(jsonEncoder: encoder)
        let collection = JWTKeyCollection()
        switch key {
        case .secret(let key): await collection.add(hmac: key, digestAlgorithm: .sha256, serializer: serializer)
        case .ed25519(let key): await collection.add(eddsa: key, serializer: serializer)
        case .p256(let key): await collection.add(ecdsa: key, serializer: serializer)
        }
        var header = JWTHeader()
        if let kid { header.kid = kid }
        return try await collection.sign(claims, header: header)
    }

    /// The claims of a token for `sub`, valid from `now` for `ttl` seconds.
    static func claims(sub: String, name: String?, boards: [String: BoardRole], now: Date, ttl: TimeInterval) -> TokenClaims {
        let issued = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        return TokenClaims(sub: SubjectClaim(value: sub), name: name,
                           exp: ExpirationClaim(value: issued.addingTimeInterval(ttl.rounded(.up))),
                           nbf: nil, iat: IssuedAtClaim(value: issued),
                           aud: AudienceClaim(value: [TokenClaims.audience]),
                           boards: boards.mapValues(\.rawValue),
                           jti: IDClaim(value: String(UInt64.random(in: 1...UInt64.max), radix: 36)))
    }

    /// A private key in PEM: Ed25519 or P-256.
    static func privateKey(file: String, option: String) throws(KeyLoadError) -> SigningKey {
        let pem = String(decoding: try KeySource.read(file, option: option), as: UTF8.self)
        if let key = try? EdDSA.PrivateKey(pem: pem) { return .ed25519(key) }
        if let key = try? ES256PrivateKey(pem: pem) { return .p256(key) }
        throw KeyLoadError(file: file, option: option,
                           problem: "is not an Ed25519 or P-256 private key in PEM (openssl genpkey -algorithm ed25519 makes one)")
    }

    /// Seconds in a duration written `90`, `90s`, `30m`, `12h` or `7d`, or nil.
    static func seconds(in duration: String) -> TimeInterval? {
        let units: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        var digits = Substring(duration)
        var unit: TimeInterval = 1
        if let last = duration.last, let scale = units[last] {
            unit = scale
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let count = UInt32(digits), count > 0 else { return nil }
        return TimeInterval(count) * unit
    }
}
