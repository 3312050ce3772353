/// One Redis reply, copied out of hiredis (RESP2).
enum RedisReply: Equatable, Sendable {
    case status(String)
    case error(String)
    case integer(Int64)
    case bulk([UInt8])
    case null
    case array([RedisReply])

    /// Text of a bulk or status reply.
    var text: String? {
        switch self {
        case let .bulk(bytes): String(decoding: bytes, as: UTF8.self)
        case let .status(text): text
        case let .integer(value): String(value)
        default: nil
        }
    }

    var elements: [RedisReply] {
        if case let .array(items) = self { return items }
        return []
    }

    var integer: Int64? {
        switch self {
        case let .integer(value): value
        case let .bulk(bytes): Int64(String(decoding: bytes, as: UTF8.self))
        default: nil
        }
    }

    /// The error text, when Redis answered an error.
    var errorText: String? {
        if case let .error(text) = self { return text }
        return nil
    }
}

/// Why a Redis call failed: the connection (refused, reset, timed out) or
/// Redis itself (an error reply such as OOM, READONLY, LOADING).
struct RedisFailure: Error, CustomStringConvertible, Sendable {
    enum Reason: String, Sendable {
        case connect, timeout, io, protocolError = "protocol", reply, script
        /// R15: a read waited out a fence until nobody waited for it (the server answers).
        case fenced
        /// A stored value the hub cannot read (a snapshot cut or corrupt):
        /// the board's trouble, not the server's (it answers).
        case unreadable
    }
    var reason: Reason
    var message: String

    /// The metric label: the reason, or the error reply's first word (OOM, READONLY...).
    var label: String {
        if reason == .reply || reason == .script, let word = message.split(separator: " ").first {
            let code = word.filter { $0.isLetter }
            if !code.isEmpty, code == code.uppercased() { return code.lowercased() }
        }
        return reason.rawValue
    }

    var description: String { "redis \(reason.rawValue): \(message)" }
}
