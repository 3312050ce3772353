import Foundation
import SyncWire

/// What the operator's console reads of the boards this hub holds
/// (docs/ADMIN.md, O3-O4), as JSON. Pure: the shell adds what only it
/// knows (the clock's wall time, each connection's address, age, client and
/// bytes waiting) through `ConnectionFacts`.
extension HubCore {
    /// What the shell knows of a connection (O4).
    struct ConnectionFacts {
        var address: String
        var since: Date
        /// `page` (the upgrade carried an `Origin`), `watch` (it said
        /// `?client=watch`), or nil.
        var said: String?
        var queuedBytes: Int
    }

    /// One row of `GET /admin/api/boards` per board held here, filtered by
    /// kind and by a piece of its name or a name present.
    mutating func adminBoardRows(kind: String?, query: String?, bytesPerSecond: (String) -> Double) -> [AdminBoardRow] {
        var rows: [AdminBoardRow] = []
        let needle = query?.lowercased()
        for room in boards.values {
            if let kind, room.address.pathSegment != kind { continue }
            // O3: boards with a connection on some hub (a board held for a read only, or emptied, is not listed).
            if room.members.isEmpty, room.shared.remoteClients == 0 { continue }
            let names = room.localNames
            if let needle, !needle.isEmpty, !room.address.name.lowercased().contains(needle),
               !names.contains(where: { $0.lowercased().contains(needle) }) { continue }
            rows.append(AdminBoardRow(kind: room.address.pathSegment, name: room.address.name,
                                      connections: room.members.count + room.shared.remoteClients,
                                      perHub: room.members.isEmpty ? [:] : [hubID: room.members.count],
                                      names: (names + room.shared.remoteNames).sorted(), version: room.durableVersion,
                                      frozen: room.durableFrozen, changesPerMinute: room.activity.perMinute(at: now),
                                      bytesPerSecond: Int(bytesPerSecond(room.name).rounded())))
        }
        return rows
    }

    /// `GET /admin/api/boards/KIND/NAME` for a board held here, or nil.
    /// `wallAt`: the time of a monotonic stamp (the changes' times are kept monotonic).
    /// `others`: the other hubs' connections of the board (JSON arrays, a cluster's).
    func adminBoard(_ address: BoardAddress, wallAt: (UInt64) -> Date, facts: (UInt64) -> ConnectionFacts?,
                    others: [String] = []) -> String? {
        guard let room = boards[address.key] else { return nil }
        var out = "{\"kind\":"
        HubMessage.appendJSONString(address.pathSegment, to: &out)
        out += ",\"name\":"
        HubMessage.appendJSONString(address.name, to: &out)
        out += ",\"version\":\(room.durableVersion),\"frozen\":\(room.durableFrozen),\"state\":" + room.stateShape().json
        out += ",\"changes\":["
        for (index, change) in room.activity.newestFirst.enumerated() {
            if index > 0 { out += "," }
            out += "{\"time\":"
            HubMessage.appendJSONString(Self.rfc3339(wallAt(change.at)), to: &out)
            out += ",\"sub\":" + (change.sub.map(Self.jsonString) ?? "null") + ",\"name\":" + Self.jsonString(change.name)
            out += ",\"hub\":" + Self.jsonString(change.hub) + ",\"intent\":"
            if let refused = change.change as? RefusedIntent {
                out += refused.json
            } else if let change = change.change, let json = room.changeJSON(change) {
                out += json
            } else if change.operations > 0 {
                out += "{\"ops\":\(change.operations)}"
            } else {
                out += "null"   // refused before it became a change
            }
            out += ",\"answer\":" + Self.jsonString(change.answer) + ",\"version\":\(change.version)}"
        }
        let all = ([adminConnectionsJSON(room, facts: facts)] + others).map { $0.dropFirst().dropLast() }.filter { !$0.isEmpty }
        out += "],\"connections\":[" + all.joined(separator: ",") + "]"
        return out + "}"
    }

    /// The connections of `room` on this hub, as a JSON array (O4).
    func adminConnectionsJSON(_ room: BoardRoom, facts: (UInt64) -> ConnectionFacts?) -> String {
        var out = "["
        for (index, (id, member)) in room.members.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { out += "," }
            let known = facts(id)
            let client = known?.said ?? (member.replica != nil ? "replica" : "thin")
            out += "{\"id\":" + Self.jsonString("\(hubID)/\(id)") + ",\"name\":" + Self.jsonString(member.actingName)
            out += ",\"sub\":" + (member.grant.map { Self.jsonString($0.sub) } ?? "null")
            out += ",\"role\":" + Self.jsonString(member.role?.rawValue ?? (member.grant == nil ? "admin" : "none"))
            out += ",\"hub\":" + Self.jsonString(hubID) + ",\"address\":" + Self.jsonString(Self.plainAddress(known?.address ?? ""))
            out += ",\"since\":" + (known.map { Self.jsonString(Self.rfc3339($0.since)) } ?? "null")
            out += ",\"client\":" + Self.jsonString(client) + ",\"queued_bytes\":\(known?.queuedBytes ?? 0)}"
        }
        return out + "]"
    }

    /// The connections of this hub that a disconnect names (O5): one by id,
    /// every one of a `sub`, or every one of a name on a board.
    func adminConnections(id: UInt64?, sub: String?, name: String?, board: BoardAddress?) -> [UInt64] {
        if let id { return boardOf[id] == nil ? [] : [id] }
        var found: [UInt64] = []
        for room in boards.values {
            if let board, room.name != board.key { continue }
            for (connection, member) in room.members {
                if let sub, member.grant?.sub == sub { found.append(connection) }
                if let name, member.actingName == name { found.append(connection) }
            }
        }
        return found.sorted()
    }

    /// An IPv4 peer as IPv4 (`::ffff:10.0.0.9` is `10.0.0.9`).
    static func plainAddress(_ address: String) -> String {
        address.hasPrefix("::ffff:") && address.contains(".") ? String(address.dropFirst("::ffff:".count)) : address
    }

    static func jsonString(_ text: String) -> String {
        var out = ""
        HubMessage.appendJSONString(text, to: &out)
        return out
    }

    /// `2026-11-28T22:50:01.123Z`, written by hand (a formatter per time
    /// was most of an audit answer's cost).
    static func rfc3339(_ date: Date) -> String {
        let millis = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(millis / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let fraction = millis % 1000
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):"
            + "\(two(parts.tm_sec)).\(fraction < 10 ? "00" : fraction < 100 ? "0" : "")\(fraction)Z"
    }

    /// O7: freezes or thaws a held board for the console's request
    /// `exchange`, answered with the version that says so once durable (on
    /// its own store) or in the log (a cluster).
    mutating func setFrozen(_ freeze: Bool, on address: BoardAddress, exchange: UInt64, actions: inout [HubAction]) {
        let answerTo = Self.httpAnswerID(exchange)
        guard let room = boards[address.key] else {
            actions.append(.send(connection: answerTo, frame: HubMessage.error(
                ProtocolError("unavailable", "the board was let go meanwhile; try again"), ref: nil)))
            return
        }
        if room.frozen == freeze, room.durableFrozen == freeze {
            actions.append(.send(connection: answerTo, frame: HubMessage.ack(ref: nil, version: room.durableVersion)))
            return
        }
        if isShared {
            room.proposeFreeze(freeze, answerTo: answerTo, core: &self)
            return
        }
        room.frozen = freeze
        room.version += 1
        record(room.freezeRecord(freeze, reply: (answerTo, HubMessage.ack(ref: nil, version: room.version))), in: room)
    }
}
