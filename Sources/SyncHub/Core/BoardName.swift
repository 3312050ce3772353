/// Board names and request paths (CONTRACT): `/boards/NAME`, NAME 1 to 64 of
/// `A-Z a-z 0-9 . _ -`, not starting with `.`.
enum BoardPath {
    static let prefix = "/boards/"

    /// The board a path names, or why it names none (HTTP status and message).
    static func boardName(inPath path: String) -> Result<String, PathRefusal> {
        guard path.hasPrefix(prefix) else {
            return .failure(PathRefusal(status: 404, message: "no such endpoint: boards live at /boards/NAME"))
        }
        let name = String(path.dropFirst(prefix.count))
        if let problem = problem(with: name) { return .failure(PathRefusal(status: 400, message: problem)) }
        return .success(name)
    }

    /// Why `name` is not a valid board name, or nil when it is.
    static func problem(with name: String) -> String? {
        let bytes = Array(name.utf8)
        if bytes.isEmpty { return "board name missing: use /boards/NAME" }
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
