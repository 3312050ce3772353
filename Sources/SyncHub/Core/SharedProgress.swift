import BoardCRDT

/// What a board held in cluster mode keeps about its shared log
/// (`Sequencing.shared`): how far this hub applied it, the proposals of its
/// own clients still waiting, and the other hubs' connections.
struct SharedProgress {
    /// The offset of the last entry applied (0: none).
    var applied: UInt64 = 0
    /// The history the offsets belong to; a different one means the log was
    /// lost and rebuilt (the board is reloaded).
    var epoch = ""
    /// This hub's proposals on the board, by number.
    var proposals: [UInt64: PendingProposal] = [:]
    /// The offset of the last fold this hub offered.
    var foldOffered: UInt64 = 0
    /// First answers of keyed entries applied since the last fold this hub
    /// knows of, so a fold can write them down before the entries go.
    var answersSinceFold: [(offset: UInt64, key: String, answer: KeyedAnswer)] = []
    /// Connections and names on the other hubs (presence, R4).
    var remoteClients = 0
    var remoteNames: [String] = []
    /// The engine's checkpoint frontier after the last entry (a change means it compacted).
    var frontier = Stamp.origin
    /// The last two hubs whose entries changed the board, newest first, with
    /// the offset of their last such entry: a no-op judged by one hub at
    /// offset B still holds unless another hub changed the board after B.
    var recentChangers: [(hub: String, offset: UInt64)] = []

    /// Keys whose last use was a no-op another hub's change made untrue
    /// (no answer): a resend may supersede that entry (`SharedProposal.supersedes`).
    var staleNoops: [String: UInt64] = [:]

    mutating func noteChange(by hub: String, at offset: UInt64) {
        recentChangers.removeAll { $0.hub == hub }
        recentChangers.insert((hub, offset), at: 0)
        if recentChangers.count > 2 { recentChangers.removeLast(recentChangers.count - 2) }
    }
}

/// A proposal of one of this hub's connections.
struct PendingProposal {
    var connection: UInt64
    var ref: String?
    /// Answered `unavailable` when the log has not confirmed it by then.
    var deadline: UInt64
    /// A replica client's operations (its answer carries `have`), or nil for a thin intent.
    var replica: ReplicaID?
    var key: String?
    /// The hub's opening (no connection waits).
    var isOpening = false
    /// The log confirmed the append (and, with --redis-wait, its replicas).
    var confirmed = false
    /// Where the log put it, once confirmed.
    var offset: UInt64?
    /// The answer, known once the entry was applied; sent once confirmed too.
    var reply: String?
    /// A no-op's intent (`Kind.Intent`), checked again when another hub's
    /// change made its "nothing to change" untrue.
    var intent: (any Sendable)?
    /// What was appended, to append it again superseding a stale no-op.
    var body = ""
    var logKey: String?
    var owner: (replica: ReplicaID, sub: String)?
    /// The log said the key was used by an entry ahead of this hub: answered
    /// when that entry's answer is applied (or `unavailable` at the deadline).
    var awaitsKey = false
}

/// This hub's thin changes proposed and not yet applied, so the next
/// intent of the same clients is checked with them in (kind-free: the
/// room casts them back).
struct Speculation {
    var changes: [(number: UInt64, author: String, change: any Sendable)] = []
    /// The applied state with `changes` on top; nil when it must be rebuilt.
    var state: (any Sendable)?
}
