/// The compacted prefix of a board's history: the state after replaying every
/// operation stamped at or before `frontier`, and which operations those were.
/// Replicas keep one checkpoint plus the operations after it, so memory and
/// catch-up cost do not grow with the number of operations ever applied.
public struct Checkpoint<Kind: BoardKind>: Equatable, Codable, Sendable {
    public var state: Kind.State
    public var frontier: Stamp
    public var versions: VersionVector

    public init(state: Kind.State, frontier: Stamp, versions: VersionVector) {
        self.state = state
        self.frontier = frontier
        self.versions = versions
    }

    public static var empty: Checkpoint { Checkpoint(state: Kind.initialState, frontier: .origin, versions: VersionVector()) }
}
