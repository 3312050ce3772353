import BoardCRDT
import SyncWire

extension FruitStock: HostedKind {
    static let page = "stock.html"
    typealias Room = StockRoom
}

/// The fruit stock's room: `KindRoom`'s hot entry points called with a
/// concrete kind, so the optimiser compiles them (and all they call) for
/// `FruitStock`. Every kind's room overrides the same six.
final class StockRoom: KindRoom<FruitStock> {
    override func parse(_ bytes: UnsafeRawBufferPointer) -> ParsedFrame { super.parse(bytes) }
    override func receive(_ frame: ParsedFrame, from connection: UInt64, core: inout HubCore, actions: inout [HubAction]) {
        super.receive(frame, from: connection, core: &core, actions: &actions)
    }
    override func committed(_ record: DurableRecord, core: inout HubCore, actions: inout [HubAction], afterReplies: inout [HubAction]) {
        super.committed(record, core: &core, actions: &actions, afterReplies: &afterReplies)
    }
    override func stateShape() -> StateShape { super.stateShape() }
    override func durableSeq(of replica: ReplicaID) -> UInt64 { super.durableSeq(of: replica) }
    override func applyShared(_ entries: [SharedLogEntry], core: inout HubCore, actions: inout [HubAction]) -> Bool {
        super.applyShared(entries, core: &core, actions: &actions)
    }
}
