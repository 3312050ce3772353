/// Who made an operation. Every replica (the hub, each client replica) picks a
/// fresh random id when it starts, and a new one when it has to rebase (see
/// `Replica.adopt(_:)`), so ids are never reused with a different history.
public struct ReplicaID: RawRepresentable, Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    /// A fresh id from the system's random source.
    public static func random() -> ReplicaID {
        var generator = SystemRandomNumberGenerator()
        return ReplicaID(UInt64.random(in: 1...UInt64.max >> 1, using: &generator))
    }

    public static func < (a: ReplicaID, b: ReplicaID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { String(rawValue, radix: 16) }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(UInt64.self)
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// The identity of one operation: its replica and that replica's sequence
/// number (1, 2, 3, ... with no gaps).
public struct OperationID: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    public var replica: ReplicaID
    public var seq: UInt64
    public init(replica: ReplicaID, seq: UInt64) {
        self.replica = replica
        self.seq = seq
    }
    public static func < (a: OperationID, b: OperationID) -> Bool {
        (a.replica, a.seq) < (b.replica, b.seq)
    }
    public var description: String { "\(replica):\(seq)" }

    /// Encoded as the two-element array `[replica, seq]` to keep frames small.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        replica = try container.decode(ReplicaID.self)
        seq = try container.decode(UInt64.self)
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(replica)
        try container.encode(seq)
    }
}

/// A position in the total order every replica agrees on: Lamport time first,
/// then replica id to break ties. Replaying operations in stamp order through
/// a kind's sequential rules defines the board's state.
public struct Stamp: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    public var lamport: UInt64
    public var replica: ReplicaID
    public init(lamport: UInt64, replica: ReplicaID) {
        self.lamport = lamport
        self.replica = replica
    }
    /// Before every real operation.
    public static let origin = Stamp(lamport: 0, replica: ReplicaID(0))

    public static func < (a: Stamp, b: Stamp) -> Bool {
        (a.lamport, a.replica) < (b.lamport, b.replica)
    }
    public var description: String { "\(lamport)@\(replica)" }
}
