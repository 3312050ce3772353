import ArgumentParser
import BoardCRDT
import SyncWire
import WebSocketLoop

/// A kind `syncclient` mirrors, plays and load-tests: its wire adapter, its
/// terminal screen, its bench driver and its lines in the commands' help.
/// One conformance per kind, in `Kinds/NAME`.
protocol WatchedKind: WireKind, SendableMetatype {
    /// Its `syncclient bench --kind NAME` driver (`Kinds/NAME/NAMEBench.swift`).
    associatedtype Bench: BenchDriver where Bench.Kind == Self
    /// Runs `watch` on a board of this kind until the person quits.
    static func watch(url: WebSocketURL, boardName: String, name: String?, interactive: Bool)
    /// Its keys in `watch --help`: "Set tables (/set/NAME): arrows move the cursor, ...".
    static var watchKeys: String { get }
    /// An intent `send` can carry to a board of this kind, for `send --help`.
    static var sendExample: String { get }
    /// Its own `syncclient` subcommands (`stock`, `shop`, ...), if any.
    static var commands: [any ParsableCommand.Type] { get }
}

extension WatchedKind {
    static var bench: any BenchDriver.Type { Bench.self }
    static var commands: [any ParsableCommand.Type] { [] }
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

    /// Every kind's board URL, `ws://HOST:PORT/SEGMENT/NAME`, the letter board's first.
    static var urls: String { all.map { "ws://HOST:PORT/\($0.pathSegment)/NAME" }.joined(separator: ", ") }
}
