import WebSocketLoop

/// The hub said no to this client's token (A8): HTTP 401/403 before the
/// upgrade or close 4401/4403 after it. Final: trying again with the same
/// token cannot help, so one-shots exit 2 and `watch` stops reconnecting.
struct AccessDenial: Equatable, Sendable {
    /// 401, 403, 4401 or 4403.
    var code: Int
    /// The hub's words ("token expired", "no role on this board"), or ours when it gave none.
    var reason: String

    static let codes: Set<Int> = [401, 403, 4401, 4403]

    /// The denial an ended connection carries, if any.
    static func of(refusedStatus: Int?, refusedReason: String, closeCode: Int?, closeReason: String) -> AccessDenial? {
        if let status = refusedStatus, codes.contains(status) {
            return AccessDenial(code: status, reason: refusedReason.isEmpty ? defaultReason(status) : HubWords.printable(refusedReason))
        }
        if let code = closeCode, codes.contains(code) {
            return AccessDenial(code: code, reason: closeReason.isEmpty ? defaultReason(code) : HubWords.printable(closeReason))
        }
        return nil
    }

    static func of(_ connection: ClientConnection) -> AccessDenial? {
        of(refusedStatus: connection.refusedStatus, refusedReason: connection.refusedReason,
           closeCode: connection.closeCode, closeReason: connection.closeReason)
    }

    private static func defaultReason(_ code: Int) -> String {
        code % 1000 == 401 ? "no valid token" : "no role on this board"
    }

    /// One line for a person: `not allowed: token expired (4401)`.
    var message: String { "not allowed: \(reason) (\(code))" }
}
