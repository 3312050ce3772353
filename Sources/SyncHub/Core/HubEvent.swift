import Foundation
import SyncWire

// The hub's state machine speaks in these: events in (`HubCore.handle`),
// one ordered list of actions out. A store's work is an action
// (`StoreRequest`) and its answer a later event (`StoreAnswer`), so nothing
// in the core waits for I/O (docs/ARCHITECTURE.md, "Events and actions").

/// The moment an event happens, as the shell reads it: the monotonic clock
/// (`WebSocketServer.nowNanos`) for limits and deadlines, and the wall clock
/// tokens are checked against. The core keeps no clock of its own.
struct HubClock: Sendable {
    var nanos: UInt64
    var wall: Date

    init(nanos: UInt64, wall: Date) {
        self.nanos = nanos
        self.wall = wall
    }

    /// Tests: `seconds` on both clocks.
    init(seconds: Double) {
        nanos = UInt64(seconds * 1e9)
        wall = Date(timeIntervalSince1970: seconds)
    }
}

/// What happens to the hub.
enum HubEvent {
    /// A connection's upgrade to a board's path completed. `grant`: the
    /// token its upgrade request carried, verified (auth on; nil: it sends
    /// one in an `auth` frame, or the hub is open).
    case upgraded(connection: UInt64, board: BoardAddress, grant: Grant? = nil)
    case left(connection: UInt64)
    /// One complete text frame, as it arrived; the core parses it by its
    /// board's kind (or holds a copy while the board loads). Only valid
    /// during the call.
    case frame(connection: UInt64, UnsafeRawBufferPointer)
    case binary(connection: UInt64)
    /// The timer: deadlines (loads, proposals, tokens), evictions, presence.
    case tick
    /// The loop finished a turn: what the turn recorded goes to the store in
    /// one batch, and every board that changed is published once.
    case turnEnded
    /// A store answered a request (`HubAction.store`).
    indirect case store(StoreAnswer)
    /// A plain HTTP request (`exchange`) needs `board` held (a shop read or
    /// upload): answered with `.httpBoard` once it is, or cannot be.
    case httpNeedsBoard(exchange: UInt64, board: BoardAddress)
    /// A change a plain HTTP request makes on a held board (a shop image's
    /// name, P4), its answer sent to `HubCore.httpAnswerID(exchange)`. The
    /// shell checked who may make it (A13).
    indirect case httpIntent(exchange: UInt64, board: BoardAddress, ParsedFrame)
    /// O7: the console freezes (or thaws) a held board; answered to
    /// `HubCore.httpAnswerID(exchange)` once durable (or in the log).
    case adminFreeze(exchange: UInt64, board: BoardAddress, frozen: Bool)
    /// O6: tokens the console revoked on this hub.
    case revoked([Revocations.Entry])
}

/// What the shell must do, in order.
enum HubAction {
    /// A frame for one connection, in order with its other replies.
    case send(connection: UInt64, frame: String)
    /// The newest state of a board for its connections, as a whole state
    /// or a patch each; a newer one may replace it before it is written
    /// (conflation). Computed once per board.
    case publish(PublishedState)
    /// Must-arrive frames shared by several connections (replica relays).
    case relay(frame: String, to: [UInt64])
    case close(connection: UInt64, code: UInt16, reason: String)
    /// The connection presented a valid token: the shell's pre-token limits
    /// (time to present one, bytes before one) stop applying to it.
    case authenticated(connection: UInt64)
    /// Work for the board store (`BoardLog`); its answer comes back as `.store`.
    /// (Indirect, as the other large cases: an action stays small to move.)
    indirect case store(StoreRequest)
    /// The board an HTTP request waited for is held now (`ready`), or could
    /// not be loaded (`reason`).
    indirect case httpBoard(exchange: UInt64, board: BoardAddress, ready: Bool, reason: String)
    /// Something an operator must read in the hub's log (the core keeps no logger).
    indirect case report(HubReport)
}

/// A line for the hub's log: what happened to which board.
struct HubReport: Sendable, Equatable {
    enum Level: Sendable { case notice, error }
    var level: Level
    var message: String
    var board: String
}

/// Work for a board store. Every request returns at once; the answers the
/// core waits for come back as `StoreAnswer` events.
enum StoreRequest: Sendable {
    /// Read `board`: the whole board (`after` 0), or, from a shared log, the
    /// entries after offset `after` (the snapshot too when they are gone).
    /// Answered `.loaded` with the same `ticket`.
    /// Nobody waits for it after `deadline` (monotonic nanoseconds): a store
    /// may skip it then, and its answer is ignored.
    case load(ticket: UInt64, board: BoardAddress, after: UInt64, deadline: UInt64)
    /// The first answer to a keyed intent, when the board's key memory no
    /// longer holds it. Answered `.keyAnswer`.
    case lookUpKey(board: String, key: String)
    /// Make these records durable (the embedded store); answered `.committed`.
    case commit([DurableRecord])
    /// Append these proposals to their boards' shared logs; answered `.appended` each.
    case propose([SharedProposal])
    /// Write a snapshot of a board into its shared log and trim before it; answered `.folded`.
    case fold(SharedFold)
    /// R15: write a board back into its shared log that went back; answered `.restored`.
    case restore(SharedRestore)
    /// O6: keep a revocation (it holds across restarts, and in a cluster every hub learns it).
    case revoke(Revocations.Entry)
    /// R15: this hub asked for what it had to keep after `server` came back (`.serverReached`).
    case serverChecked(server: String)
    /// O9: keep an action of the console (the last 10,000; in a cluster every hub reads them).
    case audit(AuditEntry)
    /// R15: the first answers of keys this hub remembers, added to a log
    /// another hub wrote back (each only where the log has none).
    case keepKeys(logName: String, answers: [(key: String, answer: String, offset: UInt64)])
    /// Hand over the entries of `board`'s shared log after `after` as they come (`.sequenced`).
    case follow(board: String, logName: String, after: SharedSeen)
    case unfollow(logName: String)
    /// Who is on each held board on this hub, by log name (R4), for the other hubs.
    case presence([String: BoardPresence])
    /// Image bytes by SHA-256 under the board (P4); answered `.imageStored`.
    case putImage(board: BoardAddress, digest: String, type: String, bytes: [UInt8], exchange: UInt64)
    /// Answered `.imageRead`.
    case readImage(board: BoardAddress, digest: String, exchange: UInt64)
    /// O3: how many boards the store holds (the console's `stored`); answered `.boardsCounted`.
    case countBoards(exchange: UInt64)
}

/// Connections and display names on one board of one hub.
struct BoardPresence: Sendable, Equatable {
    var clients: Int
    var names: [String]
}

/// Why a store could not answer: `message` says what, for logs and close reasons.
struct StoreFailure: Error, Sendable, Equatable {
    var message: String
}

/// A store's answer, handed back to the service thread.
enum StoreAnswer: Sendable {
    /// The board as the store holds it (nil: never written).
    case loaded(ticket: UInt64, board: String, Result<StoredBoard?, StoreFailure>)
    case keyAnswer(board: String, key: String, Result<KeyedAnswer?, StoreFailure>)
    /// These records are durable (the embedded store), in the order given.
    case committed([DurableRecord])
    /// The store cannot keep what it is given any more: the hub stops.
    case storeFailed(StoreError)
    /// The shared log's answer to proposal `number` of `board`.
    case appended(board: String, number: UInt64, result: SharedAppendResult)
    /// Entries of a board's shared log, in order.
    case sequenced(board: String, entries: [SharedLogEntry])
    /// Connections and names on the other hubs.
    case presence(board: String, clients: Int, names: [String])
    /// A snapshot at `offset` or later is stored (answers up to it are written down).
    case folded(board: String, offset: UInt64)
    /// Another hub folds the board (it holds the fold's lease, or stored a
    /// newer snapshot): this hub offers folds only when three folds' worth
    /// went by without one, as a hub whose entries did not bring it there.
    case foldedElsewhere(board: String)
    /// The board's log as the store holds it now (sampled each second, and
    /// at once when its server is reached again).
    /// `lost`: its last offset went below what the follower read, or the
    /// entry there is another one (R15).
    case logHead(board: String, SharedLogHead, lost: Bool)
    /// R15: `server` was reached again after it restarted (or another was
    /// promoted): the keys this hub remembers of `boards` (its boards
    /// there) are added to their logs, which may have lost them, even when
    /// the log's head shows no loss (another hub wrote it back); then
    /// `.serverChecked(server)` says so to the server's follower.
    case serverReached(server: String, boards: [String])
    case restored(board: String, SharedRestoreResult)
    /// O6: the revocations the store holds (a cluster's, read each second).
    case revocations([Revocations.Entry])
    /// R15: keys were added to a written-back log (`.keepKeys`); nothing waits for it.
    case keysKept
    case imageStored(exchange: UInt64, StoreFailure?)
    case imageRead(exchange: UInt64, digest: String, Result<StoredImage?, StoreFailure>)
    case boardsCounted(exchange: UInt64, Result<Int, StoreFailure>)
}

/// An image's bytes and type as a store keeps them.
struct StoredImage: Sendable, Equatable {
    var type: String
    var bytes: [UInt8]
}
