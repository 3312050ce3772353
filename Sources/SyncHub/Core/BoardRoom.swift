import BoardCRDT
import SyncWire

/// One board held by the hub, whatever its kind: who is on it, its version,
/// its idempotency keys and what of it is in flight to the store. The kind's
/// replica and rules live in the subclass `KindRoom<Kind>`; `HubCore` talks
/// to every board through the overridable methods here.
/// A class so that merging into a board's replica never copies its log.
class BoardRoom {
    let address: BoardAddress
    /// `address.key`: the board's key in the hub and the store.
    let name: String
    /// Grows with every change of the board's shared state (K5).
    var version: UInt64
    /// The newest durable version: what `state` frames show.
    var durableVersion: UInt64
    /// Who is on the board. After a member comes, leaves or changes what
    /// it takes (`format`, `presenceOnly`), call `audienceChanged()`.
    var members: [UInt64: Member] = [:]
    /// `members` by what a publish gives them (`BoardRoom+Publish`); nil
    /// when it must be made again.
    var audience: Audience?
    func audienceChanged() { audience = nil }
    /// The members whose `hello` was accepted (replica clients), kept apart
    /// so that relaying costs nothing on boards of thin clients.
    var replicaMembers: Set<UInt64> = []
    /// Records handed to the store and not yet back.
    var recordsInFlight = 0
    /// Per replica, how many of its newest integrated operations are in
    /// records not yet durable (records commit in order, so these are
    /// exactly its highest sequence numbers).
    private(set) var operationsInFlight: [ReplicaID: UInt64] = [:]
    /// The state frame needs sending (change, join or leave).
    var needsPublish = false
    /// The state last published (the base of the next patch, and what tells
    /// a publish that changed nothing) and its hub-wide number.
    var published: StateShape?
    var publishedGeneration: UInt64 = 0
    /// The presence last sent to replica clients that take `presence`.
    var lastPresence: String?
    /// Connections that get the whole state with the next publish (`subscribe`).
    var wholeStateDue: Set<UInt64> = []
    /// The kind's opening (a first deal) is on its way to the store: no
    /// state is shown before it is durable, so nobody sees a board before
    /// its first game (KindRoom.open).
    var openingInFlight = false
    var emptySince: UInt64?
    /// Idempotency keys of thin intents (at most once, K6).
    var keys: IntentKeys
    /// Replica clients whose `sync` waits for a compaction to become
    /// durable, with the frontier each said it holds.
    var awaitingSync: [(connection: UInt64, frontier: Stamp)] = []
    /// Its last changes and their rate, for the console (O3-O4).
    var activity = BoardActivity()
    /// O7: frozen by an operator: intents of anyone but an admin are refused
    /// `frozen` (from the moment it is asked); states say so once durable.
    var frozen = false
    var durableFrozen = false

    init(address: BoardAddress, version: UInt64, limits: HubLimits, hasKeys: Bool) {
        self.address = address
        name = address.key
        self.version = version
        durableVersion = version
        keys = IntentKeys(capacity: limits.rememberedKeysPerBoard, mayBeInStore: hasKeys)
    }

    /// Cluster mode: how far this hub applied the board's shared log.
    var shared = SharedProgress()
    /// Cluster mode: this hub's thin changes in flight (`KindRoom.speculativeState`).
    var speculation = Speculation()
    /// The board's shared log's name, `KIND/NAME` for every kind.
    var logName: String { address.logName }

    // MARK: What each kind does (KindRoom overrides all of these)

    /// Cluster mode: applies entries of the board's shared log in order;
    /// false when they do not follow what was applied (reload the board).
    func applyShared(_ entries: [SharedLogEntry], core: inout HubCore, actions: inout [HubAction]) -> Bool {
        preconditionFailure("BoardRoom is abstract: KindRoom applies")
    }

    /// Cluster mode (R15): the board as this hub holds it, to write back
    /// into a log that went back to `expected`.
    func writeBack(over expected: SharedLogHead) -> SharedRestore {
        preconditionFailure("BoardRoom is abstract: KindRoom writes back")
    }

    /// A change of this board's kind as JSON (the console's `intent`, O4).
    func changeJSON(_ change: any Sendable) -> String? { nil }

    /// What the kind says to a change only an admin may make (`WireKind.adminOnlyMessage`).
    var adminOnlyMessage: String { "only an admin token may make this change" }

    /// R15: the first answers of every key this hub remembers of the board.
    func rememberedAnswers() -> [(key: String, answer: String, offset: UInt64)] { [] }

    /// O7 in a cluster: an entry that freezes or thaws the board.
    func proposeFreeze(_ freeze: Bool, answerTo: UInt64, core: inout HubCore) {
        preconditionFailure("BoardRoom is abstract: KindRoom proposes")
    }

    /// O7: a record of no operation that freezes or thaws the board at `version`.
    func freezeRecord(_ frozen: Bool, reply: (connection: UInt64, frame: String)) -> DurableRecord {
        preconditionFailure("BoardRoom is abstract: KindRoom records")
    }

    /// Parses one text frame of a connection on this board.
    func parse(_ bytes: UnsafeRawBufferPointer) -> ParsedFrame {
        preconditionFailure("BoardRoom is abstract: KindRoom parses")
    }

    /// Handles a parsed frame (rate limits already passed).
    func receive(_ frame: ParsedFrame, from connection: UInt64, core: inout HubCore, actions: inout [HubAction]) {
        preconditionFailure("BoardRoom is abstract: KindRoom receives")
    }

    /// Cluster mode: replaces the board with `log` as read again (this hub
    /// fell behind a fold); false when it cannot be read.
    func reloadShared(_ log: SharedBoard, core: inout HubCore, actions: inout [HubAction]) -> Bool {
        preconditionFailure("BoardRoom is abstract: KindRoom reloads")
    }

    /// Called once when the board is created in memory (see `KindRoom.open`).
    func open(core: inout HubCore) {}

    /// The durable state as its `state` frame's shape (`stateHead`, the
    /// kind's members, `editing`).
    func stateShape() -> StateShape {
        preconditionFailure("BoardRoom is abstract: KindRoom draws the state")
    }

    /// Who edits which item now, on kinds that track it; nil otherwise.
    func editingShape() -> StateShape? { nil }

    /// A plain HTTP read below the board's path, from what is durable
    /// (`WireKind.read`), or nil when the kind has none there.
    func read(_ path: [Substring]) -> (status: UInt32, json: String)? { nil }

    /// An image the durable state names (`WireKind.image(named:in:)`).
    func image(named name: String) -> (type: String, digest: String)? { nil }

    /// A record of this board became durable: advance the durable state,
    /// relay operations and checkpoints to replica clients.
    /// `afterReplies` takes what must follow the record's answers (a
    /// checkpoint and the syncs that waited for it).
    func committed(_ record: DurableRecord, core: inout HubCore, actions: inout [HubAction], afterReplies: inout [HubAction]) {
        preconditionFailure("BoardRoom is abstract: KindRoom commits")
    }

    /// The highest sequence number of `replica` the store holds.
    func durableSeq(of replica: ReplicaID) -> UInt64 {
        preconditionFailure("BoardRoom is abstract")
    }

    /// Called by `HubCore.record` before a record leaves: when the board
    /// compacted, forgets idle replicas beyond `limit` and returns the
    /// checkpoint to store.
    func checkpointToStore(forgettingBeyond limit: Int, counters: inout HubCounters) -> StoredCheckpoint? {
        preconditionFailure("BoardRoom is abstract")
    }

    // MARK: Shared by every kind

    var replicasInFlight: Dictionary<ReplicaID, UInt64>.Keys { operationsInFlight.keys }

    func operationsRecorded(_ operations: [StoredOperation]) {
        for operation in operations { operationsInFlight[operation.id.replica, default: 0] += 1 }
    }

    func operationsCommitted(_ operations: [StoredOperation]) {
        for operation in operations {
            let replica = operation.id.replica
            guard let count = operationsInFlight[replica] else { continue }
            operationsInFlight[replica] = count > 1 ? count - 1 : nil
        }
    }

    /// Per connection, the ref of its last intent about each notice subject
    /// (`ITEM/FIELD`, `WireKind.noticeSubjects`): a notice about that
    /// subject carries it (K9). At most `maxNoticeRefs` per connection.
    private(set) var noticeRefs: [UInt64: [String: String]] = [:]
    static let maxNoticeRefs = 256

    func noteRef(_ ref: String?, about subjects: [String], from connection: UInt64) {
        guard let ref, !subjects.isEmpty else { return }
        var refs = noticeRefs[connection] ?? [:]
        if refs.count >= Self.maxNoticeRefs, let any = refs.keys.first { refs[any] = nil }
        for subject in subjects { refs[subject] = ref }
        noticeRefs[connection] = refs
    }

    func forgetRefs(of connection: UInt64) { noticeRefs[connection] = nil }

    /// Display names given on the board (`join`, `hello`), for presence;
    /// sorted once per change of who is named, not once per state frame.
    private(set) var names: [String] = []
    private var namedMembers: [UInt64: String] = [:]

    /// With tokens: which `sub` said `hello` under each replica id first
    /// (only that holder may use it again). In memory; the log's authors
    /// stand in for it after a restart.
    var replicaOwners: [ReplicaID: String] = [:]

    /// Which item each connection's person edits (kinds that track it).
    private(set) var editingItems: [UInt64: String] = [:]

    /// Records what `connection` edits (nil: nothing, or it left); whether that changed.
    @discardableResult
    func setEditing(_ item: String?, for connection: UInt64) -> Bool {
        guard editingItems[connection] != item else { return false }
        editingItems[connection] = item
        return true
    }

    /// `{"ana":"a1"}`: who edits which item, by acting name; only items
    /// `isShown` (a deleted item's editors drop out).
    func editingValue(isShown: (String) -> Bool) -> String {
        var pairs: [(name: String, item: String)] = []
        for (connection, item) in editingItems {
            if let member = members[connection], isShown(item) { pairs.append((member.actingName, item)) }
        }
        // One entry per name (a person on two devices shows once).
        pairs.sort { $0.name < $1.name || ($0.name == $1.name && $0.item < $1.item) }
        var out = "{"
        var last: String?
        for pair in pairs where pair.name != last {
            if last != nil { out += "," }
            last = pair.name
            HubMessage.appendJSONString(pair.name, to: &out)
            out += ":"
            HubMessage.appendJSONString(pair.item, to: &out)
        }
        return out + "}"
    }

    /// The common members of the `state` frame: type, board, kind,
    /// version, clients (on every hub, cluster mode) and names.
    func stateHead(room: Int = 0) -> [ShapeMember] {
        var head = HubMessage.stateHead(board: address.name, kind: address.kind, version: durableVersion,
                                        clients: members.count + shared.remoteClients,
                                        names: shared.remoteNames.isEmpty ? names : (names + shared.remoteNames).sorted(), room: room + 1)
        if durableFrozen { head.append(ShapeMember("frozen", .bool(true))) }
        return head
    }

    /// The names given on this hub alone (what presence tells the other hubs).
    var localNames: [String] { names }

    /// Records `connection`'s display name (nil when it leaves or has none).
    func setName(_ name: String?, for connection: UInt64) {
        guard namedMembers[connection] != name else { return }
        namedMembers[connection] = name
        names = namedMembers.values.sorted()
    }
}

/// A connection on a board.
struct Member {
    /// Set once the client's `hello` was accepted: it is a replica client.
    var replica: ReplicaID?
    /// The name given by `join` or `hello`.
    var name: String?
    /// `guest-N`, the name it acts under until it gives one (K10).
    var guest: String
    /// The name a replica client's operations carry: its hello's, or ""
    /// for a replica that gave none (`Operation.author`).
    var replicaName = ""
    var messages: RateLimiter
    var badFrames: RateLimiter
    /// With auth on: the token's grant and its role on this board (A4);
    /// nil on an open hub, where everyone may write.
    var grant: Grant?
    var role: BoardRole?
    /// When its last refused changes were (A9: ten a minute close it).
    var forbidden: [UInt64] = []
    /// Whole states or patches (`subscribe`).
    var format = StateFormat.state
    /// A replica client that takes `presence` frames in place of states.
    var presenceOnly = false

    /// Whether it may change the board (open hub, or a `write` role).
    /// With a token and no role (a refresh that took it away) it may not.
    var mayWrite: Bool { role.map { $0 >= .write } ?? (grant == nil) }
    /// Whether it may do what a kind reserves for admins (A13): an open
    /// hub makes everyone admin; with tokens, the `admin` role.
    var isAdmin: Bool { role.map { $0 == .admin } ?? (grant == nil) }

    /// Who this connection's intents and operations are made by.
    var actingName: String { name ?? guest }
}

/// A frame parsed by its board's kind; `HubCore` reads only what every kind
/// shares, the room reads `message`.
struct ParsedFrame {
    /// The idempotency key of a keyed intent.
    var key: String?
    var ref: String?
    /// Whether it is a replica client's `ops` (its answer carries `have`).
    var isOperations: Bool
    var isHello: Bool
    /// `Result<ClientMessage<Kind>, ProtocolError>` of the board's kind.
    var message: any Sendable
    /// Set when the frame could not be read.
    var error: ProtocolError?
    /// Whether it asks to change the board or presence (an intent, `ops`,
    /// `editing`): refused `forbidden` on a `read` connection (A9).
    var isChange = false
    /// Whether only an admin may make it (AUTH A13; `WireKind.needsAdmin`).
    var needsAdmin = false
}

/// An intent refused before it became a change, for the console (O4): its
/// JSON as the kind writes it (`WireKind.intentMembers`), made only when
/// refused, at most 2 KiB (a longer one keeps its type).
struct RefusedIntent: Sendable {
    static let maxBytes = 2_048
    let json: String

    init(members: String) {
        if members.utf8.count + 2 <= Self.maxBytes {
            json = "{" + members + "}"
        } else {
            // `"type":"NAME"` comes first.
            let type = members.split(separator: ",", maxSplits: 1).first.map(String.init) ?? ""
            json = "{" + (type.utf8.count < 200 ? type + "," : "") + "\"truncated\":true}"
        }
    }
}
