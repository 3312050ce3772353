import Foundation

/// Tokens an operator revoked (O6, docs/ADMIN.md): one token by its `jti`,
/// or every token of a `sub` issued before a moment. Kept by the store (the
/// embedded one, or Redis for a cluster) and by every hub's core, which
/// refuses such a token and closes the connections that hold one.
struct Revocations: Sendable, Equatable {
    enum Entry: Sendable, Equatable {
        case jti(String)
        /// Every token of `sub` whose `iat` is before `before` (one without `iat` too).
        case sub(String, before: Date)
    }

    private(set) var jtis: Set<String> = []
    private(set) var subsBefore: [String: Date] = [:]

    var isEmpty: Bool { jtis.isEmpty && subsBefore.isEmpty }

    /// Adds `entry`; false when it revokes nothing new.
    @discardableResult
    mutating func add(_ entry: Entry) -> Bool {
        switch entry {
        case let .jti(jti):
            return jtis.insert(jti).inserted
        case let .sub(sub, before):
            guard subsBefore[sub].map({ $0 < before }) ?? true else { return false }
            subsBefore[sub] = before
            return true
        }
    }

    func revokes(_ grant: Grant) -> Bool {
        if let jti = grant.jti, jtis.contains(jti) { return true }
        guard let before = subsBefore[grant.sub] else { return false }
        return (grant.issuedAt ?? .distantPast) < before
    }

    /// How the store keeps an entry: `jti:J` (value 0) or `sub:S` (value:
    /// milliseconds since 1970 of `before`).
    static func field(of entry: Entry) -> (field: String, value: Int64) {
        switch entry {
        case let .jti(jti): ("jti:" + jti, 0)
        case let .sub(sub, before): ("sub:" + sub, Int64((before.timeIntervalSince1970 * 1000).rounded(.down)))
        }
    }

    static func entry(field: String, value: Int64) -> Entry? {
        if field.hasPrefix("jti:") { return .jti(String(field.dropFirst(4))) }
        if field.hasPrefix("sub:") { return .sub(String(field.dropFirst(4)), before: Date(timeIntervalSince1970: Double(value) / 1000)) }
        return nil
    }
}
