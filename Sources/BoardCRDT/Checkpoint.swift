/// The compacted prefix of a board's history: the state after replaying every
/// operation stamped at or before `frontier`, and which operations those were.
/// Replicas keep one checkpoint plus the operations after it, so memory and
/// catch-up cost do not grow with the number of operations ever applied.
public struct Checkpoint<Kind: BoardKind>: Equatable, Codable, Sendable {
    public var state: Kind.State
    public var frontier: Stamp
    public var versions: VersionVector
    /// Every operation of a replica forgotten from `versions` is stamped at
    /// or before this (see `Replica.forgetReplicas`); `.origin` when none was.
    public var forgetHorizon: Stamp

    public init(state: Kind.State, frontier: Stamp, versions: VersionVector, forgetHorizon: Stamp = .origin) {
        self.state = state
        self.frontier = frontier
        self.versions = versions
        self.forgetHorizon = forgetHorizon
    }

    public static var empty: Checkpoint { Checkpoint(state: Kind.initialState, frontier: .origin, versions: VersionVector()) }
}

extension Checkpoint {
    private enum Key: String, CodingKey { case state, frontier, versions, forgetHorizon }

    /// Refuses a frontier whose Lamport time a replica could not count on
    /// from without overflowing (the same bound `receive` applies).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        state = try container.decode(Kind.State.self, forKey: .state)
        frontier = try container.decode(Stamp.self, forKey: .frontier)
        versions = try container.decode(VersionVector.self, forKey: .versions)
        forgetHorizon = try container.decodeIfPresent(Stamp.self, forKey: .forgetHorizon) ?? .origin
        guard forgetHorizon <= frontier else {
            throw DecodingError.dataCorruptedError(
                forKey: .forgetHorizon, in: container,
                debugDescription: "the forget horizon \(forgetHorizon) is after the frontier \(frontier)")
        }
        guard frontier.lamport <= Replica<Kind>.maxLamport else {
            throw DecodingError.dataCorruptedError(forKey: .frontier, in: container,
                                                   debugDescription: "Lamport time \(frontier.lamport) is beyond 2^62")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(state, forKey: .state)
        try container.encode(frontier, forKey: .frontier)
        try container.encode(versions, forKey: .versions)
        if forgetHorizon != .origin { try container.encode(forgetHorizon, forKey: .forgetHorizon) }
    }
}

extension Checkpoint {
    /// Whether `op` is part of this checkpoint. An operation of a replica
    /// forgotten here (no entry, stamped at or before the horizon) is folded;
    /// `own`, the asking replica, is never forgotten while it can ask.
    func folds(_ op: Operation<Kind.Change>, of own: ReplicaID) -> Bool {
        if versions.covers(op.id) { return true }
        return op.id.replica != own && versions[op.id.replica] == 0 && op.stamp <= forgetHorizon
    }
}
