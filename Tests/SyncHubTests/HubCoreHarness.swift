import BoardCRDT
import Foundation
import SyncWire
@testable import SyncHub

/// Drives a `HubCore` with no socket and no store, holding back commits
/// when a test needs a change in flight.
struct HubCoreHarness {
    var core: HubCore
    /// Records taken from the core and not yet committed.
    var inFlight: [DurableRecord] = []

    init(limits: HubLimits = HubLimits(), hubReplica: ReplicaID = ReplicaID(1)) {
        core = HubCore(hubReplica: hubReplica, limits: limits)
    }

    /// Parses `text` as the board of `connection` would (the shell's path).
    @discardableResult
    mutating func send(_ connection: UInt64, _ text: String) -> [HubAction] {
        var text = text
        guard let frame = text.withUTF8({ core.parse(connection: connection, UnsafeRawBufferPointer($0)) }) else { return [] }
        return core.handle(.frame(connection: connection, frame))
    }

    /// `board` is a board key (`BoardAddress.key`): "k" a letter board, "set/t" a Set table.
    @discardableResult
    mutating func join(_ connection: UInt64, board: String = "k", stored: StoredBoard? = nil) -> [HubAction] {
        core.handle(.joined(connection: connection, board: BoardAddress(key: board), stored: stored))
    }

    /// The letter board `board`'s room.
    func letters(_ board: String = "k") -> KindRoom<LetterBoard>? {
        core.boards[board] as? KindRoom<LetterBoard>
    }

    /// Takes what the core recorded into `inFlight` (handed to the store).
    mutating func hold() {
        inFlight += core.takeRecords()
    }

    /// Commits everything recorded so far, as the store would.
    mutating func commit() -> [HubAction] {
        hold()
        let records = inFlight
        inFlight = []
        return core.handle(.committed(records)) + core.publishChanged()
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
        let ops = entries.map { #"{"id":[\#(replica),\#($0.seq)],"lamport":\#($0.lamport),"change":{"op":"select","letter":"\#($0.letter)"}}"# }
        return #"{"type":"ops","ref":"\#(ref)","operations":[\#(ops.joined(separator: ","))]}"#
    }
}
