import Foundation

/// Who may use the operator's console (O1, docs/ADMIN.md): a token that
/// gives `admin` on the pattern `*`, as `Authorization: Bearer`; on an open
/// hub, only a caller on a loopback address. Pure: the shell hands it the
/// request's parts and the verifier's verdict.
enum AdminAccess: Equatable {
    case allowed(sub: String)
    case refused(status: UInt32, code: String, message: String)

    /// `verifier`: the hub's token check (nil on an open hub).
    /// `forwardedFor`: the `X-Forwarded-For` a proxy in front added: the
    /// caller is the first address there, not the proxy's.
    static func decide(bearer: String?, queryNames: [String], peer: String, forwardedFor: String? = nil, verifier: TokenVerifier?,
                       now: Date, revocations: Revocations = Revocations()) -> AdminAccess {
        if queryNames.contains("token") || queryNames.contains("access_token") {
            return .refused(status: 400, code: "bad_request",
                            message: "a token in the URL is refused (it ends up in logs); send Authorization: Bearer")
        }
        guard let verifier else {
            let caller = forwardedFor.map { String($0.split(separator: ",").first ?? "").trimmingCharacters(in: .whitespaces) } ?? peer
            return isLoopback(peer) && isLoopback(caller) ? .allowed(sub: "")
                : .refused(status: 403, code: "forbidden", message: "this hub has no keys: its console answers only on a loopback address")
        }
        guard let bearer else {
            return .refused(status: 401, code: "unauthorized", message: "send Authorization: Bearer <a token with \"*\": \"admin\">")
        }
        do throws(TokenRefusal) {
            let grant = try verifier.verify(bearer, now: now)
            if revocations.revokes(grant) { throw TokenRefusal.revoked }
            guard grant.patterns.contains(where: { $0.text == "*" && $0.role == .admin }) else {
                return .refused(status: 403, code: "forbidden", message: "this token is not admin on \"*\"")
            }
            return .allowed(sub: grant.sub)
        } catch {
            return .refused(status: 401, code: "unauthorized", message: error.reason)
        }
    }

    /// 127.0.0.0/8, ::1, and IPv4 loopback written as IPv6 (`::ffff:127.x`).
    static func isLoopback(_ address: String) -> Bool {
        address == "::1" || address.hasPrefix("127.") || address.hasPrefix("::ffff:127.")
    }
}
