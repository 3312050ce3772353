/// One change made by one replica, stamped for the total order.
public struct Operation<Change: Equatable & Codable & Sendable>: Equatable, Codable, Sendable {
    public var id: OperationID
    public var lamport: UInt64
    public var change: Change

    public init(id: OperationID, lamport: UInt64, change: Change) {
        self.id = id
        self.lamport = lamport
        self.change = change
    }

    public var stamp: Stamp { Stamp(lamport: lamport, replica: id.replica) }
}
