import Foundation
import WebSocketLoop

/// The operator's console (docs/ADMIN.md): the page `/admin` and the JSON
/// API below `/admin/api/`, answered on the service thread from the core's
/// views (`AdminViews`) and what the shell knows of its connections.
extension HubServer {
    /// Whether `path` is the console's.
    static func isAdmin(_ path: String) -> Bool { path == "/admin" || path.hasPrefix("/admin/") }

    /// The console's answer to `request` (one of its paths), or nil when it
    /// comes later (`server.answer`).
    func adminResponse(to request: RequestHead, body: [UInt8], exchange: UInt64) -> HTTPResponse? {
        let path = request.path
        let verifier = core.verifier
        let access = AdminAccess.decide(bearer: request.bearerToken, queryNames: request.queryNames, peer: request.peerAddress,
                                        proxied: request.forwardedFor != nil, host: request.host, verifier: verifier, now: Date(),
                                        revocations: core.revocations)
        if path == "/admin" || !path.hasPrefix("/admin/api/") {
            // The page carries no data; the token stays in its fragment. An
            // open hub shows even the page only on loopback (O1).
            if case let .refused(status, _, message) = access, verifier == nil || status == 400 {
                return .text(status, message)
            }
            let asked = path == "/admin" || path == "/admin/" ? "/admin.html" : String(path.dropFirst("/admin".count))
            guard let file = web.file(for: asked) else {
                return .text(404, "not found: the console is at /admin")
            }
            var page = HTTPResponse(status: 200, contentType: file.type, body: file.body, cacheable: false)
            // Never in a frame of another page (a framed console would take its clicks).
            page.contentSecurityPolicy = "frame-ancestors 'none'"
            return page
        }
        guard case let .allowed(admin) = access else {
            if case let .refused(status, code, message) = access { return adminError(status, code, message) }
            return adminError(403, "forbidden", "not allowed")
        }
        if request.method == "POST", let refusal = Self.crossSiteRefusal(request) { return refusal }
        let route = path.dropFirst("/admin/api/".count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        switch (request.method, route) {
        case ("GET", ["hubs"]):
            log?.clusterConsole?.noteAsked(board: nil)
            let others = log?.clusterConsole?.otherRows.sorted { $0.key < $1.key }.map(\.value) ?? []
            return adminJSON("{\"hubs\":[" + ([hubRow()] + others).joined(separator: ",") + "]}")
        case ("GET", ["boards"]):
            log?.clusterConsole?.noteAsked(board: nil)
            let kind = request.queryValues["kind"].flatMap { $0.isEmpty ? nil : $0 }
            let query = request.queryValues["q"]
            let now = WebSocketServer.nowNanos()
            if let log, storedBoards.map({ now &- $0.at > 5_000_000_000 }) ?? true {
                // O3: the store's count, asked at most every 5 s (the answer waits for the first).
                httpSteps[exchange] = { [self] step in
                    // A failure is stamped too (no new count for 5 s); the last count stands.
                    var count = storedBoards?.count
                    switch step {
                    case let .boardsCounted(.success(counted)): count = counted
                    case let .boardsCounted(.failure(failure)):
                        logger.warning("the store could not count its boards for the console", metadata: ["error": "\(failure.message)"])
                    default: break
                    }
                    storedBoards = (count, WebSocketServer.nowNanos())
                    server.answer(exchange, with: adminBoards(kind: kind, query: query))
                }
                log.carry(.countBoards(exchange: exchange))
                return nil
            }
            return adminBoards(kind: kind, query: query)
        case ("GET", let parts) where parts.count == 3 && parts[0] == "boards":
            if case let .success(address) = BoardAddress.parse(path: "/\(parts[1])/\(parts[2])") {
                log?.clusterConsole?.noteAsked(board: address.logName)
            }
            return adminBoard(kind: parts[1], name: parts[2], exchange: exchange)
        case ("GET", ["audit"]):
            // The newest `limit` (default 500, at most all 10,000 kept).
            let limit = request.queryValues["limit"].flatMap { Int($0) }.map { max(1, min($0, AuditTrail.kept)) } ?? 500
            return adminJSON("{\"entries\":[" + audit.newestFirst.prefix(limit).map(\.json).joined(separator: ",") + "]}")
        case ("POST", ["disconnect"]):
            return adminDisconnect(body, by: admin, from: request.peerAddress)
        case ("POST", ["revoke"]):
            return adminRevoke(body, by: admin, from: HubCore.plainAddress(request.peerAddress))
        case ("POST", let parts) where parts.count == 4 && parts[0] == "boards" && (parts[3] == "freeze" || parts[3] == "thaw"):
            return adminFreeze(kind: parts[1], name: parts[2], freeze: parts[3] == "freeze", by: admin,
                               from: HubCore.plainAddress(request.peerAddress), exchange: exchange)
        case ("POST", let parts) where parts.count == 3 && parts[0] == "hubs" && parts[2] == "drain":
            let address = HubCore.plainAddress(request.peerAddress)
            guard parts[1] == core.hubID else {
                // Another hub of the cluster: asked through Redis (it drains within a second or two).
                guard let console = log?.clusterConsole, console.otherRows[parts[1]] != nil else {
                    return adminError(404, "not_found", "no live hub \(parts[1]) is known here")
                }
                console.send(ConsoleOrder(action: .drain, by: admin, address: address, via: core.hubID), to: parts[1])
                noteAudit(sub: admin, address: address, action: "drain", target: parts[1], result: "asked hub \(parts[1])")
                return adminJSON("{\"ok\":true,\"sent_to\":[" + HubCore.jsonString(parts[1]) + "]}")
            }
            let started = startDrain(by: admin)
            noteAudit(sub: admin, address: address, action: "drain", target: parts[1], result: started ? "draining" : "already draining")
            return adminJSON("{\"ok\":true}")
        default:
            return adminError(404, "not_found", "no such call: \(request.method) \(path) (docs/ADMIN.md lists them)")
        }
    }

    /// An action must come as JSON (a page of another site cannot send that
    /// without the hub's leave, CORS) and, from a browser, from a page of
    /// this hub (its `Origin` is the hub's own host): on an open hub no token
    /// stands between a page in the operator's browser and the API.
    static func crossSiteRefusal(_ request: RequestHead) -> HTTPResponse? {
        let type = request.contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard type == "application/json" else {
            return HTTPResponse(status: 415, contentType: "application/json",
                                body: Array(#"{"error":"bad_request","message":"send the action as Content-Type: application/json"}"#.utf8))
        }
        if let origin = request.origin, let host = request.host {
            let from = origin.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first.map(String.init)
            guard from == host else {
                return HTTPResponse(
                    status: 403, contentType: "application/json",
                    body: Array(#"{"error":"forbidden","message":"an action from a page of another site is refused"}"#.utf8))
            }
        }
        return nil
    }

    /// `GET /admin/api/boards` (O3): `stored` is the store's count (the
    /// boards held here when the store has not answered yet).
    private func adminBoards(kind: String?, query: String?) -> HTTPResponse {
        let rows: [AdminBoardRow]
        if let others = log?.clusterConsole?.otherBoards, !others.isEmpty {
            rows = AdminBoardMerge.merge(own: core.adminBoardRows(kind: nil, query: nil, bytesPerSecond: bytesPerSecond),
                                         others: Array(others.values), kind: kind, query: query)
        } else {
            rows = core.adminBoardRows(kind: kind, query: query, bytesPerSecond: bytesPerSecond)
        }
        let stored = storedBoards?.count ?? core.boards.count
        return adminJSON("{\"stored\":\(stored),\"boards\":[" + rows.map(\.json).joined(separator: ",") + "]}")
    }

    /// One hub's row of `GET /admin/api/hubs` (O2, O11).
    func hubRow() -> String {
        let now = WebSocketServer.nowNanos()
        process.update(nowNanos: now)
        var row = "{\"id\":" + HubCore.jsonString(core.hubID) + ",\"address\":" + HubCore.jsonString(listenAddress)
        row += ",\"version\":" + HubCore.jsonString(SyncHubRelease.version)
        row += ",\"uptime_seconds\":\(Int(Date().timeIntervalSince(process.started)))"
        row += ",\"connections\":\(server.connections.count),\"boards\":\(core.boards.count)"
        row += ",\"cpu_percent\":" + String(format: "%.1f", process.cpuPercent) + ",\"rss_bytes\":\(ProcessSample.residentBytes())"
        row += ",\"redis\":" + (log?.adminRedisJSON ?? "null") + "}"
        return row
    }

    private func adminBoard(kind: String, name: String, exchange: UInt64) -> HTTPResponse? {
        guard case let .success(address) = BoardAddress.parse(path: "/\(kind)/\(name)") else {
            return adminError(404, "not_found", "no board \(kind)/\(name)")
        }
        if let held = adminBoardJSON(address) { return adminJSON(held) }
        // Not held here: read it (as a shop's HTTP read does), then answered.
        withBoard(address, exchange: exchange) { [self] ready in
            let answer = ready ? adminBoardJSON(address).map { adminJSON($0) } : nil
            server.answer(exchange, with: answer ?? adminError(503, "unavailable", "the board could not be read; try again"))
        }
        return nil
    }

    private func adminBoardJSON(_ address: BoardAddress) -> String? {
        core.adminBoard(address,
                        wallAt: { [started] in started.wall.addingTimeInterval(Double(Int64(bitPattern: $0 &- started.nanos)) / 1e9) },
                        facts: connectionFacts(of:), others: log?.clusterConsole?.otherConnections(of: address.logName) ?? [])
    }

    private func connectionFacts(of id: UInt64) -> HubCore.ConnectionFacts? {
        guard let connection = server.connections[id] else { return nil }
        let facts = connectionFacts[id]
        return HubCore.ConnectionFacts(address: connection.peerAddress, since: facts?.since ?? Date(),
                                       said: facts?.said, queuedBytes: connection.queuedBytes)
    }

    private func bytesPerSecond(_ board: String) -> Double {
        traffic.perSecond(board, nowNanos: WebSocketServer.nowNanos())
    }

    /// Once a second in a cluster: this hub's row for the other hubs'
    /// consoles, and while one is open its boards and the connections of
    /// the board it looks at (docs/ADMIN.md: nothing of it while none is).
    func publishConsole(nowNanos: UInt64) {
        guard let console = log?.clusterConsole, nowNanos / 1_000_000_000 != lastConsoleSecond else { return }
        lastConsoleSecond = nowNanos / 1_000_000_000
        takeConsoleNews()
        let open = console.openConsoles
        let boards = open.map { _ in AdminBoardRow.lines(core.adminBoardRows(kind: nil, query: nil, bytesPerSecond: bytesPerSecond)) }
        var connections: [String: String] = [:]
        for board in open ?? [] where !board.isEmpty {
            guard let room = core.boards.values.first(where: { $0.logName == board }) else { continue }
            connections[board] = core.adminConnectionsJSON(room, facts: connectionFacts(of:))
        }
        console.publish(row: hubRow(), boards: boards, connections: connections)
    }

    /// O5 on this hub: closes the named connections with 4409.
    private func adminDisconnect(_ body: [UInt8], by admin: String, from address: String) -> HTTPResponse {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            return adminError(400, "bad_request",
                              "send a JSON object: {\"connection\":\"HUB/N\"}, {\"sub\":S} or {\"name\":N,\"board\":\"KIND/NAME\"}")
        }
        var id: UInt64?
        var target = ""
        var onHub = core.hubID
        if let connection = object["connection"] as? String {
            let parts = connection.split(separator: "/")
            guard parts.count == 2, let number = UInt64(parts[1]) else {
                return adminError(400, "bad_request", "\"connection\" must be HUB/N (a hub's id and its connection number)")
            }
            id = number
            target = connection
            onHub = String(parts[0])
        }
        let sub = object["sub"] as? String
        let name = object["name"] as? String
        var board: BoardAddress?
        if let text = object["board"] as? String {
            guard case let .success(address) = BoardAddress.parse(path: "/" + text) else {
                return adminError(400, "bad_request", "\"board\" must be KIND/NAME")
            }
            board = address
        }
        guard (id != nil ? 1 : 0) + (sub != nil ? 1 : 0) + (name != nil ? 1 : 0) == 1, name == nil || board != nil else {
            return adminError(400, "bad_request", "give one of \"connection\", \"sub\", or \"name\" with \"board\"")
        }
        if let sub { target = "sub \(sub)" }
        if let name, let board { target = "name \(name) on \(board.pathSegment)/\(board.name)" }
        let from = HubCore.plainAddress(address)
        // Other hubs of the cluster: one connection on its own hub; a sub or a name on every live hub.
        let others = log?.clusterConsole.map { Array($0.otherRows.keys).sorted() } ?? []
        let askHubs = onHub == core.hubID ? (id == nil ? others : []) : [onHub]
        if onHub != core.hubID, !others.contains(onHub) {
            return adminError(404, "not_found", "no live hub \(onHub) is known here")
        }
        let order = ConsoleOrder(action: .disconnect(connection: onHub == core.hubID ? nil : id, sub: sub, name: name,
                                                     board: board.map { "\($0.pathSegment)/\($0.name)" }),
                                 by: admin, address: from, via: core.hubID)
        for hub in askHubs { log?.clusterConsole?.send(order, to: hub) }
        let closed = onHub == core.hubID ? closeConnections(id: id, sub: sub, name: name, board: board) : 0
        noteAudit(sub: admin, address: from, action: "disconnect", target: target,
                  result: "closed \(closed)" + (askHubs.isEmpty ? "" : "; asked hubs " + askHubs.joined(separator: ", ")))
        return adminJSON("{\"ok\":true,\"closed\":\(closed),\"sent_to\":[" + askHubs.map(HubCore.jsonString).joined(separator: ",") + "]}")
    }

    /// Closes this hub's connections that match with 4409 (O5); how many.
    private func closeConnections(id: UInt64?, sub: String?, name: String?, board: BoardAddress?) -> Int {
        let closing = core.adminConnections(id: id, sub: sub, name: name, board: board)
        for connection in closing {
            if let open = server.connections[connection] {
                server.close(open, code: 4409, reason: "disconnected by an operator; wait 30 s before reconnecting")
            }
        }
        return closing.count
    }

    /// Once a second in a cluster: the other hubs' audit entries, and what
    /// their consoles asked of this hub (O5, O8), carried out and audited.
    func takeConsoleNews() {
        guard let console = log?.clusterConsole else { return }
        let news = console.takeNews()
        for entry in news.audit { audit.note(entry) }
        for order in news.orders {
            switch order.action {
            case let .disconnect(id, sub, name, boardText):
                var board: BoardAddress?
                if let boardText, case let .success(address) = BoardAddress.parse(path: "/" + boardText) { board = address }
                if boardText != nil, board == nil { continue }
                let closed = closeConnections(id: id, sub: sub, name: name, board: board)
                let target = id.map { "\(core.hubID)/\($0)" } ?? sub.map { "sub \($0)" } ?? "name \(name ?? "") on \(boardText ?? "")"
                noteAudit(sub: order.by, address: order.address, action: "disconnect", target: target,
                          result: "closed \(closed) (asked through hub \(order.via))")
            case .drain:
                let started = startDrain(by: order.by)
                noteAudit(sub: order.by, address: order.address, action: "drain", target: core.hubID,
                          result: (started ? "draining" : "already draining") + " (asked through hub \(order.via))")
            }
        }
    }

    /// O6: a `jti`, or every token of a `sub` issued before now: refused
    /// from now on and closed where open, here at once, kept by the store
    /// (every hub of a cluster learns it within a second or two).
    private func adminRevoke(_ body: [UInt8], by admin: String, from address: String) -> HTTPResponse {
        let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
        let entry: Revocations.Entry
        switch (object?["jti"] as? String, object?["sub"] as? String) {
        case let (jti?, nil) where !jti.isEmpty && jti.utf8.count <= 256: entry = .jti(jti)
        case let (nil, sub?) where TokenClaims.problem(withSub: sub) == nil: entry = .sub(sub, before: Date())
        default:
            return adminError(400, "bad_request", "send {\"jti\":J} or {\"sub\":S} (1-64 characters)")
        }
        handle(.revoked([entry]))
        log?.carry(.revoke(entry))
        let target: String
        switch entry {
        case let .jti(jti): target = "jti \(jti)"
        case let .sub(sub, _): target = "sub \(sub)"
        }
        noteAudit(sub: admin, address: address, action: "revoke", target: target,
                  result: log == nil ? "revoked (in memory: not kept across a restart)" : "revoked")
        return adminJSON("{\"ok\":true}")
    }

    /// O7: freezes or thaws a board (held first, read from the store when
    /// no one is on it), answered once the change is durable or in the log.
    private func adminFreeze(kind: String, name: String, freeze: Bool, by admin: String, from address: String,
                             exchange: UInt64) -> HTTPResponse? {
        guard case let .success(board) = BoardAddress.parse(path: "/\(kind)/\(name)") else {
            return adminError(404, "not_found", "no board \(kind)/\(name)")
        }
        let action = freeze ? "freeze" : "thaw"
        withBoard(board, exchange: exchange) { [self] ready in
            guard ready else {
                noteAudit(sub: admin, address: address, action: action, target: "\(kind)/\(name)",
                          result: "unavailable")
                return server.answer(exchange, with: adminError(503, "unavailable", "the board could not be read; try again"))
            }
            adminWaiting[exchange] = { [self] frame in
                let answer = (try? JSONSerialization.jsonObject(with: Data(frame.utf8))) as? [String: Any]
                let version = (answer?["type"] as? String) == "ack" ? answer?["version"] as? Int : nil
                noteAudit(sub: admin, address: address, action: action, target: "\(kind)/\(name)",
                          result: version.map { "version \($0)" } ?? "unavailable")
                server.answer(exchange, with: version.map { adminJSON("{\"ok\":true,\"version\":\($0)}") }
                    ?? adminError(503, "unavailable", (answer?["message"] as? String) ?? "not known to have taken effect; try again"))
            }
            handle(.adminFreeze(exchange: exchange, board: board, frozen: freeze))
        }
        return nil
    }

    /// O8: stops taking connections and starts closing the open ones (see
    /// `drainStep`); false when a drain is under way already.
    @discardableResult
    func startDrain(by who: String) -> Bool {
        guard drain == nil else { return false }
        let now = WebSocketServer.nowNanos()
        drain = (now &+ drainSeconds * 1_000_000_000, now, 0)
        logger.notice("draining: no new connections; clients are closed with 1012, at most 200 a second",
                      metadata: ["by": "\(who)", "connections": "\(server.connections.count)", "seconds": "\(drainSeconds)"])
        drainStep(nowNanos: now)
        return true
    }

    /// Closes up to 200 connections a second with 1012 (they reconnect to
    /// another hub, R7); exits once none is left or the time is up.
    func drainStep(nowNanos: UInt64) {
        guard var state = drain else { return }
        // A second from the first close of the window on (not the clock's
        // second: a drain that starts at .999 closes no 400 at once).
        if nowNanos >= state.windowStart &+ 1_000_000_000 { state = (state.deadline, nowNanos, 0) }
        let open = server.connections.values.filter { $0.closing == nil }
        for connection in open.prefix(max(0, 200 - state.closed)) {
            server.close(connection, code: 1012, reason: "this hub is draining; reconnect to another")
            state.closed += 1
        }
        drain = state
        if server.connections.isEmpty || nowNanos >= state.deadline {
            logger.notice("drained; stopping", metadata: ["left": "\(server.connections.count)"])
            server.stop()
        }
    }

    /// O9: keeps an action in the audit, here at once and in the store
    /// (the embedded file, or Redis where every hub reads it).
    func noteAudit(sub: String, address: String, action: String, target: String, result: String) {
        let entry = AuditEntry(time: Date(), sub: sub, address: address, action: action, target: target, result: result, hub: core.hubID)
        audit.note(entry)
        log?.carry(.audit(entry))
    }

    func adminJSON(_ text: String) -> HTTPResponse {
        HTTPResponse(status: 200, contentType: "application/json", body: Array(text.utf8))
    }

    func adminError(_ status: UInt32, _ code: String, _ message: String) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json",
                     body: Array(("{\"error\":" + HubCore.jsonString(code) + ",\"message\":" + HubCore.jsonString(message) + "}").utf8))
    }
}

/// What the console says of this build (O2).
enum SyncHubRelease {
    static let version = "0.32.0-dev"
}
