/// Which board a path names: its kind and its name (K1, docs/rules/README.md).
/// `set/kitchen` and `todo/kitchen` are different boards.
struct BoardAddress: Hashable, Sendable, CustomStringConvertible {
    /// The kind's name (`HostedKind.name`): "letters", "set".
    var kind: String
    var name: String

    /// The board's key in the hub and the store: the bare name for the
    /// kind stored that way (`HostedKind.storesUnderBareName`: the letter
    /// board, stored before kinds existed), `kind/name` for the others.
    /// Names never hold a `/`, so keys never collide.
    var key: String { HostedKinds.kind(named: kind)?.storesUnderBareName == true ? name : kind + "/" + name }
    var description: String { key }
    /// The board's name in a shared log (cluster mode): `KIND/NAME` for every kind.
    var logName: String { kind + "/" + name }
    /// The first part of the board's URL path (`boards` for the letter board).
    var pathSegment: String { HostedKinds.kind(named: kind)?.pathSegment ?? kind }

    init(kind: String, name: String) {
        self.kind = kind
        self.name = name
    }

    /// The address a key names (see `key`).
    init(key: String) {
        if let slash = key.firstIndex(of: "/") {
            self.init(kind: String(key[..<slash]), name: String(key[key.index(after: slash)...]))
        } else {
            self.init(kind: HostedKinds.bareNamed?.name ?? "", name: key)
        }
    }

    /// The board a request path names (`/boards/NAME`, `/set/NAME`, ...), or
    /// why it names none (HTTP status and message).
    static func parse(path: String) -> Result<BoardAddress, PathRefusal> {
        let parts = path.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].isEmpty, let slash = parts[1].firstIndex(of: "/"),
              let kind = HostedKinds.kind(pathSegment: parts[1][..<slash]) else {
            return .failure(PathRefusal(status: 404, message: "no such endpoint: boards live at \(HostedKinds.paths)"))
        }
        let name = String(parts[1][parts[1].index(after: slash)...])
        if let problem = problem(with: name, segment: kind.pathSegment) { return .failure(PathRefusal(status: 400, message: problem)) }
        return .success(BoardAddress(kind: kind.name, name: name))
    }

    /// Why `name` is not a valid board name, or nil when it is (K1:
    /// 1 to 64 of `A-Z a-z 0-9 . _ -`, not starting with `.`).
    static func problem(with name: String, segment: String) -> String? {
        let bytes = Array(name.utf8)
        if bytes.isEmpty { return "board name missing: use /\(segment)/NAME" }
        if bytes.count > 64 { return "board name longer than 64 characters" }
        if bytes[0] == UInt8(ascii: ".") { return "board name must not start with '.'" }
        for byte in bytes where !isNameByte(byte) {
            return "board names use only A-Z a-z 0-9 . _ -"
        }
        return nil
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }
}

struct PathRefusal: Error, Equatable {
    var status: UInt32
    var message: String
}
