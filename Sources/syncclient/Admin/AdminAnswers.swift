/// The console API's answers (docs/ADMIN.md, O11-O12), as far as the tables
/// show them: fields may be added to the API, so unknown ones are ignored;
/// a missing one that a table needs is an error the person sees. Decoded
/// with `convertFromSnakeCase` (`cpu_percent` is `cpuPercent`).
enum AdminAnswers {
    struct Hubs: Decodable {
        struct Hub: Decodable {
            var id: String
            var address: String
            var connections: Int
            var boards: Int
            var cpuPercent: Double
            var rssBytes: Int
        }
        var hubs: [Hub]
    }

    struct Boards: Decodable {
        struct Board: Decodable {
            var kind: String
            var name: String
            var connections: Int
            var perHub: [String: Int]
            var version: Int
            var frozen: Bool
            var changesPerMinute: Double
        }
        var stored: Int
        var boards: [Board]
    }

    struct Board: Decodable {
        /// A change as its hub acknowledged or refused it. Who made it is
        /// unknown on an open hub, and a refused change made no version.
        struct Change: Decodable {
            var time: String
            var sub: String?
            var name: String?
            var hub: String?
            var intent: JSONValue
            var answer: String
            var version: Int?
        }
        struct Connection: Decodable {
            var id: String
            var name: String?
            var sub: String?
            var role: String?
            var hub: String?
            var address: String?
            var since: String?
            var client: String?
            var queuedBytes: Int?
        }
        var kind: String
        var name: String
        var version: Int
        var frozen: Bool
        var changes: [Change]
        var connections: [Connection]
    }

    struct Audit: Decodable {
        struct Entry: Decodable {
            var time: String
            var sub: String?
            var action: String
            var target: String?
            var result: String
        }
        var entries: [Entry]
    }

    /// An action's answer: `{"ok":true,...}`.
    struct Done: Decodable {
        var ok: Bool
        var closed: Int?
        var version: Int?
        /// The other hubs of the cluster asked to carry the action out (O5, O8).
        var sentTo: [String]?

        enum CodingKeys: String, CodingKey {
            case ok, closed, version
            case sentTo = "sent_to"
        }
    }

    /// A refusal's body: `{"error":CODE,"message":TEXT}`.
    struct Refusal: Decodable {
        var error: String
        var message: String?
    }
}

/// Any JSON value (an intent as a change carried it), shown compactly.
indirect enum JSONValue: Decodable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }
}
