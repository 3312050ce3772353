import ArgumentParser
import WebSocketLoop

/// What an admin command points at, checked before anything is sent (a
/// usage error, exit 2): the hub's console, a board, a connection, a hub.
/// docs/ADMIN.md, "Identities".
enum AdminTargets {
    /// `http://HOST:PORT` or `https://HOST:PORT` (a trailing `/` allowed),
    /// as the `WebSocketURL` of the same hub (`isSecure` for https, path `/`).
    static func hub(_ text: String) throws -> WebSocketURL {
        let socketForm: String
        if text.hasPrefix("http://") {
            socketForm = "ws://" + text.dropFirst(7)
        } else if text.hasPrefix("https://") {
            socketForm = "wss://" + text.dropFirst(8)
        } else {
            throw ValidationError("URL must be the hub's http://HOST:PORT or https://HOST:PORT, not \(text)")
        }
        // The host goes into the request's head: letters, digits, `-._~`, or an IPv6 address in brackets.
        let hostBytes = Set(":[]".utf8)
        guard let url = WebSocketURL(socketForm), url.path == "/", url.host.utf8.allSatisfy({ isUnreserved($0) || hostBytes.contains($0) })
        else {
            throw ValidationError("URL must be the hub's http://HOST:PORT or https://HOST:PORT, without a path: not \(text)")
        }
        return url
    }

    /// A board as `KIND/NAME`: a kind `syncclient` knows and a name as
    /// docs/PROTOCOL.md allows (1 to 64 of `A-Z a-z 0-9 . _ -`, not starting with `.`).
    static func board(_ text: String) throws -> String {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, kinds.contains(String(parts[0])) else {
            throw ValidationError("a board is KIND/NAME with KIND one of \(kinds.joined(separator: ", ")): not \(text)")
        }
        let name = parts[1].utf8
        guard (1...64).contains(name.count), name.first != UInt8(ascii: "."),
              name.allSatisfy({ isUnreserved($0) && $0 != UInt8(ascii: "~") }) else {
            throw ValidationError("a board's NAME is 1 to 64 of A-Z a-z 0-9 . _ -, not starting with '.': not \(text)")
        }
        return text
    }

    /// The kinds' path segments (`boards`, `set`, ...), from the one table of kinds.
    static var kinds: [String] { WatchedKinds.all.map { $0.pathSegment } }

    /// A connection as `HUB/N`: a hub's id, then its connection number.
    static func connection(_ text: String) throws -> String {
        guard let slash = text.lastIndex(of: "/"), slash != text.startIndex,
              case let number = text[text.index(after: slash)...],
              (1...20).contains(number.count), number.utf8.allSatisfy({ (48...57).contains($0) }) else {
            throw ValidationError("a connection is HUB/N, a hub's id and a number (as admin board lists them): not \(text)")
        }
        return text
    }

    /// A hub's id as one path segment, escaped (an id is `--hub-id`'s free
    /// text, or `hub` for a hub without Redis).
    static func hubSegment(_ id: String) throws -> String {
        guard !id.isEmpty, id != ".", id != ".." else {
            throw ValidationError("HUB is a hub's id, as admin hubs lists them: not \"\(id)\"")
        }
        return escaped(id)
    }

    /// A value that must not be empty (a `sub`, a `jti`, a name).
    static func nonEmpty(_ text: String, _ flag: String) throws -> String {
        guard !text.isEmpty else { throw ValidationError("\(flag) must not be empty") }
        return text
    }

    /// `text` percent-escaped for a path segment or a query value: every
    /// byte but RFC 3986's unreserved ones.
    static func escaped(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            if isUnreserved(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}
