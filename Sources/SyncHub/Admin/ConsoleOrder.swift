import Foundation

/// What a hub's console asks another hub of the cluster to do (O5, O8),
/// through Redis (`ClusterConsole`): close connections with 4409, or drain.
/// The hub that carries it out keeps it in the audit with what it did.
struct ConsoleOrder: Sendable, Equatable {
    enum Action: Sendable, Equatable {
        /// One connection of the hub (its number), every connection of a
        /// `sub`, or of a name on a board (`KIND/NAME`).
        case disconnect(connection: UInt64?, sub: String?, name: String?, board: String?)
        case drain
    }

    var action: Action
    /// The admin's `sub`, the address the request came from, and the hub it came to.
    var by: String
    var address: String
    var via: String

    var json: String {
        var object: [String: Any] = ["by": by, "address": address, "via": via]
        switch action {
        case let .disconnect(connection, sub, name, board):
            object["action"] = "disconnect"
            if let connection { object["connection"] = connection }
            if let sub { object["sub"] = sub }
            if let name { object["name"] = name }
            if let board { object["board"] = board }
        case .drain:
            object["action"] = "drain"
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    init(action: Action, by: String, address: String, via: String) {
        (self.action, self.by, self.address, self.via) = (action, by, address, via)
    }

    /// An order as `json` wrote it; nil for anything else (skipped, never guessed at).
    init?(json text: String) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
              let by = object["by"] as? String, let address = object["address"] as? String,
              let via = object["via"] as? String else { return nil }
        switch object["action"] as? String {
        case "disconnect":
            let connection = (object["connection"] as? NSNumber).map { $0.uint64Value }
            let sub = object["sub"] as? String, name = object["name"] as? String, board = object["board"] as? String
            guard (connection != nil ? 1 : 0) + (sub != nil ? 1 : 0) + (name != nil ? 1 : 0) == 1, name == nil || board != nil else {
                return nil
            }
            action = .disconnect(connection: connection, sub: sub, name: name, board: board)
        case "drain":
            action = .drain
        default:
            return nil
        }
        (self.by, self.address, self.via) = (by, address, via)
    }
}
