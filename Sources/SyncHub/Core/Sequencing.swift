import BoardCRDT
import SyncWire

/// Who orders a board's changes (docs/CLUSTER.md). `local`: this hub seals
/// the order itself and its store only keeps what it decided (the embedded
/// SQLite store). `shared`: a log outside the hub orders them (Redis, cluster
/// mode): the hub proposes each change, and every hub applies the log in
/// its order, so all hubs show the same state under the same version.
enum Sequencing: Sendable, Equatable {
    case local
    case shared(SharedLogSettings)
}

struct SharedLogSettings: Sendable, Equatable {
    /// This hub's name in the log (`SharedEntry.hub`): its proposals come back with it.
    var hubID: String
    /// How long an intent waits for the log before it is answered `unavailable` (R8).
    var timeoutNanos: UInt64
    /// Entries after which a hub offers a fold of the board's log into a snapshot (R9).
    var foldEvery: UInt64
}

/// One entry of a board's shared log, as the log hands it back: its offset
/// (1, 2, ...: the board's order of record) and the JSON a hub proposed.
/// `link` names this entry (drawn by the appender, never 0) and `prev` the
/// entry before it, so a hub sees at once when what follows its last entry
/// is not what it applied (the log went back and was refilled, R15).
/// Entries written before links existed have link 0 and no `prev`.
struct SharedLogEntry: Sendable, Equatable {
    var offset: UInt64
    var body: [UInt8]
    var link: UInt64 = 0
    var prev: UInt64?
}

/// What a hub applied of a board's log last: the log's answer to an append
/// or a read checks it before anything is applied on top (R15).
struct SharedSeen: Sendable, Equatable {
    var offset: UInt64 = 0
    var link: UInt64 = 0
    var epoch = ""
}

/// A board's log as its server holds it now (the last offset, the link of
/// the entry there, the epoch), when it is not what a hub applied.
struct SharedLogHead: Sendable, Equatable {
    var top: UInt64
    var last: UInt64
    var epoch: String
    /// The offset of its snapshot (0: none, or not read).
    var snap: UInt64 = 0
}

/// A change this hub proposes to a board's shared log. The shell appends it
/// (deduplicating by `key` and checking `owner` in the same atomic step) and
/// answers with `SharedAppendResult`.
struct SharedProposal: Sendable {
    var board: String
    /// `KIND/NAME`: the log's name, the same for every kind (the letter board's key is bare).
    var logName: String
    var number: UInt64
    var body: String
    var key: String?
    /// With tokens: a replica id and the `sub` that must own it (A11 across hubs).
    var owner: (replica: ReplicaID, sub: String)?
    /// Monotonic nanoseconds (`WebSocketServer.nowNanos`) after which it is
    /// answered `unavailable`: the appender never sends it after that.
    var deadline: UInt64 = .max
    /// What this hub applied of the board when it proposed: the log appends
    /// nothing on top of a history that lost it (R15).
    var seen = SharedSeen()
}

/// What the log said to a proposal.
enum SharedAppendResult: Sendable, Equatable {
    /// Appended at `offset`; `epoch` names the board's history in the log.
    case appended(offset: UInt64, epoch: String)
    /// The key was used before: `seen` is `@OFFSET` (the entry that used it)
    /// or the first answer, as `KeyedAnswerText` wrote it.
    case duplicate(seen: String)
    /// The replica id belongs to another token holder.
    case notOwner
    /// Not known whether it was appended (timeout, connection lost) or
    /// refused by the log's server (OOM, READONLY...): never an ack.
    case failed(reason: String)
    /// Not appended: the server restarted or failed over moments ago, and
    /// the hubs that hold its boards get `milliseconds` to write back what
    /// it lost before anything goes on top (R15). Proposed again after.
    case fenced(milliseconds: UInt64)
    /// Not appended: the log no longer holds what `seen` said (R15).
    case lost(SharedLogHead)
}

/// A snapshot's JSON in three parts, so that what writes it can keep the
/// window's operations it wrote for an earlier fold (issue 33): `head`
/// (up to and with `"log":[`), the window's operations (`operation(i)` is
/// the JSON of the i-th, `operations[i]` its id), and `tail` (from the `]`
/// that closes the log). `whole` is the JSON.
struct SnapshotText: Sendable {
    var head: String
    var operations: [OperationID]
    var operation: @Sendable (Int) -> String
    var tail: String

    var whole: String {
        var out = head
        for index in operations.indices {
            if index > 0 { out += "," }
            out += operation(index)
        }
        return out + tail
    }
}

/// A board's state written into its shared log's snapshot, so that the log
/// before it can be dropped (R9). Made on the service thread (a copy of the
/// replica), encoded by the shell's thread.
struct SharedFold: Sendable {
    var board: String
    var logName: String
    var offset: UInt64
    /// The snapshot, written off the service thread.
    var encode: @Sendable () throws -> SnapshotText
    /// The room's history (`SharedProgress.history`): what was kept of an
    /// earlier fold's operations is used only within one history (a board
    /// read again, or dropped and loaded anew, starts another, whose
    /// operations may reuse ids).
    var history: UInt64 = 0
    /// First answers of keys used by entries up to `offset`, as `KeyedAnswerText`.
    var answers: [(key: String, answer: String)]
    /// Offered by a hub whose own entries did not bring the board to it (in
    /// case the hub that folds stopped): it takes the fold's lease for a
    /// moment only, so the hub whose clients write gets it back.
    var fallback = false
    /// The history it belongs to: a log that lost it (a new epoch) takes no snapshot of the old one.
    var epoch: String
    /// The link of the entry at `offset`: a log whose entry there is another takes no snapshot of this one.
    var link: UInt64 = 0
}

/// R15: what a hub writes back into a board's log that went back: its
/// whole board as a snapshot at the offset it applied, taken only while the
/// log still is what the hub saw (`expected`), a part of its own history.
struct SharedRestore: Sendable {
    var board: String
    var logName: String
    var seen: SharedSeen
    var expected: SharedLogHead
    var encode: @Sendable () throws -> String
    /// First answers of keys used since the last fold this hub knows of, with their entries' offsets.
    var answers: [(key: String, answer: String, offset: UInt64)]
}

/// The log's answer to a `SharedRestore`.
enum SharedRestoreResult: Sendable, Equatable {
    case restored
    /// The log changed since the hub looked (another hub wrote back, or
    /// appended): `head` is what it holds now.
    case moved(SharedLogHead)
    case failed(reason: String)
}

/// A board as its shared log holds it: the snapshot (if any fold happened)
/// and the entries after it.
struct SharedBoard: Sendable {
    var snapshot: String?
    var snapshotOffset: UInt64
    var epoch: String
    var entries: [SharedLogEntry]
    /// The link of the entry the snapshot ends with (0: none, or an old log).
    var snapshotLink: UInt64 = 0
}

/// What a hub writes into a board's shared log for one proposal. Every hub
/// applies it the same way at its place in the log.
struct SharedEntry<Change: Codable & Sendable & Equatable>: Codable {
    /// The proposing hub and its proposal number: it answers its client
    /// once it applies the entry.
    var hub: String
    var number: UInt64
    /// Who acts (a thin change's author), and the `sub` of their token
    /// (for the other hubs' consoles, O4).
    var author: String?
    var sub: String?
    var key: String?
    /// A thin client's change, prepared against the proposing hub's state.
    var change: Change?
    /// A replica client's operations, and that replica.
    var operations: [BoardCRDT.Operation<Change>]?
    var replica: ReplicaID?
    /// A keyed intent refused (or a no-op) where it was prepared: only its
    /// answer is recorded, so a resend anywhere gets it.
    var refusal: [String]?
    var noop: Bool?
    /// A keyed no-op: the version of the proposing hub's state it was judged on (its ack's version).
    var basedOn: UInt64?
    /// O7: the board frozen (true) or thawed (false) by an operator.
    var frozen: Bool?

    enum CodingKeys: String, CodingKey {
        case hub = "h", number = "n", author = "a", sub = "s", key = "k", change = "c", operations = "ops", replica = "r"
        case refusal = "x", noop = "z", basedOn = "b", frozen = "f"
    }
}

/// The snapshot of a board in its shared log: the hub's replica whole, the
/// board's version and the offset of the last entry it includes.
struct SharedSnapshot<Kind: BoardKind>: Codable {
    var offset: UInt64
    var version: UInt64
    var replica: ReplicaImage<Kind>
    /// O7 (absent: not frozen).
    var frozen: Bool?
}

/// The board's own replica id in cluster mode: the same on every hub (each
/// derives it from the board's name, FNV-1a), so every hub that applies the
/// log stamps thin changes alike. Never 0.
func sharedBoardReplica(logName: String) -> ReplicaID {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in logName.utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x0000_0100_0000_01b3
    }
    // 63 bits, as `ReplicaID.random()`.
    let id = hash & (UInt64.max >> 1)
    return ReplicaID(id == 0 ? 1 : id)
}
