import SyncWire

/// One row of `GET /admin/api/boards` (O3, O11): built by the hub that
/// holds the board, merged across the hubs of a cluster (`AdminBoardMerge`),
/// written as JSON only when a console asks. Between hubs (through Redis,
/// `ClusterConsole`) a row travels as one tab-separated line, read without
/// a JSON parser: a console open on a busy cluster must cost the hubs
/// next to nothing (BENCHMARKS.md, "The operator's console").
struct AdminBoardRow: Equatable, Sendable {
    var kind: String
    var name: String
    var connections: Int
    /// Connections per hub (each hub counts its own).
    var perHub: [String: Int]
    var names: [String]
    var version: UInt64
    var frozen: Bool
    var changesPerMinute: Int
    var bytesPerSecond: Int

    var key: String { kind + "/" + name }

    var json: String {
        var out = "{\"kind\":"
        HubMessage.appendJSONString(kind, to: &out)
        out += ",\"name\":"
        HubMessage.appendJSONString(name, to: &out)
        out += ",\"connections\":\(connections),\"per_hub\":{"
        for (index, hub) in perHub.keys.sorted().enumerated() {
            if index > 0 { out += "," }
            HubMessage.appendJSONString(hub, to: &out)
            out += ":\(perHub[hub] ?? 0)"
        }
        out += "},\"names\":["
        for (index, each) in names.enumerated() {
            if index > 0 { out += "," }
            HubMessage.appendJSONString(each, to: &out)
        }
        out += "],\"version\":\(version),\"frozen\":\(frozen),\"changes_per_minute\":\(changesPerMinute)"
        return out + ",\"bytes_per_second\":\(bytesPerSecond)}"
    }

    // MARK: Between hubs

    /// `kind TAB name TAB connections TAB hub=N US hub=N TAB name US name
    /// TAB version TAB frozen TAB changes TAB bytes` (US: U+001F); `%`,
    /// tab, US, `=` and line breaks inside a field are percent-escaped.
    var line: String {
        let hubs = perHub.keys.sorted().map { Self.escape($0) + "=\(perHub[$0] ?? 0)" }.joined(separator: Self.unit)
        return [Self.escape(kind), Self.escape(name), String(connections), hubs, names.map(Self.escape).joined(separator: Self.unit),
                String(version), frozen ? "1" : "0", String(changesPerMinute), String(bytesPerSecond)].joined(separator: "\t")
    }

    init?(line: Substring) {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
        guard fields.count == 9, let connections = Int(fields[2]), let version = UInt64(fields[5]),
              let changes = Int(fields[7]), let bytes = Int(fields[8]) else { return nil }
        var perHub: [String: Int] = [:]
        for pair in fields[3].split(separator: Character(Self.unit)) {
            guard let equals = pair.lastIndex(of: "="), let count = Int(pair[pair.index(after: equals)...]) else { return nil }
            perHub[Self.unescape(pair[..<equals])] = count
        }
        self.init(kind: Self.unescape(fields[0]), name: Self.unescape(fields[1]), connections: connections, perHub: perHub,
                  names: fields[4].split(separator: Character(Self.unit)).map { Self.unescape($0) }, version: version,
                  frozen: fields[6] == "1", changesPerMinute: changes, bytesPerSecond: bytes)
    }

    init(kind: String, name: String, connections: Int, perHub: [String: Int], names: [String], version: UInt64, frozen: Bool,
         changesPerMinute: Int, bytesPerSecond: Int) {
        (self.kind, self.name, self.connections, self.perHub, self.names) = (kind, name, connections, perHub, names)
        (self.version, self.frozen, self.changesPerMinute, self.bytesPerSecond) = (version, frozen, changesPerMinute, bytesPerSecond)
    }

    /// Rows as the lines of one value (`ClusterConsole`), and back.
    static func lines(_ rows: [AdminBoardRow]) -> String { rows.map(\.line).joined(separator: "\n") }
    static func rows(lines text: Substring) -> [AdminBoardRow] { text.split(separator: "\n").compactMap { AdminBoardRow(line: $0) } }

    private static let unit = "\u{1F}"

    private static func escape(_ text: String) -> String {
        guard text.contains(where: { $0 == "%" || $0 == "\t" || $0 == "\u{1F}" || $0 == "=" || $0.isNewline }) else { return text }
        var out = ""
        for character in text {
            switch character {
            case "%": out += "%25"
            case "\t": out += "%09"
            case "\u{1F}": out += "%1F"
            case "=": out += "%3D"
            case "\n": out += "%0A"
            case "\r": out += "%0D"
            default:
                if character.isNewline {
                    for scalar in character.unicodeScalars { out += "%u" + String(scalar.value, radix: 16) + ";" }
                } else {
                    out.append(character)
                }
            }
        }
        return out
    }

    private static func unescape(_ text: Substring) -> String {
        guard text.contains("%") else { return String(text) }
        var out = ""
        var rest = text[...]
        while let percent = rest.firstIndex(of: "%") {
            out += rest[..<percent]
            let after = rest[rest.index(after: percent)...]
            if after.hasPrefix("u"), let end = after.firstIndex(of: ";"),
               let value = UInt32(after[after.index(after: after.startIndex)..<end], radix: 16), let scalar = Unicode.Scalar(value) {
                out.unicodeScalars.append(scalar)
                rest = after[after.index(after: end)...]
            } else if after.count >= 2, let value = UInt8(after.prefix(2), radix: 16) {
                out.unicodeScalars.append(Unicode.Scalar(value))
                rest = after.dropFirst(2)
            } else {
                out += "%"
                rest = after
            }
        }
        return out + rest
    }
}
