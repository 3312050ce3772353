import Foundation

/// Who may use the operator's console (O1, docs/ADMIN.md): a token that
/// gives `admin` on the pattern `*`, as `Authorization: Bearer`; on an open
/// hub, only a caller on a loopback address. Pure: the shell hands it the
/// request's parts and the verifier's verdict.
enum AdminAccess: Equatable {
    case allowed(sub: String)
    case refused(status: UInt32, code: String, message: String)

    /// `verifier`: the hub's token check (nil on an open hub).
    /// On an open hub the caller must be on loopback, which a proxy in front
    /// hides (`proxied`: the request carries X-Forwarded-For: refused, a
    /// hub behind a proxy needs keys), and it must ask for a loopback host
    /// (`host`: a page of another site that rebound its name to 127.0.0.1
    /// asks for its own name).
    static func decide(bearer: String?, queryNames: [String], peer: String, proxied: Bool = false, host: String? = nil,
                       verifier: TokenVerifier?, now: Date, revocations: Revocations = Revocations()) -> AdminAccess {
        if queryNames.contains("token") || queryNames.contains("access_token") {
            return .refused(status: 400, code: "bad_request",
                            message: "a token in the URL is refused (it ends up in logs); send Authorization: Bearer")
        }
        guard let verifier else {
            guard isLoopback(peer), !proxied else {
                return .refused(status: 403, code: "forbidden",
                                message: "this hub has no keys: its console answers only to a caller on its own machine, " +
                                         "not through a proxy")
            }
            guard isLoopbackHost(host) else {
                return .refused(status: 403, code: "forbidden",
                                message: "this hub has no keys: its console answers only at localhost or 127.0.0.1")
            }
            return .allowed(sub: "")
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

    /// `localhost`, `127.x.x.x` or `[::1]`, with or without a port (no Host: HTTP/1.0, taken).
    static func isLoopbackHost(_ host: String?) -> Bool {
        guard let host = host?.lowercased() else { return true }
        let name = host.hasPrefix("[") ? String(host.prefix { $0 != "]" }.dropFirst()) : String(host.split(separator: ":").first ?? "")
        return name == "localhost" || name == "::1" || name.hasPrefix("127.")
    }

    /// 127.0.0.0/8, ::1, and IPv4 loopback written as IPv6 (`::ffff:127.x`).
    static func isLoopback(_ address: String) -> Bool {
        address == "::1" || address.hasPrefix("127.") || address.hasPrefix("::ffff:127.")
    }
}
