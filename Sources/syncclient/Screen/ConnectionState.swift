/// How this client's link to the hub is doing, as the status bar says it.
enum ConnectionState: Equatable, Sendable {
    case connecting
    case live
    /// Trying again after losing the hub; `attempt` counts from 1.
    case reconnecting(attempt: Int)
    case offline

    /// The words the status bar shows.
    var label: String {
        switch self {
        case .connecting: "connecting..."
        case .live: "live"
        case let .reconnecting(attempt): "reconnecting (try \(attempt))"
        case .offline: "offline"
        }
    }
}
