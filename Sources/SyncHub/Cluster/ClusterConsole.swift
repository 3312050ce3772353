import Foundation

/// What the hubs of a cluster tell each other for the operator's console
/// (docs/ADMIN.md, O2-O4), through the cluster's first Redis server: each
/// hub's row every second; while a console is open (a console request in
/// the last 10 s, `synchub:console:open`), its boards; and the connections
/// of the board a console looks at; the cluster's audit (O9, a stream
/// every hub adds to and reads on), and the orders one hub's console gives
/// another (O5, O8: a list per hub). Written and read by the first server's
/// follower once a second (`exchange`); the service thread hands its part
/// in and reads the others' (`publish`, `rows`, `send`, `takeNews`...).
/// Guarded by `lock`.
final class ClusterConsole: @unchecked Sendable {
    // Sendable: every mutable property is guarded by `lock`.
    private let lock = NSLock()
    private let hubID: String
    /// This hub's part, as the service thread last made it.
    private var ownRow = ""
    /// Its boards as `AdminBoardRow` lines (only while a console is open).
    private var ownBoards: String?
    private var ownConnections: [String: String] = [:]
    /// A console asked this hub lately, and the boards consoles looked at (when).
    private var askedAt: Date?
    private var askedBoards: [String: Date] = [:]
    /// What the follower last read: per other hub, its row, boards and
    /// the watched board's connections (JSON), and whether a console is open.
    private var others: [String: (row: String?, boards: [AdminBoardRow]?, connections: [String: String])] = [:]
    /// The boards the consoles of every hub look at ("" : a console with none), empty when none is open.
    private var watched: Set<String> = []
    /// O9: the last audit entry read, and the other hubs' entries read since the service thread last took them.
    private var auditAfter = "0-0"
    private var newAudit: [AuditEntry] = []
    /// O5, O8: orders for other hubs not sent yet (hub, order), and orders for this hub not taken yet.
    private var outgoing: [(hub: String, order: ConsoleOrder)] = []
    private var incoming: [ConsoleOrder] = []

    static let rowsKey = "synchub:console:rows"
    static let boardsKey = "synchub:console:boards"
    static let connectionsKey = "synchub:console:connections"
    static let openKey = "synchub:console:open"
    /// O9: the cluster's audit, a stream of `e` (an entry's JSON), trimmed to about the last 10,000.
    static let auditKey = "synchub:audit"
    /// O5, O8: the orders waiting for a hub (a list of JSON orders; they expire after a minute unread).
    static func ordersKey(hub: String) -> String { "synchub:console:orders:" + hub }
    /// A hub's entry older than this is of a hub that died (O2: it leaves within 10 s).
    static let freshMillis: Int64 = 5_000

    init(hubID: String) {
        self.hubID = hubID
    }

    // MARK: The service thread

    /// This hub's row, its boards (only while a console is open) and the
    /// connections of the board a console looks at.
    func publish(row: String, boards: String?, connections: [String: String]) {
        lock.lock()
        ownRow = row
        ownBoards = boards
        ownConnections = connections
        lock.unlock()
    }

    /// A console request came to this hub (looking at `board`, or none).
    func noteAsked(board: String?) {
        lock.lock()
        askedAt = Date()
        if let board { askedBoards[board] = askedAt }
        lock.unlock()
    }

    /// The boards open consoles look at ("" for a console that looks at
    /// none); nil when no console is open on any hub.
    var openConsoles: Set<String>? {
        lock.lock()
        defer { lock.unlock() }
        return watched.isEmpty ? nil : watched
    }

    /// The other live hubs' rows, by id.
    var otherRows: [String: String] {
        lock.lock()
        defer { lock.unlock() }
        return others.compactMapValues(\.row)
    }

    /// The other hubs' board rows (read on the follower's thread), by id.
    var otherBoards: [String: [AdminBoardRow]] {
        lock.lock()
        defer { lock.unlock() }
        return others.compactMapValues(\.boards)
    }

    /// The other hubs' connections of `board` (JSON arrays).
    func otherConnections(of board: String) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        return others.values.compactMap { $0.connections[board] }
    }

    /// O5, O8: asks `hub` to carry out `order` (sent within a second).
    func send(_ order: ConsoleOrder, to hub: String) {
        lock.lock()
        outgoing.append((hub, order))
        lock.unlock()
    }

    /// What came for this hub since the last call: the other hubs' audit
    /// entries and the orders it is to carry out.
    func takeNews() -> (audit: [AuditEntry], orders: [ConsoleOrder]) {
        lock.lock()
        defer { newAudit.removeAll(); incoming.removeAll(); lock.unlock() }
        return (newAudit, incoming)
    }

    /// O9: reads the audit on from `id` (the newest entry the hub read at start).
    func readAudit(after id: String) {
        lock.lock()
        auditAfter = id
        lock.unlock()
    }

    /// `XRANGE`/`XREVRANGE synchub:audit` as (stream id, entry), in the reply's order.
    static func auditEntries(in reply: RedisReply) -> [(id: String, entry: AuditEntry)] {
        reply.elements.compactMap { item in
            let parts = item.elements
            guard parts.count == 2, let id = parts[0].text else { return nil }
            let fields = parts[1].elements
            guard fields.count >= 2, fields[0].text == "e", let json = fields[1].text, let entry = AuditEntry(json: json) else {
                return nil
            }
            return (id, entry)
        }
    }

    // MARK: The follower's thread

    /// One round with the first server (once a second): writes this hub's
    /// part, reads the others'. `nowMillis`: the server's clock.
    func exchange(on connection: RedisConnection, nowMillis: Int64) throws(RedisFailure) {
        lock.lock()
        let (row, boards, connections) = (ownRow, ownBoards, ownConnections)
        let now = Date()
        askedBoards = askedBoards.filter { now.timeIntervalSince($0.value) < 10 }
        // One line: the boards this hub's consoles look at ("" for none), space-separated.
        let asking = askedAt.map { now.timeIntervalSince($0) < 10 } == true ? askedBoards.keys.sorted().joined(separator: " ") : nil
        let (after, sending) = (auditAfter, outgoing)
        outgoing.removeAll()
        lock.unlock()
        let stamp = String(nowMillis)
        // Nothing of this hub before the service thread made its row.
        var commands: [[String]] = row.isEmpty ? [] : [["HSET", Self.rowsKey, hubID, stamp + " " + row]]
        commands.append(boards.map { ["HSET", Self.boardsKey, hubID, stamp + " " + $0] } ?? ["HDEL", Self.boardsKey, hubID])
        // One line a watched board: `BOARD JSON`.
        let lines = connections.map { $0.key + " " + $0.value }.joined(separator: "\n")
        commands.append(lines.isEmpty ? ["HDEL", Self.connectionsKey, hubID] : ["HSET", Self.connectionsKey, hubID, stamp + " " + lines])
        if let asking { commands.append(["HSET", Self.openKey, hubID, stamp + " " + asking]) }
        for (hub, order) in sending {
            // Stamped with the server's clock: an order older than 10 s is dropped unread (a hub restarted under the same id).
            commands.append(["RPUSH", Self.ordersKey(hub: hub), stamp + " " + order.json])
            commands.append(["PEXPIRE", Self.ordersKey(hub: hub), "60000"])
        }
        let reads = commands.count
        commands += [["HGETALL", Self.rowsKey], ["HGETALL", Self.boardsKey], ["HGETALL", Self.connectionsKey], ["HGETALL", Self.openKey],
                     ["XRANGE", Self.auditKey, "(" + after, "+", "COUNT", "1000"], ["LPOP", Self.ordersKey(hub: hubID), "100"]]
        let replies: [RedisReply]
        do {
            replies = try connection.pipeline(commands)
        } catch {
            // Sent again with the next round (an order may then come twice:
            // closing what is closed, or a drain under way, does nothing).
            lock.lock()
            outgoing = sending + outgoing
            lock.unlock()
            throw error
        }
        let audit = Self.auditEntries(in: replies[reads + 4])
        // Read on after the last entry, readable or not (one this hub cannot read is skipped, not read forever).
        let lastRead = replies[reads + 4].elements.last?.elements.first?.text
        let orders = replies[reads + 5].elements.compactMap { item -> ConsoleOrder? in
            guard let text = item.text, let space = text.firstIndex(of: " "), let at = Int64(text[..<space]),
                  nowMillis - at <= 10_000 else { return nil }
            return ConsoleOrder(json: String(text[text.index(after: space)...]))
        }
        var seen: [String: (row: String?, boards: [AdminBoardRow]?, connections: [String: String])] = [:]
        var looking: Set<String> = []
        var departed: [[String]] = []
        for (index, key) in [Self.rowsKey, Self.boardsKey, Self.connectionsKey, Self.openKey].enumerated() {
            let parts = replies[reads + index].elements
            for pair in stride(from: 0, to: parts.count - 1, by: 2) {
                guard let hub = parts[pair].text, let value = parts[pair + 1].text,
                      let space = value.firstIndex(of: " "), let at = Int64(value[..<space]) else { continue }
                if nowMillis - at > 60_000 { departed.append(["HDEL", key, hub]) }
                let body = String(value[value.index(after: space)...])
                if index == 3 {
                    // Consoles of every hub, this one's too: open for 10 s after their last request.
                    if nowMillis - at <= 10_000 {
                        looking.insert("")
                        for board in body.split(separator: " ") { looking.insert(String(board)) }
                    }
                    continue
                }
                guard hub != hubID, nowMillis - at <= Self.freshMillis, !body.isEmpty else { continue }
                switch index {
                case 0: seen[hub, default: (nil, nil, [:])].row = body
                case 1: seen[hub, default: (nil, nil, [:])].boards = AdminBoardRow.rows(lines: body[...])
                default:
                    for line in body.split(separator: "\n") {
                        guard let split = line.firstIndex(of: " ") else { continue }
                        seen[hub, default: (nil, nil, [:])].connections[String(line[..<split])] = String(line[line.index(after: split)...])
                    }
                }
            }
        }
        lock.lock()
        others = seen
        watched = looking
        if let lastRead { auditAfter = lastRead }
        // This hub's own entries are in its trail already.
        newAudit += audit.map(\.entry).filter { $0.hub != hubID }
        if newAudit.count > AuditTrail.kept { newAudit.removeFirst(newAudit.count - AuditTrail.kept) }
        incoming += orders
        lock.unlock()
        // Tidying after what was read is kept: a failure here loses no order.
        if !departed.isEmpty { _ = try? connection.pipeline(departed) }
    }
}
