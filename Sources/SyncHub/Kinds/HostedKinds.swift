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
}

extension HostedKind {
    static var storesUnderBareName: Bool { false }

    /// A room holding a board of this kind, loaded from what the store holds.
    static func makeRoom(address: BoardAddress, hubReplica: ReplicaID, stored: StoredBoard?, limits: HubLimits) throws -> BoardRoom {
        try KindRoom<Self>(address: address, hubReplica: hubReplica, stored: stored, limits: limits)
    }
}

/// The one table of kinds: adding a kind is one line here (and its files in
/// `Kinds/NAME` folders of BoardCRDT, SyncWire, syncclient and `Web/`).
enum HostedKinds {
    static let all: [any HostedKind.Type] = [LetterBoard.self, SetTable.self, FruitStock.self, TodoList.self, BanchanShop.self]

    /// The kind whose boards live under `/segment/NAME`.
    static func kind(pathSegment segment: Substring) -> (any HostedKind.Type)? {
        all.first { $0.pathSegment == segment }
    }

    static func kind(named name: String) -> (any HostedKind.Type)? {
        all.first { $0.name == name }
    }

    /// The kind whose boards are stored under their bare name.
    static var bareNamed: (any HostedKind.Type)? { all.first { $0.storesUnderBareName } }
}

extension LetterBoard: HostedKind {
    static let page = "index.html"
    static let storesUnderBareName = true
}

extension SetTable: HostedKind {
    static let page = "set.html"
}

extension FruitStock: HostedKind {
    static let page = "stock.html"
}

extension TodoList: HostedKind {
    static let page = "todo.html"
}

extension BanchanShop: HostedKind {
    static let page = "shop.html"
}
