import CLibWebsockets
import Glibc
import Synchronization

/// The application side of the client loop. Every call comes on its thread.
public protocol ClientDelegate: AnyObject {
    func connected(_ connection: ClientConnection)
    func received(_ connection: ClientConnection, message: UnsafeRawBufferPointer, isText: Bool)
    /// The connection failed or closed; `reason` says why for a person.
    func disconnected(_ connection: ClientConnection, reason: String)
    /// After every turn of the loop (about every 50 ms when idle).
    func serviceLoopDidRun()
}

/// How a client loop reads the frames of its `ws://` connections.
public enum ClientReader: Sendable, Equatable {
    /// libwebsockets' own WebSocket client (its parser takes a call per byte).
    case libwebsockets
    /// A plain socket of libwebsockets with the handshake and frames done
    /// here (`ClientUpgrade`, `HubFrameReader`, `MaskedFrame`): a frame's
    /// payload is handed on where it lies. `wss://` connections always use
    /// libwebsockets' client.
    case bulk
}

/// Outgoing WebSocket connections on one libwebsockets context and one
/// thread: one for `syncclient watch`, thousands for `syncclient bench`.
/// Same threading rule as the server: only the loop's thread touches lws;
/// others use `post(_:)`.
public final class WebSocketClient: @unchecked Sendable {
    // Sendable: confined to the loop's thread, checked by `owner` (debug builds); `inbox` and `wakeable` are Mutexes.

    /// Set before `start`; called on the loop's thread only.
    public weak var delegate: (any ClientDelegate)?
    /// The loop's thread: claimed by `run` on its thread (and by `start`
    /// while it creates the context), released when `run` returns. Every
    /// entry that touches lws or the connections checks it, and so do the
    /// delegates confined to the loop: a use from another thread, before
    /// `run` or after it, traps in debug builds.
    public let owner = ThreadOwner("WebSocketClient")
    /// The largest message taken (64 MiB): above every frame a hub sends
    /// (docs/rules: each kind bounds its state, so `sync` stays below it).
    /// A larger one closes the connection with a reason saying so, never
    /// silently. Set before `start`.
    public var maxMessageBytes = 64 << 20
    /// The context, used by `start` and then only by the loop's thread.
    private var context: OpaquePointer?
    /// The context other threads may wake: `lws_cancel_service` is called
    /// only under this lock, and `run` clears it under the lock before
    /// `lws_context_destroy`, so no wake reaches a context being freed.
    private let wakeable = Mutex<LiveContext?>(nil)
    private let inbox = Mutex<[@Sendable () -> Void]>([])
    private let stopRequested = Atomic<Bool>(false)
    private var nextID: UInt64 = 0
    /// Live connections by the user pointer lws hands back: looked up, never
    /// dereferenced, so a late callback for a finished connection is harmless.
    /// An entry leaves when lws destroys the connection (`WSI_DESTROY`).
    var connections: [UnsafeMutableRawPointer: ClientConnection] = [:]
    private let protocols: UnsafeMutablePointer<lws_protocols>
    let protocolName = strdup("synchub-client")
    private let fdLimit: UInt32
    /// How often the loop is woken when the network is quiet.
    private let tickMicros: UInt32

    private let eventLoop: EventLoopKind
    private var evLoop: OpaquePointer?
    private var ticker: pthread_t?
    /// How `wss://` hubs are checked; nil: this loop makes plain `ws://` connections only.
    public let tls: ClientTLS?
    /// How `ws://` connections read their frames.
    public let reader: ClientReader

    /// `tls`: needed for `wss://` URLs (it loads OpenSSL and the trusted CAs once per loop).
    public init(fdLimit: UInt32 = 4096, tickMicros: UInt32 = 50_000, eventLoop: EventLoopKind = .libev, tls: ClientTLS? = nil,
                reader: ClientReader = .libwebsockets) {
        self.reader = reader
        self.fdLimit = fdLimit
        self.eventLoop = eventLoop
        self.tickMicros = tickMicros
        self.tls = tls
        protocols = .allocate(capacity: 2)
        protocols.initialize(repeating: lws_protocols(), count: 2)
        protocols[0].name = UnsafePointer(protocolName)
        protocols[0].callback = clientCallback
        protocols[0].rx_buffer_size = 4096
        protocols[0].tx_packet_size = 65536
    }

    deinit {
        protocols.deallocate()
        free(protocolName)
    }

    /// Creates the context; then `connect` and `run` may be used.
    public func start() -> Bool {
        // lws calls back while it creates the context; the thread of `run`
        // (often another) claims the loop from then on.
        owner.claim()
        defer { owner.release() }
        lws_set_log_level(Int32(getenv("SYNCCLIENT_LWS_DEBUG") != nil ? 0x3ff : 0), nil)
        var info = lws_context_creation_info()
        info.port = CONTEXT_PORT_NO_LISTEN
        info.protocols = UnsafePointer(protocols)
        info.fd_limit_per_thread = descriptorTableSize(forSockets: fdLimit)
        info.timeout_secs = 10
        info.connect_timeout_secs = 5
        info.user = Unmanaged.passUnretained(self).toOpaque()
        if let tls {
            info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            // `--ca FILE` replaces the system's CAs: trust exactly what was named.
            if tls.caFile != nil { info.options |= UInt64(LWS_SERVER_OPTION_DISABLE_OS_CA_CERTS) }
        }
        let loop = eventLoop == .libev ? swlws_ev_loop_new() : nil
        var foreignLoops: [UnsafeMutableRawPointer?] = [loop.map { UnsafeMutableRawPointer($0) }]
        // Read while the context is created (the CA file is loaded then), freed after.
        let caFile = tls?.caFile.map { strdup($0) } ?? nil
        defer { free(caFile) }
        info.client_ssl_ca_filepath = UnsafePointer(caFile)
        context = foreignLoops.withUnsafeMutableBufferPointer { loops in
            if loop != nil {
                info.options |= UInt64(LWS_SERVER_OPTION_LIBEV)
                info.foreign_loops = loops.baseAddress
            }
            return lws_create_context(&info)
        }
        guard let context else {
            if let loop { swlws_ev_loop_destroy(loop) }
            return false
        }
        evLoop = loop
        wakeable.withLock { $0 = LiveContext(pointer: context) }
        return true
    }

    /// Services the loop on the calling thread until `stop()`.
    public func run() {
        guard let context else { return }
        // This thread is the loop's until `run` returns.
        owner.claim()
        defer { owner.release() }
        startTicker()
        if let evLoop {
            let watcher = swlws_turn_watcher_start(evLoop, { raw in
                guard let raw else { return }
                Unmanaged<WebSocketClient>.fromOpaque(raw).takeUnretainedValue().turnEnded()
            }, Unmanaged.passUnretained(self).toOpaque())
            swlws_ev_run(evLoop)
            if let watcher { swlws_turn_watcher_stop(evLoop, watcher) }
        } else {
            while !stopRequested.load(ordering: .relaxed) {
                if lws_service(context, 0) < 0 { break }
                turnEnded()
            }
        }
        stopRequested.store(true, ordering: .relaxed)
        if let ticker { pthread_join(ticker, nil) }
        ticker = nil
        // Under the lock: a thread that is waking the loop finishes first,
        // and none starts again; work posted from now on is dropped.
        wakeable.withLock { $0 = nil }
        lws_context_destroy(context)
        self.context = nil
        connections.removeAll()
        if let evLoop { swlws_ev_loop_destroy(evLoop) }
        evLoop = nil
    }

    private func turnEnded() {
        owner.check()
        delegate?.serviceLoopDidRun()
        if stopRequested.load(ordering: .relaxed), let evLoop { swlws_ev_break(evLoop) }
    }

    /// Thread-safe: runs `work` on the loop's thread soon; once `run` is
    /// ending (the context is being destroyed), `work` never runs.
    public func post(_ work: @escaping @Sendable () -> Void) {
        inbox.withLock { $0.append(work) }
        wake()
    }

    /// Thread-safe: leave `run()` soon.
    public func stop() {
        stopRequested.store(true, ordering: .relaxed)
        wake()
    }

    /// Thread-safe: ends the loop's current wait. Does nothing before
    /// `start` or once `run` is destroying the context.
    private func wake() {
        wakeable.withLock { live in
            if let live { lws_cancel_service(live.pointer) }
        }
    }

    /// Starts a connection (loop thread, while `run` runs). `sourceAddress` binds the local end
    /// (127.0.0.x) so a load test can pass the ephemeral-port limit of one address.
    /// `bearerToken` goes out as `Authorization: Bearer TOKEN` on the upgrade.
    @discardableResult
    public func connect(to url: WebSocketURL, sourceAddress: String? = nil, bearerToken: String? = nil) -> ClientConnection {
        owner.check()
        nextID += 1
        let connection = ClientConnection(id: nextID, url: url, owner: owner)
        connection.authorization = bearerToken.map { Array("Bearer \($0)".utf8CString) }
        guard !url.isSecure || tls != nil else {
            finish(connection, reason: "\(url.scheme):// needs a client loop started with TLS")
            return connection
        }
        let key = Unmanaged.passUnretained(connection).toOpaque()
        connections[key] = connection
        var info = lws_client_connect_info()
        info.context = context
        info.port = Int32(url.port)
        info.ssl_connection = url.isSecure ? (tls?.connectFlags ?? 0) : 0
        info.ietf_version_or_minus_one = -1
        info.protocol = nil
        info.userdata = Unmanaged.passUnretained(connection).toOpaque()
        let bulk = reader == .bulk && !url.isSecure
        if bulk {
            connection.isBulk = true
            connection.upgrade = .random()
            connection.frames = HubFrameReader(maxMessageBytes: maxMessageBytes)
        }
        let wsi: OpaquePointer? = url.host.withCString { host in
            url.path.withCString { path in
                (sourceAddress ?? "").withCString { source in
                    info.address = host
                    info.host = host
                    // No Origin: that header says "a browser page from this site",
                    // which a hub checks against its allowed origins (A12).
                    info.origin = nil
                    info.path = path
                    info.iface = sourceAddress == nil ? nil : source
                    return "RAW".withCString { raw in
                        if bulk {
                            // A plain socket bound to this loop's protocol: its
                            // callbacks are `WebSocketClient+Bulk.swift`'s.
                            info.method = raw
                            info.local_protocol_name = UnsafePointer(protocolName)
                        }
                        return lws_client_connect_via_info(&info)
                    }
                }
            }
        }
        connection.wsi = wsi
        if wsi == nil {
            finish(connection, reason: "could not start a connection to \(url)")
            connections[key] = nil
        }
        return connection
    }

    /// Queues a text frame (loop thread).
    public func send(_ text: String, on connection: ClientConnection) {
        owner.check()
        guard connection.isOpen, !connection.isFinished, !connection.closeQueued, let wsi = connection.wsi else { return }
        if connection.isBulk {
            connection.outgoing.append(OutgoingFrame(MaskedFrame.encode(opcode: MaskedFrame.text, Array(text.utf8),
                                                                        mask: MaskedFrame.randomMask())))
        } else {
            connection.outgoing.append(OutgoingFrame(text: text))
        }
        lws_callback_on_writable(wsi)
    }

    /// Sends a close frame (1000) and drops the connection (loop thread).
    public func close(_ connection: ClientConnection) {
        owner.check()
        guard let wsi = connection.wsi, !connection.isFinished, !connection.closeQueued else { return }
        connection.closeRequested = true
        lws_callback_on_writable(wsi)
    }

    public static func nowNanos() -> UInt64 { WebSocketServer.nowNanos() }

    /// Whether the caller is on the thread of a running `run`.
    public var isOnLoopThread: Bool { owner.isOwnedHere }

    private func startTicker() {
        // Wakes the loop every `tickMicros` so timers in `serviceLoopDidRun` run
        // while the network is quiet (lws_service may sleep long when idle).
        // Joined (in `run`) before the context is destroyed.
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            let client = Unmanaged<WebSocketClient>.fromOpaque(raw).takeRetainedValue()
            while !client.stopRequested.load(ordering: .relaxed) {
                usleep(client.tickMicros)
                client.wake()
            }
            return nil
        }, box)
        ticker = thread
    }

    func finish(_ connection: ClientConnection, reason: String) {
        guard !connection.isFinished else { return }
        connection.isFinished = true
        connection.isOpen = false
        connection.wsi = nil
        delegate?.disconnected(connection, reason: reason)
    }

    fileprivate func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                            _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        owner.check()
        if reason == LWS_CALLBACK_OPENSSL_PERFORM_SERVER_CERT_VERIFICATION {
            // `user` is OpenSSL's X509_STORE_CTX here, `length` preverify_ok;
            // the connection is the wsi's own user pointer.
            if length == 0, let own = lws_wsi_user(wsi), let connection = connections[own], connection.certificateProblem == nil {
                var text = [CChar](repeating: 0, count: 256)
                swlws_certificate_problem(user, &text, text.count)
                connection.certificateProblem = String(cString: text)
            }
            return 0
        }
        if reason == LWS_CALLBACK_EVENT_WAIT_CANCELLED {
            let work = inbox.withLock { queue -> [@Sendable () -> Void] in
                defer { queue.removeAll(keepingCapacity: true) }
                return queue
            }
            for item in work { item() }
            return 0
        }
        guard let user, let connection = connections[user] else {
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
        if connection.isBulk, let answer = handleBulk(wsi, reason, connection, input, length) { return answer }
        switch reason {
        case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
            guard let authorization = connection.authorization, let input else { break }
            let failed = authorization.withUnsafeBufferPointer { value in
                swlws_append_authorization(wsi, input, length, value.baseAddress) != 0
            }
            if failed { return -1 }
        case LWS_CALLBACK_WSI_DESTROY:
            finish(connection, reason: "the connection to the hub was lost")
            connections[user] = nil
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            connection.isOpen = true
            delegate?.connected(connection)
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            let text = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection failed"
            finish(connection, reason: connectionError(wsi, connection, lwsText: text))
        case LWS_CALLBACK_CLIENT_CLOSED:
            finish(connection, reason: closeReasons.removeValue(forKey: connection.id) ?? "the connection to the hub was lost")
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            if let input, length >= 2 {
                let bytes = input.assumingMemoryBound(to: UInt8.self)
                let code = Int(bytes[0]) << 8 | Int(bytes[1])
                let text = String(decoding: UnsafeBufferPointer(start: bytes + 2, count: length - 2), as: UTF8.self)
                connection.closeCode = code
                connection.closeReason = text
                closeReasons[connection.id] = "closed by the hub (\(code)\(text.isEmpty ? "" : ": " + text))"
            }
        case LWS_CALLBACK_CLIENT_RECEIVE:
            let isFinal = lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0
            let isText = lws_frame_is_binary(wsi) == 0
            if connection.receiveBuffer.count + length > maxMessageBytes {
                closeReasons[connection.id] = "the hub sent a message of more than \(maxMessageBytes >> 20) MiB, " +
                                              "more than this client takes"
                return -1
            }
            if isFinal && connection.receiveBuffer.isEmpty {
                delegate?.received(connection, message: UnsafeRawBufferPointer(start: input, count: length), isText: isText)
            } else {
                if let input { connection.receiveBuffer.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length)) }
                if isFinal {
                    let message = connection.receiveBuffer
                    connection.receiveBuffer = []
                    message.withUnsafeBytes { delegate?.received(connection, message: $0, isText: isText) }
                }
            }
        case LWS_CALLBACK_CLIENT_WRITEABLE:
            if connection.closeRequested {
                var reason = Array("bye".utf8)
                lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, &reason, reason.count)
                return -1
            }
            guard let frame = connection.takeNextFrame() else { return 0 }
            if lws_write(wsi, frame.payload, frame.count, frame.isText ? LWS_WRITE_TEXT : LWS_WRITE_BINARY) < frame.count {
                return -1
            }
            if connection.queuedFrames > 0 { lws_callback_on_writable(wsi) }
        default:
            break
        }
        return 0
    }

    var closeReasons: [UInt64: String] = [:]

    /// Why a connection failed, for a person: a refused certificate or a
    /// refused upgrade (its HTTP status, read while lws still holds the
    /// answer's headers), else lws's own words.
    private func connectionError(_ wsi: OpaquePointer, _ connection: ClientConnection, lwsText: String) -> String {
        if let problem = connection.certificateProblem {
            return "the hub's TLS certificate was refused: \(problem)"
        }
        if connection.url.isSecure, lwsText.hasPrefix("connect SSL err") || lwsText.hasPrefix("connect SYSCALL") {
            // OpenSSL's own text here is a bare error number.
            return "the TLS handshake failed (does the hub serve wss:// on this port?): \(lwsText)"
        }
        let status = Int(lws_http_client_http_response(wsi))
        guard status >= 300, status != 101 else { return lwsText }
        connection.refusedStatus = status
        var header = [CChar](repeating: 0, count: 512)
        swlws_www_authenticate(wsi, &header, Int32(header.count))
        connection.refusedReason = BearerChallenge(String(cString: header)).description ?? ""
        return "the hub refused the connection (HTTP \(status)\(connection.refusedReason.isEmpty ? "" : ": " + connection.refusedReason))"
    }
}

private func clientCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                            _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let raw = lws_context_user(context) else {
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
    return Unmanaged<WebSocketClient>.fromOpaque(raw).takeUnretainedValue().handle(wsi, reason, user, input, length)
}
