import BoardCRDT
import Foundation
import SyncWire
@testable import SyncHub

/// Drives a `HubCore` with no socket and no store: the test plays the
/// shell and the store. Its core keeps boards in a store (`durable`), so a
/// join's load and every commit are actions the harness answers, and a
/// test can hold a change in flight.
struct HubCoreHarness {
    var core: HubCore
    /// The moment of the next event (`advance` moves it).
    var clock = HubClock(seconds: 1)
    /// Records the core handed to the store and not yet committed.
    var inFlight: [DurableRecord] = []

    init(limits: HubLimits = HubLimits(), hubReplica: ReplicaID = ReplicaID(1), verifier: TokenVerifier? = nil) {
        core = HubCore(hubReplica: hubReplica, limits: limits, verifier: verifier, durable: true)
    }

    mutating func advance(seconds: Double) {
        clock = HubClock(nanos: clock.nanos + UInt64(seconds * 1e9), wall: clock.wall.addingTimeInterval(seconds))
    }

    /// One event; the store's loads are answered from `stored` at once
    /// (`answerLoads` false leaves them to the test), commits kept in `inFlight`.
    @discardableResult
    mutating func handle(_ event: HubEvent, stored: StoredBoard? = nil, answerLoads: Bool = true) -> [HubAction] {
        var out: [HubAction] = []
        var queue = [event]
        while !queue.isEmpty {
            let next = queue.removeFirst()
            for action in core.handle(next, at: clock) {
                switch action {
                case let .store(.commit(records)):
                    inFlight += records
                case let .store(.load(ticket, board, _, _)) where answerLoads:
                    queue.append(.store(.loaded(ticket: ticket, board: board.key, .success(stored))))
                default:
                    out.append(action)
                }
            }
        }
        return out
    }

    /// Parses `text` as the board of `connection` would (the shell hands the bytes).
    @discardableResult
    mutating func send(_ connection: UInt64, _ text: String, answerLoads: Bool = true) -> [HubAction] {
        var text = text
        return text.withUTF8 { bytes in handle(.frame(connection: connection, UnsafeRawBufferPointer(bytes)), answerLoads: answerLoads) }
    }

    /// The boards the store is asked to load in `actions`, by key.
    static func loads(_ actions: [HubAction]) -> [String] {
        actions.compactMap { if case let .store(.load(_, board, _, _)) = $0 { board.key } else { nil } }
    }

    /// `board` is a board key (`BoardAddress.key`): "k" a letter board, "set/t" a Set table.
    @discardableResult
    mutating func join(_ connection: UInt64, board: String = "k", stored: StoredBoard? = nil, grant: Grant? = nil) -> [HubAction] {
        handle(.upgraded(connection: connection, board: BoardAddress(key: board), grant: grant), stored: stored)
    }

    @discardableResult
    mutating func leave(_ connection: UInt64) -> [HubAction] { handle(.left(connection: connection)) }

    /// The end of a loop's turn: records go to `inFlight`, the publishes come back.
    @discardableResult
    mutating func turn() -> [HubAction] { handle(.turnEnded) }

    /// The letter board `board`'s room.
    func letters(_ board: String = "k") -> KindRoom<LetterBoard>? {
        core.boards[board] as? KindRoom<LetterBoard>
    }

    /// Ends the turn, so what the core recorded is in `inFlight` (handed to
    /// the store); returns the turn's other actions.
    @discardableResult
    mutating func hold() -> [HubAction] { turn() }

    /// Commits everything recorded so far, as the store would, and ends the
    /// turn. A board published before the commit and again after shows once,
    /// as of after.
    mutating func commit() -> [HubAction] {
        let before = hold()
        let records = inFlight
        inFlight = []
        let after = handle(.store(.committed(records))) + turn()
        let republished = Set(after.compactMap { if case let .publish(p) = $0 { p.board } else { nil } })
        return before.filter { if case let .publish(p) = $0 { !republished.contains(p.board) } else { true } } + after
    }

    static func frames(_ actions: [HubAction], to connection: UInt64) -> [[String: Any]] {
        actions.compactMap { action -> [String: Any]? in
            switch action {
            case let .send(id, text) where id == connection: return json(text)
            case let .relay(text, ids) where ids.contains(connection): return json(text)
            default: return nil
            }
        }
    }

    static func published(_ actions: [HubAction]) -> [String: Any]? {
        for case let .publish(published) in actions { return json(published.frame) }
        return nil
    }

    static func json(_ text: String) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }

    /// An `ops` frame with select operations of `replica`, seqs and Lamport times given.
    static func selects(_ replica: UInt64, _ entries: [(seq: UInt64, lamport: UInt64, letter: String)], ref: String) -> String {
        let ops = entries.map { #"{"id":[\#(replica),\#($0.seq)],"lamport":\#($0.lamport),"change":{"op":"select","# +
                                #""letter":"\#($0.letter)"}}"# }
        return #"{"type":"ops","ref":"\#(ref)","operations":[\#(ops.joined(separator: ","))]}"#
    }
}
