import Foundation
import SyncWire

/// The console API's answers as `syncclient admin` shows them to a person
/// (pure: a body in, text out). Reads become tables (`AdminTable`), actions
/// one line. A body that is not the answer a table needs throws `AdminView.Unreadable`.
enum AdminView {
    /// The answer is not what this client reads; says which field, for a person.
    struct Unreadable: Error, Equatable, CustomStringConvertible {
        let description: String
    }

    /// The board view shows this many of the newest changes (`--json`: all of them).
    static let changesShown = 20
    /// An intent's cell is cut to this many characters.
    static let intentWidth = 60

    static func hubs(_ body: [UInt8]) throws(Unreadable) -> String {
        let answer = try decode(AdminAnswers.Hubs.self, body)
        var table = AdminTable([.init(title: "ID"), .init(title: "ADDRESS"), .init(title: "CONNECTIONS", alignment: .right),
                                .init(title: "BOARDS", alignment: .right), .init(title: "CPU", alignment: .right),
                                .init(title: "RSS", alignment: .right)])
        for hub in answer.hubs {
            table.add([hub.id, hub.address, "\(hub.connections)", "\(hub.boards)",
                       String(format: "%.1f%%", hub.cpuPercent), size(hub.rssBytes)])
        }
        return (table.lines + [answer.hubs.isEmpty ? "no live hubs" : count(answer.hubs.count, "hub")]).joined(separator: "\n")
    }

    static func boards(_ body: [UInt8]) throws(Unreadable) -> String {
        let answer = try decode(AdminAnswers.Boards.self, body)
        var table = AdminTable([.init(title: "BOARD"), .init(title: "CONNECTIONS", alignment: .right), .init(title: "PER HUB"),
                                .init(title: "VERSION", alignment: .right), .init(title: "FROZEN"),
                                .init(title: "CHANGES/MIN", alignment: .right)])
        for board in answer.boards {
            let perHub = board.perHub.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            table.add(["\(board.kind)/\(board.name)", "\(board.connections)", perHub, "\(board.version)",
                       board.frozen ? "yes" : "no", rate(board.changesPerMinute)])
        }
        let summary = "\(count(answer.boards.count, "board")) with connections; \(answer.stored) stored"
        return (table.lines + [summary]).joined(separator: "\n")
    }

    static func board(_ body: [UInt8]) throws(Unreadable) -> String {
        let answer = try decode(AdminAnswers.Board.self, body)
        var lines = [HubWords.printable("\(answer.kind)/\(answer.name)  version \(answer.version)  "
                                        + (answer.frozen ? "frozen" : "not frozen"))]
        lines += ["", "LAST CHANGES (newest first)"]
        if answer.changes.isEmpty {
            lines.append("none")
        } else {
            var changes = AdminTable([.init(title: "TIME"), .init(title: "SUB"), .init(title: "NAME"), .init(title: "HUB"),
                                      .init(title: "INTENT"), .init(title: "ANSWER"), .init(title: "VERSION", alignment: .right)])
            for change in answer.changes.prefix(changesShown) {
                changes.add([change.time, shown(change.sub), shown(change.name), shown(change.hub), cut(change.intent.compact),
                             change.answer, change.version.map { "\($0)" } ?? "-"])
            }
            lines += changes.lines
            if answer.changes.count > changesShown {
                lines.append("(the newest \(changesShown) of \(answer.changes.count); --json shows them all)")
            }
        }
        lines += ["", "CONNECTIONS"]
        if answer.connections.isEmpty {
            lines.append("none")
        } else {
            var connections = AdminTable([.init(title: "ID"), .init(title: "NAME"), .init(title: "SUB"), .init(title: "ROLE"),
                                          .init(title: "HUB"), .init(title: "ADDRESS"), .init(title: "SINCE"),
                                          .init(title: "CLIENT"), .init(title: "QUEUED", alignment: .right)])
            for connection in answer.connections {
                connections.add([connection.id, shown(connection.name), shown(connection.sub), shown(connection.role),
                                 shown(connection.hub), shown(connection.address), shown(connection.since),
                                 shown(connection.client), connection.queuedBytes.map(size) ?? "-"])
            }
            lines += connections.lines
        }
        return lines.joined(separator: "\n")
    }

    static func audit(_ body: [UInt8]) throws(Unreadable) -> String {
        let answer = try decode(AdminAnswers.Audit.self, body)
        var table = AdminTable([.init(title: "TIME"), .init(title: "SUB"), .init(title: "ACTION"), .init(title: "TARGET"),
                                .init(title: "RESULT")])
        for entry in answer.entries {
            table.add([entry.time, shown(entry.sub), entry.action, shown(entry.target), entry.result])
        }
        return (table.lines + [answer.entries.isEmpty ? "no actions yet" : count(answer.entries.count, "entry", "entries")])
            .joined(separator: "\n")
    }

    /// An action's line: `said` turns its `{"ok":true,...}` into words.
    static func done(_ body: [UInt8], _ said: (AdminAnswers.Done) -> String) throws(Unreadable) -> String {
        let answer = try decode(AdminAnswers.Done.self, body)
        guard answer.ok else { throw Unreadable(description: "the hub answered \"ok\": false without an error") }
        return HubWords.printable(said(answer))
    }

    static func decode<Answer: Decodable>(_ type: Answer.Type, _ body: [UInt8]) throws(Unreadable) -> Answer {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        do {
            return try decoder.decode(type, from: Data(body))
        } catch let DecodingError.keyNotFound(key, context) {
            throw Unreadable(description: "no \"\(path(context.codingPath + [key]))\" in the hub's answer")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw Unreadable(description: "\"\(path(context.codingPath))\" in the hub's answer is not what this client reads")
        } catch {
            throw Unreadable(description: "the hub's answer is not the JSON this client reads")
        }
    }

    /// `boards[3].per_hub` for a person (the API's own snake_case names).
    private static func path(_ keys: [any CodingKey]) -> String {
        var text = ""
        for key in keys {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                let snake = key.stringValue.reduce(into: "") { out, letter in
                    out += letter.isUppercase ? "_" + letter.lowercased() : String(letter)
                }
                text += (text.isEmpty ? "" : ".") + snake
            }
        }
        return text
    }

    /// `1 hub`, `3 hubs`.
    static func count(_ number: Int, _ one: String, _ many: String? = nil) -> String {
        "\(number) \(number == 1 ? one : many ?? one + "s")"
    }

    /// Bytes for a person: `512 B`, `5.0 KiB`, `70.0 MiB`.
    static func size(_ bytes: Int) -> String {
        guard bytes >= 1024 else { return "\(bytes) B" }
        var value = Double(bytes) / 1024
        for unit in ["KiB", "MiB", "GiB"] {
            if value < 1024 || unit == "GiB" { return String(format: "%.1f", value) + " " + unit }
            value /= 1024
        }
        return "\(bytes) B"
    }

    /// A rate: whole when it is whole (`12`), else one decimal (`0.5`).
    static func rate(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? "\(Int(value))" : String(format: "%.1f", value)
    }

    /// A cell the hub may leave out, null or empty (no `sub` on an open hub): `-` then.
    private static func shown(_ text: String?) -> String {
        guard let text, !text.isEmpty else { return "-" }
        return text
    }

    private static func cut(_ text: String) -> String {
        text.count <= intentWidth ? text : String(text.prefix(intentWidth - 1)) + "…"
    }
}

extension JSONValue {
    /// On one line; an object's `type` or `op` first (what it is: an
    /// intent says `type`, a change as stored `op`), then its keys in order.
    var compact: String {
        switch self {
        case .null: return "null"
        case let .bool(value): return value ? "true" : "false"
        case let .number(value):
            if abs(value) < 1e15, let whole = Int(exactly: value) { return "\(whole)" }
            return "\(value)"
        case let .string(text):
            var out = ""
            HubMessage.appendJSONString(text, to: &out)
            return out
        case let .array(items): return "[" + items.map(\.compact).joined(separator: ",") + "]"
        case let .object(members):
            let rank = { (key: String) in key == "type" ? 0 : key == "op" ? 1 : 2 }
            let keys = members.keys.sorted { (rank($0), $0) < (rank($1), $1) }
            return "{" + keys.map { key in JSONValue.string(key).compact + ":" + (members[key]?.compact ?? "null") }
                .joined(separator: ",") + "}"
        }
    }
}
