import BoardCRDT
import Foundation
import Logging
import SyncWire
import WebSocketLoop

/// The thin shell around `HubCore`: translates the server's callbacks and
/// the store's answers into the core's events (each with the moment it
/// happened) and carries out the actions the core returns, in order. It
/// never waits for the store: a store action is handed to the `BoardLog`,
/// whose answer comes back later through `server.post`. Runs on the
/// server's service thread (`server.owner` checks it in debug builds).
final class HubServer: ServerDelegate, @unchecked Sendable {
    // Sendable: all state is touched only on the server's service thread
    // (checked by `server.owner`, which `run` claims); the store's
    // threads reach it only through `server.post`.
    let server: WebSocketServer
    var core: HubCore
    /// Where boards are kept; nil for `--in-memory`.
    let log: BoardLog?
    private let echoEnabled: Bool
    private let metrics = HubMetrics()
    let web = WebAssets()
    /// The console's books (docs/ADMIN.md): this process's CPU and memory,
    /// each board's bytes sent, each connection's age and kind, the audit.
    var process = ProcessSample()
    var traffic = BoardTraffic()
    var connectionFacts: [UInt64: (since: Date, said: String?)] = [:]
    var audit = AuditTrail()
    /// Console requests waiting for the core's answer (a freeze), by exchange.
    var adminWaiting: [UInt64: (String) -> Void] = [:]
    /// The address the hub listens on, as given (`--host`, `--port`).
    let listenAddress: String
    /// The two clocks at start: the console turns monotonic stamps into times with it.
    let started = (nanos: WebSocketServer.nowNanos(), wall: Date())
    /// O8: a drain under way (monotonic nanoseconds it ends by), and how
    /// many connections it closed in the current second.
    var drain: (deadline: UInt64, windowStart: UInt64, closed: Int)?
    var drainSeconds: UInt64 = 60
    /// The second the console's part was last handed to the cluster (`publishConsole`).
    var lastConsoleSecond: UInt64 = 0
    let logger: Logger
    /// Origins, connect rates and the books of connections without a token yet.
    private var gate: UpgradeGate
    private(set) var storeFailure: StoreError?
    /// With auth on: the bearer token `/metrics` answers (nil: closed).
    private let metricsToken: String?
    /// Image uploads (a shop's, `KindHTTP`) waiting for their name to be durable, by HTTP exchange: the name and its ETag.
    var uploads: [UInt64: (name: String, etag: String)] = [:]
    /// An `--in-memory` hub's shop images.
    var memoryImages = MemoryImages()
    /// Stored images served lately, so a popular one is not read from the store for every browser.
    var imageCache = ImageCache()
    /// HTTP requests waiting for the core (a board to be held) or the store
    /// (image bytes), by exchange: what to do with the answer.
    var httpSteps: [UInt64: (HTTPStep) -> Void] = [:]
    /// O3: the store's count of boards (nil: it never answered), and when
    /// it was last asked (monotonic nanoseconds).
    var storedBoards: (count: Int?, at: UInt64)?

    init(options: ServerOptions, limits: HubLimits, policy: TransportPolicy = TransportPolicy(), verifier: TokenVerifier? = nil,
         metricsToken: String? = nil, log: BoardLog?, sequencing: Sequencing = .local, loadTimeoutNanos: UInt64 = 10_000_000_000,
         echo: Bool, logger: Logger) {
        server = WebSocketServer(options: options)
        var policy = policy
        policy.authRequired = verifier != nil
        gate = UpgradeGate(policy: policy)
        core = HubCore(hubReplica: .random(), limits: limits, verifier: verifier, sequencing: sequencing,
                       durable: log != nil, loadTimeoutNanos: loadTimeoutNanos)
        self.metricsToken = metricsToken
        listenAddress = "\(options.host):\(options.port)"
        self.log = log
        for entry in log?.revocationsAtStart ?? [] { core.revocations.add(entry) }
        audit = AuditTrail(log?.auditAtStart ?? [])
        echoEnabled = echo
        self.logger = logger
        server.delegate = self
    }

    /// The moment of an event, for the core. The wall clock only matters to
    /// tokens: an open hub does not read it.
    @inline(__always)
    func clock() -> HubClock {
        HubClock(nanos: WebSocketServer.nowNanos(), wall: core.authRequired ? Date() : Date(timeIntervalSince1970: 0))
    }

    /// Hands `event` to the core and carries out what it says.
    @inline(__always)
    func handle(_ event: HubEvent) {
        server.owner.check()
        carryOut(core.handle(event, at: clock()))
    }

    // MARK: ServerDelegate

    func admit(upgrade request: RequestHead) -> Result<Admission, HTTPRefusal> {
        server.owner.check()
        if let refusal = gate.admit(request, now: WebSocketServer.nowNanos()) {
            logger.debug("upgrade refused", metadata: ["request": "\(request)", "status": "\(refusal.status)"])
            return .failure(refusal)
        }
        if drain != nil {
            return .failure(HTTPRefusal(status: 503, message: "this hub is draining: connect to another hub"))
        }
        let path = request.path
        if path == "/echo" {
            return echoEnabled ? .success(Admission(route: .echo))
                               : .failure(HTTPRefusal(status: 404, message: "the echo endpoint is off (start the hub with --echo)"))
        }
        switch BoardAddress.parse(path: path) {
        case let .failure(refusal):
            return .failure(HTTPRefusal(status: refusal.status, message: refusal.message))
        case let .success(address):
            if let log, !log.isUp(address) {
                // R8: a board whose store does not answer takes nobody new.
                return .failure(HTTPRefusal(status: 503,
                                            message: "the hub cannot reach the store of board \(address); try another hub or later"))
            }
            if let refusal = core.admits(board: address) {
                return .failure(HTTPRefusal(status: refusal.status, message: refusal.message))
            }
            // A8: a header token is checked before the upgrade; without one
            // the connection waits for an `auth` frame (HubCore+Access).
            guard let verifier = core.verifier, let token = request.bearerToken else {
                return .success(Admission(route: .board(address.key), origin: request.origin, client: Self.clientName(request)))
            }
            do throws(TokenRefusal) {
                let grant = try verifiedGrant(token, with: verifier)
                guard grant.role(for: address) != nil else {
                    core.counters.authForbidden += 1
                    logger.info("upgrade refused 403",
                                metadata: ["board": "\(address)", "sub": "\(grant.sub)", "peer": "\(request.peerAddress)"])
                    return .failure(HTTPRefusal(status: 403, message: "your token gives no role on this board"))
                }
                return .success(Admission(route: .board(address.key), grant: grant, origin: request.origin,
                                          client: Self.clientName(request)))
            } catch {
                core.counters.authRefused += 1
                // Who and why, never the token (docs/SECURITY.md).
                logger.info("upgrade refused 401",
                            metadata: ["board": "\(address)", "reason": "\(error.code)", "peer": "\(request.peerAddress)"])
                return .failure(HTTPRefusal(status: 401, message: error.reason))
            }
        }
    }

    func opened(_ connection: ServerConnection) {
        guard case let .board(key) = connection.route else { return }
        gate.opened(connection.id, now: WebSocketServer.nowNanos())
        connectionFacts[connection.id] = (Date(), connection.admission.origin != nil ? "page" : connection.admission.client)
        handle(.upgraded(connection: connection.id, board: BoardAddress(key: key), grant: connection.admission.grant as? Grant))
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
        handle(isText ? .frame(connection: connection.id, message) : .binary(connection: connection.id))
    }

    /// O4: what a client says it is on the upgrade (`?client=watch`: the
    /// terminal client's full screen), for the console; only names the
    /// console knows are kept, anything else counts as not said.
    static func clientName(_ request: RequestHead) -> String? {
        request.queryValues["client"].flatMap { $0 == "watch" ? $0 : nil }
    }

    func closed(_ connection: ServerConnection) {
        guard case .board = connection.route else { return }
        gate.closed(connection.id)
        connectionFacts[connection.id] = nil
        handle(.left(connection: connection.id))
    }

    /// Only a kind that answers HTTP below its boards takes a body (a shop's
    /// image: 1 MiB, P4); the hub's own paths take none.
    var maxRequestBodyBytes: Int { HostedKinds.largestRequestBody }

    func admitBody(of request: RequestHead) -> HTTPResponse? {
        server.owner.check()
        if Self.isAdmin(request.path) {
            // The console's actions: small JSON bodies (O12); it answers a token in the query itself (JSON).
            return (request.contentLength ?? 0) <= 65_536 ? nil : .text(413, "the console's requests are at most 64 KiB")
        }
        if let refusal = gate.refuseQueryToken(request) { return .text(refusal.status, refusal.message) }
        for kind in HostedKinds.withHTTP {
            switch kind.admitBody(of: request, on: self) {
            case .notOurs: continue
            case .admitted: return nil
            case let .refused(answer): return answer
            }
        }
        let stored = HostedKinds.withHTTP.compactMap { $0.storedByHTTP }
        return .text(405, stored.isEmpty ? "nothing is stored by HTTP here"
                                         : "only these are stored by HTTP: " + stored.joined(separator: "; "))
    }

    func respond(to request: RequestHead, body: [UInt8], exchange: UInt64) -> HTTPResponse? {
        server.owner.check()
        // The console answers its own refusals (JSON, O12), a token in the query included.
        if Self.isAdmin(request.path) { return adminResponse(to: request, body: body, exchange: exchange) }
        if let refusal = gate.refuseQueryToken(request) {
            return HTTPResponse(status: refusal.status, contentType: "text/plain", body: Array((refusal.message + "\n").utf8))
        }
        for kind in HostedKinds.withHTTP {
            if case let .answer(answer) = kind.respond(to: request, body: body, exchange: exchange, on: self) { return answer }
        }
        guard request.method == "GET" else {
            return .text(405, "\(request.method) is not taken here; only GET (and PUT of a shop's images)")
        }
        return page(for: request)
    }

    /// Pages, `/healthz`, `/metrics` (`respond` refused a token in the query already).
    private func page(for request: RequestHead) -> HTTPResponse {
        let bare = request.path
        switch bare {
        case "/healthz":
            if drain != nil { return HTTPResponse(status: 503, contentType: "text/plain", body: Array("draining\n".utf8)) }
            if let problem = log?.problem {
                return HTTPResponse(status: 503, contentType: "text/plain", body: Array((problem + "\n").utf8))
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
            if let log { body += Array(log.metricsText(counters: core.counters).utf8) }
            return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4", body: body)
        default:
            if case let .success(address) = BoardAddress.parse(path: bare), let kind = HostedKinds.kind(named: address.kind),
               let file = web.file(for: "/" + kind.page) {
                return HTTPResponse(status: 200, contentType: file.type, body: file.body, cacheable: false)
            }
            if let file = web.file(for: bare) {
                return HTTPResponse(status: 200, contentType: file.type, body: file.body, cacheable: false)
            }
            return HTTPResponse(status: 404, contentType: "text/plain", body: Array(
                "not found: boards are at ws://HOST:PORT\(HostedKinds.paths), their pages at the same paths\n".utf8))
        }
    }

    func tick(nowNanos: UInt64) {
        for id in gate.overdue(now: nowNanos) {
            if let connection = server.connections[id] {
                server.close(connection, code: 4401, reason: "no token within \(gate.policy.authTimeoutSeconds) s")
            }
        }
        gate.sweep(now: nowNanos)
        process.update(nowNanos: nowNanos)
        drainStep(nowNanos: nowNanos)
        publishConsole(nowNanos: nowNanos)
        if nowNanos / 1_000_000_000 % 10 == 0 { traffic.keep { self.core.boards[$0] != nil } }
        handle(.tick)
    }

    func serviceLoopDidRun() {
        handle(.turnEnded)
    }

    // MARK: Store

    /// Starts the store's threads; their answers come back on the service thread.
    func startStore() {
        log?.start { [weak self] answers in
            guard let self else { return }
            server.post { [self] in
                for answer in answers { storeAnswered(answer) }
                handle(.turnEnded)
            }
        }
    }

    private func storeAnswered(_ answer: StoreAnswer) {
        server.owner.check()
        switch answer {
        case let .storeFailed(error):
            guard storeFailure == nil else { return }
            storeFailure = error
            logger.critical("store failed; stopping so nothing unstored is acknowledged", metadata: ["error": "\(error)"])
            server.stop()
        case let .imageStored(exchange, failure):
            httpSteps.removeValue(forKey: exchange)?(.imageStored(failure))
        case let .imageRead(exchange, _, result):
            httpSteps.removeValue(forKey: exchange)?(.imageRead(result))
        case let .boardsCounted(exchange, result):
            httpSteps.removeValue(forKey: exchange)?(.boardsCounted(result))
        default:
            handle(.store(answer))
        }
    }

    /// Stops the store once the loop has ended: what is queued is written first.
    func stopStore() {
        guard let log else { return }
        // A commit that failed in the final flush posted to a loop that had already stopped.
        if let failure = log.stop(), storeFailure == nil {
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
                    if let waiting = adminWaiting.removeValue(forKey: exchange) {
                        waiting(frame)
                        continue
                    }
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
                    logger.info("connection closed \(code)",
                                metadata: ["reason": "\(reason)", "path": "\(connection.path)", "peer": "\(connection.peerAddress)"])
                }
                server.close(connection, code: code, reason: reason)
            case let .authenticated(id):
                authenticated(id)
            case let .store(request):
                guard let log else {
                    assertionFailure("a store action on a hub without a store: \(request)")
                    continue
                }
                log.carry(request)
            case let .httpBoard(exchange, _, ready, reason):
                httpSteps.removeValue(forKey: exchange)?(.board(ready: ready, reason: reason))
            case let .report(report):
                switch report.level {
                case .notice: logger.notice("\(report.message)", metadata: ["board": "\(report.board)"])
                case .error: logger.error("\(report.message)", metadata: ["board": "\(report.board)"])
                }
            }
        }
    }

    /// A token checked now, and against the operators' revocations (O6):
    /// every token the shell takes (upgrades, HTTP) goes through here.
    func verifiedGrant(_ token: String, with verifier: TokenVerifier? = nil) throws(TokenRefusal) -> Grant {
        guard let verifier = verifier ?? core.verifier else { throw .missing }
        let grant = try verifier.verify(token, now: Date())
        if core.revocations.revokes(grant) { throw .revoked }
        return grant
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
