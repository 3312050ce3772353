import BoardCRDT
import SyncWire

/// A kind the hub hosts: its rules (`BoardKind`), its wire adapter
/// (`WireKind`) and the browser page that plays it. The hub core, the store,
/// presence, limits and metrics handle every kind alike through `KindRoom`.
protocol HostedKind: WireKind {
    /// The page under `Sources/SyncHub/Web` a GET of a board's path serves.
    static var page: String { get }
    /// Its boards are stored under their bare name (the letter board, stored
    /// before kinds existed); every other kind under `kind/NAME`.
    static var storesUnderBareName: Bool { get }
    /// The room holding its boards: a `final class` in its `Kinds/NAME/`
    /// folder, `KindRoom<Self>` with the hot entry points overridden by
    /// super calls, so that the optimiser compiles them for this kind (see
    /// `KindRoom`; `Kinds/Shop/BanchanShop+Hosted.swift` is one).
    associatedtype Room: KindRoom<Self>
}

extension HostedKind {
    static var storesUnderBareName: Bool { false }

    /// A room holding a board of this kind, loaded from what the store holds.
    static func makeRoom(address: BoardAddress, hubReplica: ReplicaID, stored: StoredBoard?, limits: HubLimits) throws -> BoardRoom {
        try Room(address: address, hubReplica: hubReplica, stored: stored, limits: limits)
    }
}

/// The one table of kinds: adding a kind is one line here and its folder
/// `Kinds/NAME/` (its `HostedKind` conformance and room), besides its
/// `Kinds/NAME` folders of BoardCRDT, SyncWire, syncclient and `Web/`.
enum HostedKinds {
    static let all: [any HostedKind.Type] = [LetterBoard.self, SetTable.self, FruitStock.self, TodoList.self, BanchanShop.self]

    /// The kind whose boards live under `/segment/NAME`.
    static func kind(pathSegment segment: Substring) -> (any HostedKind.Type)? {
        all.first { $0.pathSegment == segment }
    }

    static func kind(named name: String) -> (any HostedKind.Type)? {
        all.first { $0.name == name }
    }

    /// Every kind's board path, `/SEGMENT/NAME`, the letter board's first (for messages).
    static var paths: String { all.map { "/\($0.pathSegment)/NAME" }.joined(separator: ", ") }

    /// The kind whose boards are stored under their bare name.
    static var bareNamed: (any HostedKind.Type)? { all.first { $0.storesUnderBareName } }
}
