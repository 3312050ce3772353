/// Which kind of board a bench drives (`--kind`): one of `WatchedKinds.all`,
/// by its name, with the driver its folder declares (`WatchedKind.Bench`).
struct BenchKind: Sendable {
    let kind: any WatchedKind.Type

    /// The table's first kind, the letter board: the default.
    static var first: BenchKind { BenchKind(kind: WatchedKinds.all[0]) }

    var name: String { kind.name }
    var pathSegment: String { kind.pathSegment }
    var driver: any BenchDriver.Type { kind.bench }

    init(kind: any WatchedKind.Type) {
        self.kind = kind
    }

    /// The kind called `name` (`letters`, `set`, ...), or nil.
    init?(named name: String) {
        guard let kind = WatchedKinds.all.first(where: { $0.name == name }) else { return nil }
        self.kind = kind
    }

    /// `--kind`'s help: each kind, what its clients do, and where.
    static var optionHelp: String {
        let kinds = WatchedKinds.all.map { "\($0.name) (\($0.bench.optionHelp) on /\($0.pathSegment)/NAME)" }
        return "Kind of board: " + kinds.dropLast().joined(separator: ", ") + " or " + (kinds.last ?? "") + "."
    }

    /// `bench --help`'s paragraph per kind.
    static var discussion: String {
        WatchedKinds.all.map { "With --kind \($0.name) the boards are \($0.bench.discussion)" }.joined(separator: " ")
    }
}
