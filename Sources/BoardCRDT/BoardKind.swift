/// The sequential rules of one kind of board. The engine (`Replica`) knows
/// nothing of letters: it orders operations and replays them through these
/// rules. The letter board is the first kind; a to-do list or a stock of
/// fruit would be others, each one type conforming to this protocol.
public protocol BoardKind {
    /// The shared state every replica converges to.
    associatedtype State: Equatable & Codable & Sendable
    /// What a person asks for, phrased against what they see.
    associatedtype Intent: Equatable & Sendable
    /// What travels in an operation: an intent resolved against the sender's
    /// state, carrying enough context (for example the neighbour a tile was
    /// dropped beside) to keep its meaning when replayed after concurrent ones.
    associatedtype Change: Equatable & Codable & Sendable
    /// Why an intent or change is refused, with a message a person can act on.
    associatedtype Refusal: Error & Equatable & Codable & Sendable

    static var initialState: State { get }

    /// Checks `intent` against the local state. Returns the change to record,
    /// `nil` when it would change nothing (an idempotent retry), or throws when
    /// the person must be told no.
    static func prepare(_ intent: Intent, in state: State) throws(Refusal) -> Change?

    /// Applies `change` at its place in the total order. Must accept every
    /// change in every state (never trap): what cannot take effect any more is
    /// `.unchanged` or `.refused`.
    static func apply(_ change: Change, id: OperationID, to state: inout State) -> Outcome<Refusal>
}

/// What an operation did when replayed in the total order.
public enum Outcome<Refusal: Equatable & Sendable>: Equatable, Sendable {
    case applied
    case unchanged
    case refused(Refusal)

    public var isRefused: Bool {
        if case .refused = self { return true }
        return false
    }
}
