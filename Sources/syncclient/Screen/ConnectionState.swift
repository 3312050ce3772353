/// How this client's link to the hub is doing, as the status bar says it.
enum ConnectionState: Equatable, Sendable {
    case connecting
    case live
    /// Trying again after losing the hub; `attempt` counts from 1.
    case reconnecting(attempt: Int)
    /// An operator closed this connection (4409, O5): back on its own after 30 s.
    case putOut
    case offline
    /// The hub refused this client's token (A8); final, no more tries.
    case refused(String)

    /// The words the status bar shows.
    var label: String {
        switch self {
        case .connecting: "connecting..."
        case .live: "live"
        case let .reconnecting(attempt): "reconnecting (try \(attempt))"
        case .putOut: "Put out by an operator; back in about 30 s"
        case .offline: "offline"
        case let .refused(reason): "Not allowed: \(reason)"
        }
    }
}
