import CLibWebsockets
import Glibc
import Synchronization

/// The WebSocket and HTTP server: one libwebsockets context serviced by one
/// thread (this Debian build has `LWS_MAX_SMP 1`). Only that thread touches
/// lws and the connections; other threads hand it work with `post(_:)`,
/// which enqueues under a lock and wakes the loop with `lws_cancel_service`.
public final class WebSocketServer: @unchecked Sendable {
    // Sendable: confined to the service thread, checked by `owner` (debug builds); `inbox` and `wakeable` are Mutexes.

    public let options: ServerOptions
    /// Set before `run` (the hub sets it in its `init`); called on the service thread only.
    public weak var delegate: (any ServerDelegate)?
    /// The service thread: claimed when `run` starts (before lws creates
    /// the context, whose callbacks then pass), released when `run` returns.
    /// Every entry that touches the connections or lws checks it: a use
    /// before `run`, after it, or from another thread traps in debug builds.
    public let owner = ThreadOwner("WebSocketServer")

    /// The context other threads may wake. They call `lws_cancel_service`
    /// only while holding this lock, and `run` clears it under the lock
    /// before `lws_context_destroy`, so no wake reaches a context being freed.
    private let wakeable = Mutex<LiveContext?>(nil)
    private var evLoop: OpaquePointer?
    private var ticker: pthread_t?
    /// Set when libev was asked for but its lws plugin could not be loaded
    /// (read it on the service thread: in `run`'s `listening`).
    public var eventLoopFallback: Bool {
        owner.check()
        return usedFallbackLoop
    }
    private var usedFallbackLoop = false
    private let tickerStop = Atomic<Bool>(false)
    private let inbox = Mutex<[@Sendable () -> Void]>([])
    private let stopRequested = Atomic<Bool>(false)
    private var stopDeadline: UInt64?
    private var nextConnectionID: UInt64 = 0
    /// The open WebSocket connections by id (service thread only).
    public var connections: [UInt64: ServerConnection] {
        owner.check()
        return live
    }
    private var live: [UInt64: ServerConnection] = [:]
    /// What the server counted (service thread only).
    public var stats: ServerStats {
        owner.check()
        return counted
    }
    var counted = ServerStats()
    /// Scratch buffer for writing several frames at once (service thread only).
    let batch = FrameBatch(capacity: 64 * 1024)
    private var lastTick: UInt64 = 0
    /// Upgrades the delegate admitted that have not reached ESTABLISHED yet,
    /// by their lws handle: taken at ESTABLISHED, dropped at WSI_DESTROY, and
    /// forgotten after the handshake timeout in any case.
    private var pendingAdmissions: [OpaquePointer: (admission: Admission, since: UInt64)] = [:]
    /// Plain HTTP requests whose answer is not written yet, by exchange id (`answer`).
    var httpExchanges: [UInt64: HTTPExchange] = [:]
    var lastExchange: UInt64 = 0

    // Tables and strings lws keeps pointers to: they live as long as the server.
    private let protocols: UnsafeMutablePointer<lws_protocols>
    private let retryPolicy: UnsafeMutablePointer<lws_retry_bo_t>
    private let protocolName = strdup("synchub")
    private let listenerProtocolName = strdup("synchub-shared-listener")
    private let vhostName = strdup("synchub")
    private let iface: UnsafeMutablePointer<CChar>?
    private let certificatePath: UnsafeMutablePointer<CChar>?
    private let keyPath: UnsafeMutablePointer<CChar>?
    private let alpn = strdup("http/1.1")

    public init(options: ServerOptions) {
        self.options = options
        protocols = .allocate(capacity: 3)
        protocols.initialize(repeating: lws_protocols(), count: 3)
        protocols[1].name = UnsafePointer(listenerProtocolName)
        protocols[1].callback = sharedListenerCallback
        protocols[0].name = UnsafePointer(protocolName)
        protocols[0].callback = serverCallback
        protocols[0].per_session_data_size = MemoryLayout<UnsafeMutableRawPointer?>.size
        protocols[0].rx_buffer_size = 2048
        protocols[0].tx_packet_size = 65536
        retryPolicy = .allocate(capacity: 1)
        retryPolicy.initialize(to: lws_retry_bo_t(
            retry_ms_table: nil, retry_ms_table_count: 0, conceal_count: 0,
            secs_since_valid_ping: options.pingAfterSeconds,
            secs_since_valid_hangup: options.hangupAfterSeconds, jitter_percent: 0))
        iface = options.host == "0.0.0.0" || options.host.isEmpty ? nil : strdup(options.host)
        certificatePath = options.tls.map { strdup($0.certificatePath) }
        keyPath = options.tls.map { strdup($0.keyPath) }
    }

    deinit {
        protocols.deallocate()
        retryPolicy.deallocate()
        free(protocolName)
        free(listenerProtocolName)
        free(vhostName)
        free(iface)
        free(certificatePath)
        free(keyPath)
        free(alpn)
    }

    /// Creates the context and services it on the calling thread until
    /// `stop()`. Calls `listening` with the bound port once it accepts.
    public func run(listening: (Int) -> Void) throws(HTTPRefusal) {
        // This thread is the service thread until `run` returns (or throws).
        owner.claim()
        defer { owner.release() }
        lws_set_log_level(Int32(LLL_ERR), emitLibwebsocketsLog)
        var info = lws_context_creation_info()
        var sharedListener: Int32 = -1
        var sharedPort: Int32 = 0
        if options.reusePort {
            // lws does not set SO_REUSEPORT: the hub listens itself and lws adopts the socket.
            let host = options.host == "0.0.0.0" ? "" : options.host
            sharedListener = swlws_open_shared_listener(host, Int32(options.port), &sharedPort)
            guard sharedListener >= 0 else {
                throw HTTPRefusal(
                    status: 0,
                    message: "could not listen on \(options.host):\(options.port) with --reuse-port: " +
                             "\(String(cString: strerror(-sharedListener))) (an IPv4 address of this machine is needed; " +
                             "every hub sharing the port must be started with --reuse-port)")
            }
        }
        info.port = options.reusePort ? -2 : Int32(options.port)  // -2: CONTEXT_PORT_NO_LISTEN_SERVER
        info.iface = UnsafePointer(iface)
        info.protocols = UnsafePointer(protocols)
        info.vhost_name = UnsafePointer(vhostName)
        info.options = UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8)
        if options.reusePort { info.options |= UInt64(LWS_SERVER_OPTION_ALLOW_LISTEN_SHARE) }
        info.retry_and_idle_policy = UnsafePointer(retryPolicy)
        info.timeout_secs = options.handshakeTimeoutSeconds
        info.fd_limit_per_thread = descriptorTableSize(forSockets: options.fdLimit)
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.max_http_header_data = options.maxHeaderBytes
        if options.tls != nil {
            // TLS only: a plain request on this port fails its handshake
            // (no LWS_SERVER_OPTION_ALLOW_NON_SSL_ON_SSL_PORT). HTTP/1.1 only
            // over ALPN: WebSockets over HTTP/2 are not something we serve.
            info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            info.ssl_cert_filepath = UnsafePointer(certificatePath)
            info.ssl_private_key_filepath = UnsafePointer(keyPath)
            info.alpn = UnsafePointer(alpn)
        }
        libwebsocketsErrors.withLock { $0 = [] }
        var evLoop = options.eventLoop == .libev ? swlws_ev_loop_new() : nil
        var foreignLoops: [UnsafeMutableRawPointer?] = [evLoop.map { UnsafeMutableRawPointer($0) }]
        var created: OpaquePointer? = foreignLoops.withUnsafeMutableBufferPointer { loops in
            var withLoop = info
            if evLoop != nil {
                withLoop.options |= UInt64(LWS_SERVER_OPTION_LIBEV)
                withLoop.foreign_loops = loops.baseAddress
            }
            return lws_create_context(&withLoop)
        }
        if created == nil, let loop = evLoop {
            // No libev plugin (libwebsockets-evlib-ev) on this machine: use lws's own loop.
            swlws_ev_loop_destroy(loop)
            evLoop = nil
            usedFallbackLoop = true
            created = lws_create_context(&info)
        }
        guard let context = created else {
            let said = libwebsocketsErrors.withLock { $0 }.joined(separator: "; ")
            let detail = said.isEmpty ? "" : " (libwebsockets: \(said))"
            if let tls = options.tls {
                throw HTTPRefusal(
                    status: 0,
                    message: "could not start TLS on \(options.host):\(options.port) with --tls-cert \(tls.certificatePath) --tls-key " +
                             "\(tls.keyPath): the address is in use or not of this machine, or the certificate and key are not a PEM " +
                             "pair that belongs together\(detail)")
            }
            throw HTTPRefusal(
                status: 0,
                message: "could not listen on \(options.host):\(options.port) (in use, or not an address of this machine?)\(detail)")
        }
        wakeable.withLock { $0 = LiveContext(pointer: context) }
        var port = lws_get_vhost_listen_port(lws_get_vhost_by_name(context, vhostName))
        if sharedListener >= 0 {
            guard swlws_adopt_listener(lws_get_vhost_by_name(context, vhostName), sharedListener, listenerProtocolName) != nil else {
                Glibc.close(sharedListener)
                lws_context_destroy(context)
                throw HTTPRefusal(status: 0, message: "libwebsockets could not adopt the shared listening socket (--reuse-port)")
            }
            port = sharedPort
        }
        startTicker()
        listening(Int(port))
        if let evLoop {
            // libev runs the turns; the prepare watcher ends each one.
            self.evLoop = evLoop
            let watcher = swlws_turn_watcher_start(evLoop, { raw in
                guard let raw else { return }
                Unmanaged<WebSocketServer>.fromOpaque(raw).takeUnretainedValue().turnEnded()
            }, Unmanaged.passUnretained(self).toOpaque())
            swlws_ev_run(evLoop)
            if let watcher { swlws_turn_watcher_stop(evLoop, watcher) }
        } else {
            while true {
                if lws_service(context, 0) < 0 { break }
                if turnEnded() { break }
            }
        }
        stopTicker()
        // Under the lock: a thread that is waking the loop finishes first,
        // and none starts again; work posted from now on is dropped.
        wakeable.withLock { $0 = nil }
        lws_context_destroy(context)
        if let evLoop { swlws_ev_loop_destroy(evLoop) }
        self.evLoop = nil
    }

    /// The end of a turn of the service loop. Returns true once a stop has
    /// completed (and breaks the libev loop).
    @discardableResult
    private func turnEnded() -> Bool {
        owner.check()
        holdingWrites { delegate?.serviceLoopDidRun() }
        guard let deadline = stopDeadline, live.isEmpty || Self.nowNanos() > deadline else { return false }
        if let evLoop { swlws_ev_break(evLoop) }
        return true
    }

    /// Wakes the service loop four times a second so timers (stalled
    /// clients, idle boards) run even when no socket has news.
    /// Joined before the context is destroyed, so it never wakes a freed one.
    private func startTicker() {
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            let server = Unmanaged<WebSocketServer>.fromOpaque(raw).takeRetainedValue()
            while !server.tickerStop.load(ordering: .acquiring) {
                usleep(250_000)
                server.wake()
            }
            return nil
        }, box)
        ticker = thread
    }

    private func stopTicker() {
        tickerStop.store(true, ordering: .releasing)
        if let ticker { pthread_join(ticker, nil) }
        ticker = nil
    }

    /// Thread-safe: runs `work` on the service thread soon; once `run` is
    /// ending (the context is being destroyed), `work` never runs.
    public func post(_ work: @escaping @Sendable () -> Void) {
        inbox.withLock { $0.append(work) }
        wake()
    }

    /// Thread-safe: close every connection with 1001 (going away), then return from `run`.
    public func stop() {
        guard !stopRequested.exchange(true, ordering: .relaxed) else { return }
        post { [self] in
            stopDeadline = Self.nowNanos() + 2_000_000_000
            for connection in live.values { close(connection, code: 1001, reason: "hub shutting down") }
            delegate?.tick(nowNanos: Self.nowNanos())
        }
    }

    /// Thread-safe: wake the loop so `tick` runs (the hub's timer calls this).
    /// Does nothing before `run` has a context or once it is destroying it.
    public func wake() {
        wakeable.withLock { live in
            if let live { lws_cancel_service(live.pointer) }
        }
    }

    /// Debug builds: traps unless called on the service thread while `run`
    /// runs (not before it starts, nor after it returns: `owner`).
    @inline(__always)
    public func assertOnServiceThread(file: StaticString = #fileID, line: UInt = #line) {
        owner.check(file: file, line: line)
    }

    /// Whether the caller is on the service thread of a running `run`.
    public var isOnServiceThread: Bool { owner.isOwnedHere }

    /// Whether replies are held now (`holdingWrites`), since when, and the
    /// connections with replies waiting for the hold to end.
    var holding = false
    var holdStarted: UInt64 = 0
    var held: [ServerConnection] = []

    /// The connection whose receive callback runs now: its replies wait for
    /// its writable callback (lws is in the middle of reading it).
    var receivingFrom: UInt64 = 0

    /// Monotonic clock in nanoseconds.
    public static func nowNanos() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    // MARK: Events from lws (service thread)

    fileprivate func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                            _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        owner.check()
        switch reason {
        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            switch admit(wsi) {
            case let .failure(refusal):
                _ = swlws_refuse_upgrade(wsi, refusal.status, String(refusal.message.prefix(900)))
                return 1
            case let .success(admission):
                pendingAdmissions[wsi] = (admission, Self.nowNanos())
                return 0
            }
        case LWS_CALLBACK_ESTABLISHED:
            return established(wsi, user)
        case LWS_CALLBACK_RECEIVE:
            guard let connection = Self.connection(user) else { return -1 }
            return receive(connection, input, length)
        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let connection = Self.connection(user) else { return -1 }
            return writeable(connection)
        case LWS_CALLBACK_CLOSED:
            guard let user, let raw = user.load(as: UnsafeMutableRawPointer?.self) else { return 0 }
            user.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
            let connection = Unmanaged<ServerConnection>.fromOpaque(raw).takeRetainedValue()
            connection.closed = true
            live[connection.id] = nil
            delegate?.closed(connection)
            return 0
        case LWS_CALLBACK_HTTP:
            return httpRequest(wsi, user, input)
        case LWS_CALLBACK_HTTP_BODY:
            return httpBody(user, input, length)
        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            return httpBodyComplete(wsi, user)
        case LWS_CALLBACK_HTTP_WRITEABLE:
            return httpWriteable(wsi, user)
        case LWS_CALLBACK_CLOSED_HTTP:
            httpClosed(user)
            return 0
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            drainInbox()
            return 0
        case LWS_CALLBACK_WSI_DESTROY:
            // An upgrade admitted but never established (its handshake failed).
            pendingAdmissions[wsi] = nil
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        default:
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
    }

    private func admit(_ wsi: OpaquePointer) -> Result<Admission, HTTPRefusal> {
        guard let path = requestPath(wsi) else {
            return .failure(HTTPRefusal(status: 414, message: "request path missing or longer than 511 bytes"))
        }
        guard let delegate else { return .failure(HTTPRefusal(status: 503, message: "hub is stopping")) }
        if stopRequested.load(ordering: .relaxed) { return .failure(HTTPRefusal(status: 503, message: "hub is stopping")) }
        return delegate.admit(upgrade: requestHead(wsi, path: path))
    }

    private func established(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
        guard let user, let admission = pendingAdmissions.removeValue(forKey: wsi)?.admission,
              !stopRequested.load(ordering: .relaxed) else { return -1 }
        nextConnectionID += 1
        let connection = ServerConnection(
            id: nextConnectionID, path: requestPath(wsi) ?? "", admission: admission,
            peerAddress: peerAddress(wsi), wsi: wsi, owner: owner)
        user.storeBytes(of: Unmanaged.passRetained(connection).toOpaque(), as: UnsafeMutableRawPointer?.self)
        live[connection.id] = connection
        delegate?.opened(connection)
        // From now on (out of this callback) its frames may be written at once.
        connection.writesDirectly = true
        return 0
    }

    private func receive(_ connection: ServerConnection, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        let limit = connection.route == .echo ? options.echoMaxMessageBytes : options.maxMessageBytes
        let wsi = connection.wsi
        let isFinal = lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0
        let isText = lws_frame_is_binary(wsi) == 0
        if connection.receiveBuffer.count + length > limit {
            var reason = Array("message larger than \(limit) bytes".utf8)
            lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, &reason, reason.count)
            counted.oversizedClosed += 1
            return -1
        }
        receivingFrom = connection.id
        defer { receivingFrom = 0 }
        if isFinal && connection.receiveBuffer.isEmpty {
            delegate?.received(connection, message: UnsafeRawBufferPointer(start: input, count: length), isText: isText)
            return 0
        }
        if let input, length > 0 {
            connection.receiveBuffer.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
        }
        if isFinal {
            let message = connection.receiveBuffer
            connection.receiveBuffer = []
            message.withUnsafeBytes { delegate?.received(connection, message: $0, isText: isText) }
        }
        return 0
    }

    private func drainInbox() {
        let work = inbox.withLock { queue -> [@Sendable () -> Void] in
            let taken = queue
            queue.removeAll(keepingCapacity: true)
            return taken
        }
        for item in work { holdingWrites(item) }
        let now = Self.nowNanos()
        if now - lastTick >= 250_000_000 {
            lastTick = now
            closeStalled(now: now)
            forgetStaleAdmissions(now: now)
            delegate?.tick(nowNanos: now)
        }
    }

    /// A client that has not taken a frame for `stallSeconds` is let go:
    /// its memory stays bounded and the others are not held back.
    private func closeStalled(now: UInt64) {
        let bound = options.stallSeconds * 1_000_000_000
        for connection in live.values {
            if let since = connection.waitingSince, connection.closing == nil, now - since > bound {
                counted.stalledClosed += 1
                close(connection, code: 1008, reason: "too slow: frames unread for \(options.stallSeconds) s")
            }
        }
    }

    private func forgetStaleAdmissions(now: UInt64) {
        guard !pendingAdmissions.isEmpty else { return }
        let bound = (UInt64(options.handshakeTimeoutSeconds) + 1) * 1_000_000_000
        pendingAdmissions = pendingAdmissions.filter { now &- $0.value.since < bound }
    }

    // MARK: Request headers

    private func requestPath(_ wsi: OpaquePointer) -> String? {
        var buffer = [CChar](repeating: 0, count: 512)
        let count = swlws_request_path(wsi, &buffer, Int32(buffer.count))
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<Int(count)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Reads what the delegate decides on; the query's values stay here.
    func requestHead(_ wsi: OpaquePointer, path: String) -> RequestHead {
        let query = query(wsi)
        var head = RequestHead(
            path: path,
            queryNames: query.names,
            origin: header(wsi, WSI_TOKEN_ORIGIN),
            host: header(wsi, WSI_TOKEN_HOST),
            bearerToken: header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION).flatMap(RequestHead.bearerToken(fromAuthorization:)),
            peerAddress: peerAddress(wsi),
            isTLS: options.tls != nil)
        head.queryValues = query.values
        head.forwardedFor = header(wsi, WSI_TOKEN_X_FORWARDED_FOR)
        return head
    }

    func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        let count = lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<Int(count)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The url-decoded names of the query's parameters (lws keeps each
    /// `name=value` as one fragment of WSI_TOKEN_HTTP_URI_ARGS).
    /// Also their values, but never of a name that holds `token` (a secret
    /// put in a URL goes no further than this file, RequestHead).
    func query(_ wsi: OpaquePointer) -> (names: [String], values: [String: String]) {
        let total = Int(lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS))
        guard total > 0 else { return ([], [:]) }
        var buffer = [CChar](repeating: 0, count: total + 1)
        var names: [String] = []
        var values: [String: String] = [:]
        var index: Int32 = 0
        while true {
            let count = lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS, index)
            guard count >= 0 else { break }
            let fragment = buffer[..<Int(count)].map { UInt8(bitPattern: $0) }
            let name = String(decoding: fragment.prefix { $0 != 0x3D }, as: UTF8.self)  // up to "="
            names.append(name)
            if !name.lowercased().contains("token"), let equals = fragment.firstIndex(of: 0x3D) {
                values[name] = String(decoding: fragment[(equals + 1)...], as: UTF8.self)
            }
            index += 1
        }
        return (names, values)
    }

    func peerAddress(_ wsi: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        swlws_peer_address(wsi, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    fileprivate static func connection(_ user: UnsafeMutableRawPointer?) -> ServerConnection? {
        guard let user, let raw = user.load(as: UnsafeMutableRawPointer?.self) else { return nil }
        return Unmanaged<ServerConnection>.fromOpaque(raw).takeUnretainedValue()
    }
}

/// A libwebsockets context as other threads may hold it: only to wake it.
struct LiveContext: @unchecked Sendable {
    // Sendable: guarded by its holder's `wakeable` Mutex; other threads only pass it to `lws_cancel_service`.
    let pointer: OpaquePointer
}

/// libwebsockets' error lines since the last context creation began, so a
/// failed start can say what lws saw (a bad key, a port in use).
private let libwebsocketsErrors = Mutex<[String]>([])

/// Where lws logs go: standard error, as lws would print them, and the
/// list above (bounded) for the start-up error message.
private func emitLibwebsocketsLog(_ level: Int32, _ line: UnsafePointer<CChar>?) {
    guard let line else { return }
    _ = write(2, line, strlen(line))
    let text = String(String(cString: line).split(whereSeparator: \.isNewline).joined(separator: " "))
    libwebsocketsErrors.withLock { errors in
        if errors.count < 8, !text.isEmpty { errors.append(text) }
    }
}

/// The C callback: finds the server through the context's user pointer.
private func serverCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                            _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let raw = lws_context_user(context) else {
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
    return Unmanaged<WebSocketServer>.fromOpaque(raw).takeUnretainedValue().handle(wsi, reason, user, input, length)
}

/// The shared listener's callback (--reuse-port): accepts what waits and
/// hands each connection to lws as a server connection.
private func sharedListenerCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                                    _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, reason == LWS_CALLBACK_RAW_RX_FILE else { return 0 }
    _ = swlws_accept_waiting(lws_get_vhost(wsi), lws_get_socket_fd(wsi))
    return 0
}
