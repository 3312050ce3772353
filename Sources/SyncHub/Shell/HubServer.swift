import BoardCRDT
import Foundation
import Logging
import SyncWire
import WebSocketLoop

/// The thin shell around `HubCore`: translates server and store events into
/// core events and carries out the core's actions. Runs on the service thread.
final class HubServer: ServerDelegate, @unchecked Sendable {
    // Sendable: all state is touched only on the server's service thread;
    // the store writer reaches it through `server.post`.
    let server: WebSocketServer
    var core: HubCore
    let reader: BoardStore?
    /// The embedded store's connection for shop image bytes (service thread).
    let imageStore: BoardStore?
    private let writer: GroupCommitWriter?
    private let checkpointer: WALCheckpointer?
    private let echoEnabled: Bool
    private let metrics = HubMetrics()
    private let web = WebAssets()
    let logger: Logger
    /// Origins, connect rates and the books of connections without a token yet.
    private var gate: UpgradeGate
    private(set) var storeFailure: StoreError?
    /// With auth on: the bearer token `/metrics` answers (nil: closed).
    private let metricsToken: String?
    /// Cluster mode: the boards' shared logs in Redis (nil: the embedded store or memory).
    let sharedLog: SharedLog?
    /// Image uploads (a shop's, `KindHTTP`) waiting for their name to be durable, by HTTP exchange: the name and its ETag.
    var uploads: [UInt64: (name: String, etag: String)] = [:]
    /// An `--in-memory` hub's shop images.
    var memoryImages = MemoryImages()
    /// Stored images served lately, so a popular one is not read from the store for every browser.
    var imageCache = ImageCache()
    /// Boards whose logs the shard followers read, by log name.
    var followed: [String: String] = [:]
    var lastPresence: UInt64 = 0

    init(options: ServerOptions, limits: HubLimits, policy: TransportPolicy = TransportPolicy(), verifier: TokenVerifier? = nil,
         metricsToken: String? = nil, dataDirectory: String?, fsyncEachCommit: Bool = true, echo: Bool, logger: Logger,
         sharedLog: SharedLog? = nil, sharedTimeoutNanos: UInt64 = 2_000_000_000) throws {
        server = WebSocketServer(options: options)
        var policy = policy
        policy.authRequired = verifier != nil
        gate = UpgradeGate(policy: policy)
        var sequencing = Sequencing.local
        if let sharedLog {
            sequencing = .shared(SharedLogSettings(hubID: sharedLog.settings.hubID, timeoutNanos: sharedTimeoutNanos,
                                                   foldEvery: UInt64(limits.keptOperations)))
        }
        core = HubCore(hubReplica: .random(), limits: limits, verifier: verifier, sequencing: sequencing)
        self.metricsToken = metricsToken
        self.sharedLog = sharedLog
        echoEnabled = echo
        self.logger = logger
        if sharedLog != nil {
            reader = nil
            imageStore = nil
            writer = nil
            checkpointer = nil
        } else if let dataDirectory {
            reader = try BoardStore(directory: dataDirectory)
            // Shop images' bytes, written on the service thread before their name is recorded (P4):
            // the hub's own fsync setting, and never a checkpoint here (WALCheckpointer's job).
            imageStore = try BoardStore(directory: dataDirectory, fsyncEachCommit: fsyncEachCommit, checkpointsItself: false)
            let store = try BoardStore(directory: dataDirectory, fsyncEachCommit: fsyncEachCommit, checkpointsItself: false)
            writer = GroupCommitWriter(store: store)
            checkpointer = try WALCheckpointer(path: store.path)
        } else {
            reader = nil
            imageStore = nil
            writer = nil
            checkpointer = nil
        }
        server.delegate = self
    }

    // MARK: ServerDelegate

    func admit(upgrade request: RequestHead) -> Result<Admission, HTTPRefusal> {
        if let refusal = gate.admit(request, now: WebSocketServer.nowNanos()) {
            logger.debug("upgrade refused", metadata: ["request": "\(request)", "status": "\(refusal.status)"])
            return .failure(refusal)
        }
        let path = request.path
        if path == "/echo" {
            return echoEnabled ? .success(Admission(route: .echo)) : .failure(HTTPRefusal(status: 404, message: "the echo endpoint is off (start the hub with --echo)"))
        }
        switch BoardAddress.parse(path: path) {
        case let .failure(refusal):
            return .failure(HTTPRefusal(status: refusal.status, message: refusal.message))
        case let .success(address):
            if let sharedLog, !sharedLog.isUp(address.logName) {
                // R8: a board whose Redis does not answer takes nobody new.
                return .failure(HTTPRefusal(status: 503, message: "the hub cannot reach the store of board \(address); try another hub or later"))
            }
            if let refusal = core.admits(board: address) {
                return .failure(HTTPRefusal(status: refusal.status, message: refusal.message))
            }
            // A8: a header token is checked before the upgrade; without one
            // the connection waits for an `auth` frame (HubCore+Access).
            guard let verifier = core.verifier, let token = request.bearerToken else {
                return .success(Admission(route: .board(address.key)))
            }
            do {
                let grant = try verifier.verify(token, now: Date())
                guard grant.role(for: address) != nil else {
                    core.counters.authForbidden += 1
                    logger.info("upgrade refused 403", metadata: ["board": "\(address)", "sub": "\(grant.sub)", "peer": "\(request.peerAddress)"])
                    return .failure(HTTPRefusal(status: 403, message: "your token gives no role on this board"))
                }
                return .success(Admission(route: .board(address.key), grant: grant))
            } catch {
                core.counters.authRefused += 1
                // Who and why, never the token (docs/SECURITY.md).
                logger.info("upgrade refused 401", metadata: ["board": "\(address)", "reason": "\(error.code)", "peer": "\(request.peerAddress)"])
                return .failure(HTTPRefusal(status: 401, message: error.reason))
            }
        }
    }

    func opened(_ connection: ServerConnection) {
        guard case let .board(key) = connection.route else { return }
        gate.opened(connection.id, now: WebSocketServer.nowNanos())
        let board = BoardAddress(key: key)
        let grant = connection.admission.grant as? Grant
        var stored: StoredBoard?
        if sharedLog != nil {
            if !core.authRequired || grant != nil {
                guard let loaded = readShared(board, for: connection) else { return }
                stored = loaded
            }
        } else if !core.holds(board: board), let reader, !core.authRequired || grant != nil {
        // A connection that will send its token in a frame reads nothing
        // from the store until then (HubCore.boardToLoad).
            do {
                stored = try reader.load(board: key)
            } catch {
                logger.error("cannot load board", metadata: ["board": "\(board)", "error": "\(error)"])
                core.counters.boardsUnreadable += 1
                server.close(connection, code: 1011, reason: "board could not be loaded")
                return
            }
        }
        core.now = WebSocketServer.nowNanos()
        core.wallClock = Date()
        carryOut(core.handle(.joined(connection: connection.id, board: board, stored: stored, grant: grant)))
        followHeld(board)
    }

    func received(_ connection: ServerConnection, message: UnsafeRawBufferPointer, isText: Bool) {
        if connection.route == .echo {
            server.send(OutgoingFrame(bytes: message, isText: isText), to: connection)
            return
        }
        // Closing (a token refused, expired or narrowed): nothing more is taken.
        if connection.closing != nil { return }
        if gate.received(connection.id, bytes: message.count) {
            server.close(connection, code: 4401, reason: "more than \(gate.policy.maxPreauthBytes) bytes before a valid token")
            return
        }
        core.now = WebSocketServer.nowNanos()
        if core.authRequired { core.wallClock = Date() }
        if !isText {
            carryOut(core.handle(.binary(connection: connection.id)))
            return
        }
        // The room found through the core's stored tables and its parser
        // called here: a call on `core` around an opaque one (the room's
        // parser) copies the whole core first (see `HubCore.parse`).
        let room = core.boardOf[connection.id].flatMap { core.boards[$0] }
        guard let parsed = room?.parse(message) ?? core.parse(connection: connection.id, message) else { return }
        if core.isAwaitingToken(connection.id), core.verifyAwaiting(connection.id, frame: parsed) {
            // A valid token with a role on the board arrived: read the board
            // now (never at the upgrade, never for a token refused).
            if sharedLog != nil, let board = core.awaitingBoard(connection: connection.id) {
                core.counters.boardReads += 1
                guard let loaded = readShared(board, for: connection) else { return }
                if let loaded { core.provide(loaded, for: connection.id) }
            } else if let board = core.boardToLoad(connection: connection.id), let reader {
                do {
                    core.counters.boardReads += 1
                    core.provide(try reader.load(board: board.key), for: connection.id)
                } catch {
                    logger.error("cannot load board", metadata: ["board": "\(board)", "error": "\(error)"])
                    core.counters.boardsUnreadable += 1
                    server.close(connection, code: 1011, reason: "board could not be loaded")
                    return
                }
            }
        }
        if let key = parsed.key, let board = core.keyToLookUp(connection: connection.id, key: key), let reader {
            // A key older than the board's key memory: the store decides
            // whether this intent is a resend.
            do {
                let answer = try reader.answer(forKey: key, board: board)
                carryOut(core.handle(.storedKey(board: board, key: key, answer: answer)))
            } catch {
                logger.error("cannot read an idempotency key", metadata: ["board": "\(board)", "error": "\(error)"])
                server.close(connection, code: 1011, reason: "the store could not be read")
                return
            }
        }
        let waited = sharedLog != nil && core.awaitingBoard(connection: connection.id) != nil
        carryOut(core.handle(.frame(connection: connection.id, parsed)))
        if waited, let board = core.boardOf[connection.id] { followHeld(BoardAddress(key: board)) }
    }

    func closed(_ connection: ServerConnection) {
        guard case .board = connection.route else { return }
        gate.closed(connection.id)
        core.now = WebSocketServer.nowNanos()
        carryOut(core.handle(.left(connection: connection.id)))
    }

    /// Only a kind that answers HTTP below its boards takes a body (a shop's
    /// image: 1 MiB, P4); the hub's own paths take none.
    var maxRequestBodyBytes: Int { HostedKinds.largestRequestBody }

    func admitBody(of request: RequestHead) -> HTTPResponse? {
        if let refusal = gate.refuseQueryToken(request) { return .text(refusal.status, refusal.message) }
        for kind in HostedKinds.withHTTP {
            switch kind.admitBody(of: request, on: self) {
            case .notOurs: continue
            case .admitted: return nil
            case let .refused(answer): return answer
            }
        }
        return .text(405, "only a shop's images are stored, with PUT /shop/NAME/images/FILE")
    }

    func respond(to request: RequestHead, body: [UInt8], exchange: UInt64) -> HTTPResponse? {
        if let refusal = gate.refuseQueryToken(request) {
            return HTTPResponse(status: refusal.status, contentType: "text/plain", body: Array((refusal.message + "\n").utf8))
        }
        for kind in HostedKinds.withHTTP {
            if case let .answer(answer) = kind.respond(to: request, body: body, exchange: exchange, on: self) { return answer }
        }
        guard request.method == "GET" else { return .text(405, "\(request.method) is not taken here; only GET (and PUT of a shop's images)") }
        return page(for: request)
    }

    /// Pages, `/healthz`, `/metrics` (`respond` refused a token in the query already).
    private func page(for request: RequestHead) -> HTTPResponse {
        let bare = request.path
        switch bare {
        case "/healthz":
            if let sharedLog, !sharedLog.allUp {
                return HTTPResponse(status: 503, contentType: "text/plain", body: Array("redis unreachable\n".utf8))
            }
            return HTTPResponse(status: storeFailure == nil ? 200 : 503, contentType: "text/plain",
                                body: Array((storeFailure == nil ? "ok\n" : "store failed\n").utf8))
        case "/metrics":
            if core.authRequired, !Self.sameSecret(request.bearerToken, metricsToken) {
                // A2: with auth on, metrics only for the operator's token.
                return HTTPResponse(status: 401, contentType: "text/plain", body: Array(
                    (metricsToken == nil ? "metrics are closed on a hub with keys unless it is started with --metrics-token\n"
                                         : "send Authorization: Bearer <the --metrics-token value>\n").utf8))
            }
            var body = metrics.render(counters: core.counters, stats: server.stats, gate: gate,
                                      connectionCount: server.connections.count, boardCount: core.boards.count)
            if let sharedLog { body += Array(sharedLog.metricsText(counters: core.counters).utf8) }
            return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4", body: body)
        default:
            if case let .success(address) = BoardAddress.parse(path: bare), let kind = HostedKinds.kind(named: address.kind),
               let file = web.file(for: "/" + kind.page) {
                return HTTPResponse(status: 200, contentType: file.type, body: file.body, cacheable: false)
            }
            if let file = web.file(for: bare) {
                return HTTPResponse(status: 200, contentType: file.type, body: file.body, cacheable: false)
            }
            return HTTPResponse(status: 404, contentType: "text/plain",
                                body: Array("not found: boards are at ws://HOST:PORT/boards/NAME (and /set/NAME ...), their pages at the same paths\n".utf8))
        }
    }

    func tick(nowNanos: UInt64) {
        for id in gate.overdue(now: nowNanos) {
            if let connection = server.connections[id] {
                server.close(connection, code: 4401, reason: "no token within \(gate.policy.authTimeoutSeconds) s")
            }
        }
        gate.sweep(now: nowNanos)
        core.now = nowNanos
        if core.authRequired {
            core.wallClock = Date()
            var expired: [HubAction] = []
            core.closeExpired(actions: &expired)
            carryOut(expired)
        }
        let evicted = core.evictIdle(durable: reader != nil || sharedLog != nil)
        if !evicted.isEmpty { logger.debug("evicted idle boards", metadata: ["count": "\(evicted.count)"]) }
        if let sharedLog { tickShared(sharedLog, nowNanos: nowNanos) }
    }

    func serviceLoopDidRun() {
        if let sharedLog { submitProposals(to: sharedLog) }
        let records = core.takeRecords()
        if !records.isEmpty {
            if let writer {
                writer.submit(records)
            } else {
                carryOut(core.handle(.committed(records)))
            }
        }
        carryOut(core.publishChanged())
        // The records are freed here, after the fan-out, not before it.
        withExtendedLifetime(records) {}
    }

    // MARK: Store

    func attachWriter() {
        writer?.onCommitted = { [weak self] records in
            guard let self else { return }
            server.post { [self] in
                carryOut(core.handle(.committed(records)))
                carryOut(core.publishChanged())
            }
        }
        writer?.onFailure = { [weak self] error in
            guard let self else { return }
            server.post { [self] in
                storeFailure = error
                logger.critical("store failed; stopping so nothing unstored is acknowledged", metadata: ["error": "\(error)"])
                server.stop()
            }
        }
        checkpointer?.onFailure = { [logger] error in
            logger.error("cannot fold the write-ahead log into the store file; it grows until this is fixed",
                         metadata: ["error": "\(error)"])
        }
        writer?.start()
        checkpointer?.start()
    }

    func flushStore() {
        sharedLog?.stop()
        writer?.stopAndFlush()
        checkpointer?.stop()
        // A commit that failed in the final flush posted to a loop that had already stopped.
        if storeFailure == nil, let failure = writer?.failed {
            storeFailure = failure
            logger.critical("store failed while flushing; what followed was not stored", metadata: ["error": "\(failure)"])
        }
    }

    /// A connection presented a valid token: the pre-token timer and byte
    /// limit stop applying to it (the core says so with `.authenticated`).
    func authenticated(_ connection: UInt64) {
        gate.authenticated(connection)
    }

    // MARK: Actions

    func carryOut(_ actions: [HubAction]) {
        for action in actions {
            switch action {
            case let .send(id, frame):
                if let connection = server.connections[id] {
                    server.send(OutgoingFrame(text: frame), to: connection)
                } else if let exchange = HubCore.exchange(ofAnswerID: id) {
                    // An HTTP request a kind made a change for (`KindHTTP`).
                    _ = HostedKinds.withHTTP.contains { $0.answered(exchange, frame: frame, on: self) }
                }
            case let .publish(published):
                deliver(published)
            case let .relay(frame, ids):
                let shared = OutgoingFrame(text: frame)
                for id in ids { if let connection = server.connections[id] { server.send(shared, to: connection) } }
            case let .close(id, code, reason):
                guard let connection = server.connections[id] else { continue }
                if code == 4401 || code == 4403 {
                    logger.info("connection closed \(code)", metadata: ["reason": "\(reason)", "path": "\(connection.path)", "peer": "\(connection.peerAddress)"])
                }
                server.close(connection, code: code, reason: reason)
            case let .authenticated(id):
                authenticated(id)
            }
        }
    }

    /// Compares a presented secret with the configured one in time that does
    /// not depend on where they differ; nil never matches.
    static func sameSecret(_ presented: String?, _ expected: String?) -> Bool {
        guard let presented, let expected else { return false }
        let a = Array(presented.utf8), b = Array(expected.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<b.count { difference |= (index < a.count ? a[index] : 0) ^ b[index] }
        return difference == 0
    }
}
