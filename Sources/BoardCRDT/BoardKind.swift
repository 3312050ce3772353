/// The sequential rules of one kind of board. The engine (`Replica`) knows
/// nothing of letters: it orders operations and replays them through these
/// rules. Each kind is one type conforming to this protocol, in
/// `Kinds/NAME/`: the letter board (`LetterBoard`), the Set table
/// (`SetTable`), the juice bar's fruit stock (`FruitStock`) and the
/// reminders list (`TodoList`).
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
    associatedtype Refusal: KindRefusal

    /// The kind's name on the wire and in the store ("letters", "set").
    static var name: String { get }

    static var initialState: State { get }

    /// Checks `intent`, made by `author` (a display name; "" when the kind
    /// does not care), against the local state. Returns the change to
    /// record, `nil` when it would change nothing (an idempotent retry), or
    /// throws when the person must be told no. May draw randomness (a
    /// shuffle's seed): whatever it draws goes into the change, so `apply`
    /// replays it and never draws (every replica deals the same deck).
    static func prepare(_ intent: Intent, by author: String, in state: State) throws(Refusal) -> Change?

    /// Applies `operation` at its place in the total order. Rules that depend
    /// on who acts read `operation.author`. Must accept every change in every
    /// state (never trap) and be deterministic: what cannot take effect any
    /// more is `.unchanged` or `.refused`. Returns `.applied` exactly when the
    /// state changed, including what people do not see but later changes
    /// depend on (a reminder moved across a deleted one's hidden place); the
    /// hub's `version` counts those. A
    /// refusal changes nothing shown, though a kind may clear bookkeeping of
    /// what its author last saw (the Set table's `Player.lost`, SC2).
    static func apply(_ operation: Operation<Change>, to state: inout State) -> Outcome<Refusal>

    /// Every broken invariant of `state` (empty when all hold): the tests and
    /// the fuzzers check it after every step.
    static func violations(of state: State) -> [String]

    /// What applying `operation` at the end of the total order, to `state`,
    /// does to someone else's acknowledged change that they would not see
    /// for themselves (a to-do edit overwriting theirs, TC2). The hub calls
    /// it as each operation becomes durable and tells each `to`.
    static func notices(of operation: Operation<Change>, in state: State) -> [KindNotice]
}

extension BoardKind {
    public static func violations(of state: State) -> [String] { [] }
    public static func notices(of operation: Operation<Change>, in state: State) -> [KindNotice] { [] }
}

/// Something a person is told about their acknowledged change (K9 `notice`).
public struct KindNotice: Equatable, Sendable {
    /// The author to tell (the name their operations carry).
    public var to: String
    /// A stable snake_case code (`overwritten`).
    public var code: String
    /// A sentence for the screen.
    public var message: String
    /// The item concerned, its field and the text it has now (kinds with items).
    public var item: String?
    public var field: String?
    public var text: String?

    public init(to: String, code: String, message: String, item: String? = nil, field: String? = nil, text: String? = nil) {
        self.to = to
        self.code = code
        self.message = message
        self.item = item
        self.field = field
        self.text = text
    }
}

/// A refusal a person can act on: a stable snake_case `code` for the wire and
/// a sentence for the screen.
public protocol KindRefusal: Error, Equatable, Codable, Sendable {
    var code: String { get }
    var message: String { get }
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
