import BoardCRDT
import SyncWire
import WebSocketLoop

/// A kind `syncclient watch` mirrors and plays: its wire adapter plus its
/// terminal screen. One conformance per kind, in `Kinds/NAME`.
protocol WatchedKind: WireKind {
    /// Runs `watch` on a board of this kind until the person quits.
    static func watch(url: WebSocketURL, boardName: String, name: String?, interactive: Bool)
}

/// The one table of kinds the terminal client knows: adding a kind is one line here.
enum WatchedKinds {
    static let all: [any WatchedKind.Type] = [LetterBoard.self, SetTable.self, FruitStock.self, TodoList.self, BanchanShop.self]

    /// The kind of a board path `/SEGMENT/NAME` (NAME non-empty).
    static func kind(ofPath path: String) -> (any WatchedKind.Type)? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].isEmpty, !parts[2].isEmpty else { return nil }
        return all.first { $0.pathSegment == parts[1] }
    }
}
