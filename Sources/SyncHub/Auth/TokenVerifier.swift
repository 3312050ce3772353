import Foundation
import JWTKit
import Synchronization

/// Checks a compact JWT against the hub's keys and turns it into a `Grant`
/// (A3, A4), synchronously: the hub calls it on its libwebsockets service
/// thread, inside the callback that decides an upgrade.
///
/// Everything JWT is jwt-kit's: `DefaultJWTParser` splits the token and
/// decodes its header, claims and signature, and the key's own
/// `JWTAlgorithm` (held by the `KeyRing`) checks the signature. Both are
/// synchronous; only `JWTKeyCollection`, an actor, is not, and it is used
/// only to build the ring. The algorithm is always the key's: the header's
/// `alg` must equal it, never chooses it.
///
/// Recently verified tokens are remembered (`VerifiedTokens`), so a client
/// reconnecting with the same token costs a dictionary lookup; expiry is
/// checked again on every call.
final class TokenVerifier: Sendable {
    /// Longest token looked at, in bytes (a hub token is a few hundred).
    static let maxTokenBytes = 8192

    let keys: KeyRing
    private let parser = DefaultJWTParser()
    private let verified: VerifiedTokens

    init(keys: KeyRing, rememberedTokens: Int = 1024) {
        self.keys = keys
        verified = VerifiedTokens(capacity: rememberedTokens)
    }

    /// The grant `token` makes at `now`, or why it makes none.
    func verify(_ token: String, now: Date) throws(TokenRefusal) -> Grant {
        if token.isEmpty { throw .missing }
        if token.utf8.count > Self.maxTokenBytes { throw .malformed("longer than \(Self.maxTokenBytes) bytes") }
        if let remembered = verified.lookup(token) {
            if let refusal = remembered.refusal(at: now) { throw refusal }
            return remembered.grant
        }
        let bytes = Array(token.utf8)
        let remembered = try check(bytes, now: now)
        verified.insert(token, remembered)
        return remembered.grant
    }

    private func check(_ bytes: [UInt8], now: Date) throws(TokenRefusal) -> VerifiedTokens.Entry {
        let payloadEnd: Int
        let parsed: (header: JWTHeader, payload: TokenClaims, signature: Data)
        do {
            payloadEnd = try parser.getTokenParts(bytes).payload.endIndex
        } catch {
            throw .malformed("not three base64url parts separated by dots")
        }
        do {
            parsed = try parser.parse(bytes, as: TokenClaims.self)
        } catch {
            throw .malformed("header or claims are not base64url JSON of the right types")
        }
        let header = parsed.header
        if let critical = header.crit, !critical.isEmpty {
            throw .malformed("critical header extensions are not supported")
        }
        guard let alg = header.alg, !alg.isEmpty else { throw .malformed("header has no alg") }
        if alg.lowercased() == "none" { throw .unsigned }

        let candidates: [KeyRing.Key]
        if let kid = header.kid {
            guard let key = keys.key(kid: kid) else { throw .unknownKey(kid: TokenRefusal.shown(kid)) }
            guard key.algorithmName == alg else {
                throw .wrongAlgorithm("key '\(key.kid)' is \(key.algorithmName), the token says \(TokenRefusal.shown(alg))")
            }
            candidates = [key]
        } else {
            candidates = keys.keys(forAlgorithm: alg)
            if candidates.isEmpty {
                throw .wrongAlgorithm("no \(TokenRefusal.shown(alg)) key here (this hub has \(keys.algorithmNames))")
            }
        }

        // What the signature covers is `header.payload`: the token up to the
        // end of the payload part jwt-kit found.
        let signingInput = bytes[..<payloadEnd]
        var signer: KeyRing.Key?
        for key in candidates where (try? key.algorithm.verify(parsed.signature, signs: signingInput)) == true {
            signer = key
            break
        }
        guard let signer else { throw .badSignature }

        let claims = parsed.payload
        let grant = try claims.grant(at: now).get()
        let validFrom = [claims.nbf?.value, claims.iat?.value].compactMap { $0 }.max()
            .map { $0.addingTimeInterval(-TokenClaims.leeway) }
        return VerifiedTokens.Entry(grant: grant, validFrom: validFrom, kid: signer.kid)
    }
}

/// A bounded memory of tokens whose signature and claims have been checked,
/// keyed by the whole token (equal text, equal bytes signed, equal claims;
/// the keys never change for a verifier). Only successes are kept; the
/// oldest entry leaves first once `capacity` is reached.
final class VerifiedTokens: Sendable {
    /// What a verified token gave, and the time window it holds in.
    struct Entry: Sendable {
        var grant: Grant
        /// Before this (nbf or iat, less the leeway) the token is not valid yet.
        var validFrom: Date?
        /// The key that verified it.
        var kid: String

        func refusal(at now: Date) -> TokenRefusal? {
            if grant.hasExpired(at: now) { return .expired }
            if let validFrom, now < validFrom { return .notYetValid }
            return nil
        }
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Insertion order, a ring of `capacity` slots.
        var order: [String] = []
        var next = 0
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        self.capacity = max(capacity, 0)
    }

    var count: Int { state.withLock { $0.entries.count } }

    func lookup(_ token: String) -> Entry? {
        state.withLock { $0.entries[token] }
    }

    func insert(_ token: String, _ entry: Entry) {
        guard capacity > 0 else { return }
        state.withLock { state in
            if state.entries.updateValue(entry, forKey: token) != nil { return }
            if state.order.count < capacity {
                state.order.append(token)
            } else {
                state.entries.removeValue(forKey: state.order[state.next])
                state.order[state.next] = token
                state.next = (state.next + 1) % capacity
            }
        }
    }
}
