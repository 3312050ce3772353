/// For each replica, the highest sequence number integrated with no gap
/// before it. Two replicas with equal version vectors hold the same set of
/// operations, because each replica's operations are integrated in sequence.
public struct VersionVector: Hashable, Codable, Sendable {
    public private(set) var entries: [ReplicaID: UInt64]

    public init(_ entries: [ReplicaID: UInt64] = [:]) { self.entries = entries }

    public subscript(replica: ReplicaID) -> UInt64 {
        get { entries[replica] ?? 0 }
        set { entries[replica] = newValue == 0 ? nil : newValue }
    }

    /// Whether `id` is among the operations this vector describes.
    public func covers(_ id: OperationID) -> Bool { id.seq <= self[id.replica] }

    /// Whether every operation described by `other` is described by `self`.
    public func dominates(_ other: VersionVector) -> Bool {
        other.entries.allSatisfy { self[$0.key] >= $0.value }
    }

    public init(from decoder: any Decoder) throws {
        // Encoded as [[replica, seq], ...]: JSON objects cannot have integer keys.
        let pairs = try decoder.singleValueContainer().decode([OperationID].self)
        entries = [:]
        for pair in pairs where pair.seq > 0 {
            // Counting on from a sequence number near 2^64 would overflow.
            guard pair.seq <= UInt64.max >> 2 else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                        debugDescription: "sequence number \(pair.seq) is beyond 2^62"))
            }
            entries[pair.replica] = max(entries[pair.replica] ?? 0, pair.seq)
        }
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(entries.sorted { $0.key < $1.key }.map { OperationID(replica: $0.key, seq: $0.value) })
    }
}
