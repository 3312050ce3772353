/// One WebSocket connection on the server, confined to the service thread.
///
/// Outgoing traffic has two lanes: `latest`, a single slot that a newer
/// board state overwrites (a client that is behind gets the newest state, not
/// a backlog), and `replies`, a bounded queue for messages that must all
/// arrive (acks, refusals, errors). Memory per slow client is therefore one
/// shared frame plus at most `ServerOptions.maxQueuedReplies` small ones.
public final class ServerConnection: @unchecked Sendable {
    // Sendable: confined to the server's service thread, checked by its server's `owner` (debug builds); the `let`s are immutable.

    /// Process-unique, for logs and maps.
    public let id: UInt64
    /// The request path, e.g. `/boards/kitchen`.
    public let path: String
    /// The hub's answer when it let the upgrade in: the endpoint and its grant.
    public let admission: Admission
    /// The endpoint chosen when the upgrade was accepted.
    public var route: Route { admission.route }
    /// The peer's IP address as text (logs, per-address limits).
    public let peerAddress: String

    let wsi: OpaquePointer
    var latest: OutgoingFrame?
    var replies: [OutgoingFrame] = []
    var replyHead = 0
    /// The close this side started (code and reason), once it did.
    public internal(set) var closing: (code: UInt16, reason: String)? {
        get {
            owner.check()
            return closingWith
        }
        set {
            owner.check()
            closingWith = newValue
        }
    }
    private var closingWith: (code: UInt16, reason: String)?
    var closed = false
    /// Monotonic nanoseconds since the oldest unsent frame was queued.
    var waitingSince: UInt64?
    var receiveBuffer: [UInt8] = []
    /// Which publish of its board's state this connection holds once what
    /// is queued is written (0: none): a patch goes only to a connection
    /// that holds the patch's base (the hub sets it, docs/PROTOCOL.md "Patches").
    public var heldState: UInt64 {
        get {
            owner.check()
            return heldPublish
        }
        set {
            owner.check()
            heldPublish = newValue
        }
    }
    private var heldPublish: UInt64 = 0
    /// Set once its `ESTABLISHED` callback returned: frames may then be
    /// written outside its writable callback (`ServerOptions.directWrites`).
    var writesDirectly = false
    /// In `WebSocketServer.held`: written when the writes held now are let go.
    var writeHeld = false
    /// Whether a state (or patch) waits in the `latest` slot unwritten: a
    /// newer patch cannot follow it there, a whole state replaces it.
    public var stateWaiting: Bool {
        owner.check()
        return latest != nil
    }
    var receivePaused = false
    /// The server's: held by the service thread while `run` runs.
    let owner: ThreadOwner

    init(id: UInt64, path: String, admission: Admission, peerAddress: String, wsi: OpaquePointer, owner: ThreadOwner) {
        self.id = id
        self.path = path
        self.admission = admission
        self.peerAddress = peerAddress
        self.wsi = wsi
        self.owner = owner
    }

    /// Bytes of the frames queued and not yet written (the newest state included).
    public var queuedBytes: Int {
        owner.check()
        return replies[replyHead...].reduce(latest?.count ?? 0) { $0 + $1.count }
    }

    /// Frames queued and not yet written.
    public var queuedReplies: Int {
        owner.check()
        return replies.count - replyHead
    }
    public var hasOutput: Bool {
        owner.check()
        return latest != nil || queuedReplies > 0
    }

    /// Whether the last frame written was the board state: when both lanes
    /// have frames they alternate, so a busy board never starves acks and a
    /// flood of acks never holds back the newest state.
    var lastWasState = false

    /// Returns a frame taken but not written to the front of its lane.
    func pushBack(_ frame: OutgoingFrame) {
        if lastWasState, latest == nil {
            latest = frame
            lastWasState = false
        } else {
            replies.insert(frame, at: replyHead)
        }
    }

    /// Set when a state comes for a connection whose replies were held this
    /// turn: those replies (the acks of what the state shows) go first.
    var repliesFirst = false

    func takeNextFrame() -> OutgoingFrame? {
        if let frame = latest, replyHead == replies.count || !(lastWasState || repliesFirst) {
            latest = nil
            lastWasState = true
            repliesFirst = false
            return frame
        }
        lastWasState = false
        guard replyHead < replies.count else { return nil }
        let frame = replies[replyHead]
        replyHead += 1
        if replyHead == replies.count {
            while replies.popLast() != nil {}  // keeps the capacity, specialised (not `removeAll(keepingCapacity:)`)
            replyHead = 0
        } else if replyHead >= 64, replyHead * 2 >= replies.count {
            replies.removeFirst(replyHead)
            replyHead = 0
        }
        return frame
    }
}

/// Which endpoint a connection reached.
public enum Route: Sendable, Equatable {
    /// `/boards/NAME`
    case board(String)
    /// `/echo`, for protocol conformance tests.
    case echo
}
