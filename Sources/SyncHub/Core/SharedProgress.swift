import BoardCRDT
import Synchronization
import SyncWire

/// What a board held in cluster mode keeps about its shared log
/// (`Sequencing.shared`): how far this hub applied it, the proposals of its
/// own clients still waiting, and the other hubs' connections.
struct SharedProgress {
    /// The offset of the last entry applied (0: none).
    var applied: UInt64 = 0
    /// The link of that entry (R15: what the next entry must say it follows).
    var link: UInt64 = 0
    /// The links of the last entries applied, to tell a log that went back
    /// (a part of this hub's history) from one that went elsewhere.
    var links = RecentLinks()
    /// The history the offsets belong to; a different one means the log was
    /// lost and rebuilt.
    var epoch = ""
    /// R15: this hub is writing the board back into its log; proposals wait.
    var writingBack = false
    /// R15: a loss was noticed and not yet over (counted once).
    var lossNoticed = false
    /// R15: a write-back that failed is tried again from then (monotonic nanoseconds).
    var writeBackAfter: UInt64 = 0
    /// The offset applied when the follower last reported the log's head:
    /// a snapshot past it that a second brought no nearer is read (R15).
    var headSeenAt: UInt64 = 0
    /// This hub's proposals on the board, by number.
    var proposals: [UInt64: PendingProposal] = [:]
    /// The offset of the last fold this hub offered.
    var foldOffered: UInt64 = 0
    /// Another hub folds this board (its lease): offers only after three folds' worth.
    var foldsElsewhere = false
    /// First answers of keyed entries applied since the last fold this hub
    /// knows of, so a fold can write them down before the entries go.
    var answersSinceFold: [(offset: UInt64, key: String, answer: KeyedAnswer)] = []
    /// At most this many answers wait for a snapshot (the oldest go first).
    static let maxAnswersKept = 100_000
    /// Connections and names on the other hubs (presence, R4).
    var remoteClients = 0
    var remoteNames: [String] = []
    /// The engine's checkpoint frontier after the last entry (a change means it compacted).
    var frontier = Stamp.origin
    /// Names the replica's history in this process: drawn anew when the room
    /// is made and whenever it is taken from a snapshot (`restart`), so what
    /// is remembered of one history (a fold's packed runs, `PackedWindow`) is never
    /// used for another, whose operations may reuse its ids.
    var history = SharedProgress.newHistory()
    private static let histories = Atomic<UInt64>(0)
    static func newHistory() -> UInt64 { histories.add(1, ordering: .relaxed).newValue }
}

extension SharedProgress {
    /// What this hub applied, as an append or a fold says it (R15).
    var seen: SharedSeen { SharedSeen(offset: applied, link: link, epoch: epoch) }

    /// Entry `offset` with `link` applied.
    mutating func note(offset: UInt64, link: UInt64) {
        applied = offset
        self.link = link
        links.append(offset: offset, link: link)
    }

    /// The board taken from a snapshot (or a fresh log) at `offset`.
    mutating func restart(at offset: UInt64, link: UInt64) {
        history = Self.newHistory()
        applied = offset
        self.link = link
        links = RecentLinks()
        links.append(offset: offset, link: link)
    }
}

/// The links of the last entries a hub applied, oldest first (at most
/// `capacity`, a few KiB per board): enough to tell whether a log that went
/// back still holds a part of this hub's history.
struct RecentLinks {
    static let capacity = 512
    private var offsets: [UInt64] = []
    private var links: [UInt64] = []

    mutating func append(offset: UInt64, link: UInt64) {
        if offsets.count >= 2 * Self.capacity {
            offsets.removeFirst(Self.capacity)
            links.removeFirst(Self.capacity)
        }
        offsets.append(offset)
        links.append(link)
    }

    /// The link of entry `offset`, when it is among the last ones applied.
    func link(at offset: UInt64) -> UInt64? {
        guard let last = offsets.last, offset <= last else { return nil }
        var low = 0, high = offsets.count - 1
        while low <= high {
            let middle = (low + high) / 2
            if offsets[middle] == offset { return links[middle] }
            if offsets[middle] < offset { low = middle + 1 } else { high = middle - 1 }
        }
        return nil
    }
}

/// A replica's `ops` answered after a merge, `have` aside: that says what
/// the hub holds when the answer is sent, so that answers sent later than
/// their entry was applied (waiting for the log's confirmation, while later
/// entries were applied and answered) never say less than one sent before.
enum MergeOutcome {
    case ack(version: UInt64)
    case error(ProtocolError)

    func frame(ref: String?, have: UInt64) -> String {
        switch self {
        case let .ack(version): HubMessage.ack(ref: ref, version: version, have: have)
        case let .error(error): HubMessage.error(error, ref: ref, have: have)
        }
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
    /// The entry as proposed (`SharedEntry<Kind.Change>`): applied from here
    /// when it comes back, instead of decoded again.
    var entry: (any Sendable)?
    /// The answer, known once the entry was applied; sent once confirmed too.
    var reply: String?
    /// The answer to a replica's operations (ack or error) waiting for its
    /// confirmation: its `have` is taken when it is sent.
    var replicaAnswer: MergeOutcome?
    /// What was appended, to append it again after a reload.
    var body = ""
    var logKey: String?
    var owner: (replica: ReplicaID, sub: String)?
    /// The log said the key was used by an entry ahead of this hub: answered
    /// when that entry's answer is applied (or `unavailable` at the deadline).
    var awaitsKey = false
    /// R15: not appended (the log's server is fenced until then, monotonic
    /// nanoseconds, or the board is being written back): proposed again after.
    var retryAt: UInt64?
    /// O7: a freeze (true) or thaw (false) the console asked for.
    var freeze: Bool?
}

/// Thin changes of this hub's connections proposed and not yet applied,
/// per connection, so a client's next intent is checked with its own
/// changes in flight applied (kind-free: the room casts them back). Only
/// the client's own: nobody can count on the order of two clients'
/// intents, and a board busy with many clients stays cheap to check.
struct Speculation {
    var changes: [UInt64: [(number: UInt64, author: String, change: any Sendable)]] = [:]

    /// Forgets proposal `number` of `connection` (applied, or never to be).
    mutating func settle(_ number: UInt64, of connection: UInt64) {
        guard var pending = changes[connection] else { return }
        pending.removeAll { $0.number == number }
        changes[connection] = pending.isEmpty ? nil : pending
    }
}
