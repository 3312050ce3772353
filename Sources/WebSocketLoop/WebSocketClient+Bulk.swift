import CLibWebsockets

/// The bulk reader's connections (`ClientReader.bulk`): libwebsockets keeps
/// the socket and the loop; the upgrade, the frames and the close handshake
/// are done here. Loop thread only, like the rest of `WebSocketClient`.
extension WebSocketClient {
    /// How long the hub has to answer the upgrade, as lws's own client allows.
    static let answerTimeoutSeconds: Int32 = 10
    /// How long the hub has to answer our close before the socket is closed anyway.
    static let closeTimeoutSeconds: Int32 = 5

    /// A plain socket's callback for a bulk connection; nil for the reasons
    /// every connection shares (`handle` takes those: a failed connect comes
    /// as `CLIENT_CONNECTION_ERROR`, the end as `WSI_DESTROY`).
    func handleBulk(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ connection: ClientConnection,
                    _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32? {
        switch reason {
        case LWS_CALLBACK_RAW_CONNECTED:
            guard let upgrade = connection.upgrade else { return -1 }
            let authorization = connection.authorization?.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            connection.outgoing.append(OutgoingFrame(upgrade.request(for: connection.url, authorization: authorization), isText: false))
            connection.answerDueNanos = Self.nowNanos() + UInt64(Self.answerTimeoutSeconds) * 1_000_000_000
            lws_set_timeout(wsi, PENDING_TIMEOUT_AWAITING_SERVER_RESPONSE, Self.answerTimeoutSeconds)
            lws_callback_on_writable(wsi)
            return 0
        case LWS_CALLBACK_RAW_RX:
            guard let input, length > 0 else { return 0 }
            let bytes = UnsafeRawBufferPointer(start: input, count: length)
            return connection.upgrade == nil ? readFrames(bytes, wsi, connection) : readAnswer(bytes, wsi, connection)
        case LWS_CALLBACK_RAW_WRITEABLE:
            return writeNext(wsi, connection)
        case LWS_CALLBACK_RAW_CLOSE:
            finish(connection, reason: closeReasons.removeValue(forKey: connection.id) ?? endedWithoutReason(connection))
            return 0
        default:
            return nil
        }
    }

    private func endedWithoutReason(_ connection: ClientConnection) -> String {
        guard connection.upgrade != nil else { return "the connection to the hub was lost" }
        return connection.answerDueNanos != 0 && Self.nowNanos() >= connection.answerDueNanos
            ? "the hub did not answer the upgrade within \(Self.answerTimeoutSeconds) s"
            : "the connection closed before the hub answered the upgrade"
    }

    /// The hub's answer to the upgrade, gathered until its header ends.
    private func readAnswer(_ bytes: UnsafeRawBufferPointer, _ wsi: OpaquePointer, _ connection: ClientConnection) -> Int32 {
        guard let upgrade = connection.upgrade else { return -1 }
        connection.answer.append(contentsOf: bytes)
        let answer = connection.answer.withUnsafeBytes { upgrade.read($0) }
        switch answer {
        case .incomplete:
            return 0
        case let .upgraded(headerBytes):
            let rest = Array(connection.answer[headerBytes...])
            connection.answer = []
            connection.upgrade = nil
            lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
            connection.isOpen = true
            delegate?.connected(connection)
            return rest.isEmpty ? 0 : rest.withUnsafeBytes { readFrames($0, wsi, connection) }
        case let .refused(status, challenge):
            connection.refusedStatus = status
            connection.refusedReason = BearerChallenge(challenge).description ?? ""
            let words = connection.refusedReason.isEmpty ? "" : ": " + connection.refusedReason
            closeReasons[connection.id] = "the hub refused the connection (HTTP \(status)\(words))"
            return -1
        case let .invalid(why):
            closeReasons[connection.id] = why
            return -1
        }
    }

    /// Frames after the upgrade: messages to the delegate, pongs for pings,
    /// the hub's close answered, a refused frame closing with its code. Once
    /// a close is queued nothing more is handed on or answered.
    private func readFrames(_ bytes: UnsafeRawBufferPointer, _ wsi: OpaquePointer, _ connection: ClientConnection) -> Int32 {
        // Out of the connection while the delegate runs: no access to a
        // stored property spans a delegate call (docs/ARCHITECTURE.md).
        guard var frames = connection.frames else { return -1 }
        connection.frames = nil
        defer { connection.frames = frames }
        var wake = false
        let refusal = frames.read(bytes) { event in
            switch event {
            case let .message(payload, isText):
                if !connection.closeQueued { delegate?.received(connection, message: payload, isText: isText) }
            case let .ping(payload):
                guard !connection.closeQueued else { break }
                connection.outgoing.append(OutgoingFrame(MaskedFrame.encode(opcode: MaskedFrame.pong, payload: payload,
                                                                            mask: MaskedFrame.randomMask()), isText: false))
                wake = true
            case .pong:
                break
            case let .close(code, reason):
                connection.closeReceived = true
                // Kept even when our close crossed it: a 4401 is a 4401.
                connection.closeCode = code
                connection.closeReason = reason
                guard !connection.closeQueued else { break }
                // The hub closes first: its words, and our close echoing its code
                // (nothing queued before it is sent any more).
                closeReasons[connection.id] = code.map { "closed by the hub (\($0)\(reason.isEmpty ? "" : ": " + reason))" }
                    ?? "closed by the hub"
                connection.dropQueuedFrames()
                queueClose(connection, code: code ?? 1000, reason: "")
                wake = true
            }
        }
        if let refusal {
            if closeReasons[connection.id] == nil { closeReasons[connection.id] = refusal.reason }
            if !connection.closeQueued { connection.dropQueuedFrames() }
            queueClose(connection, code: refusal.code, reason: "")
            wake = true
        }
        // Our close is out and the hub answered it (or nothing more can be read): done.
        if connection.closeSent, connection.closeReceived || frames.ended { return -1 }
        if wake { lws_callback_on_writable(wsi) }
        return 0
    }

    /// Writes the next queued frame. After our close frame: the socket
    /// closes once lws has written it all and the hub answered (or at once
    /// when the hub closed first or a frame was refused), else after
    /// `closeTimeoutSeconds`.
    private func writeNext(_ wsi: OpaquePointer, _ connection: ClientConnection) -> Int32 {
        if connection.closeRequested, !connection.closeQueued {
            if connection.upgrade != nil {
                // Before the upgrade there is no WebSocket to close politely.
                if closeReasons[connection.id] == nil {
                    closeReasons[connection.id] = "closed by this client before the hub answered the upgrade"
                }
                return -1
            }
            queueClose(connection, code: 1000, reason: "bye")
        }
        if let frame = connection.takeNextFrame() {
            // LWS_WRITE_RAW (a macro Swift does not see) is LWS_WRITE_HTTP: the bytes as they are.
            if lws_write(wsi, frame.payload, frame.count, LWS_WRITE_HTTP) < frame.count { return -1 }
            if connection.queuedFrames > 0 {
                lws_callback_on_writable(wsi)
                return 0
            }
            // Nothing is queued behind a close frame: this was it. The hub has
            // `closeTimeoutSeconds` from now, written whole or not, to answer.
            if connection.closeQueued {
                connection.closeSent = true
                lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_ACK, Self.closeTimeoutSeconds)
            }
        }
        guard connection.closeSent else { return 0 }
        if lws_partial_buffered(wsi) != 0 {
            // lws still holds part of it: written first, then this callback again.
            lws_callback_on_writable(wsi)
            return 0
        }
        return connection.closeReceived || connection.frames?.ended == true ? -1 : 0
    }

    /// Queues a close frame, the last frame of the connection: `send` queues nothing after it.
    private func queueClose(_ connection: ClientConnection, code: Int, reason: String) {
        guard !connection.closeQueued else { return }
        connection.closeQueued = true
        if closeReasons[connection.id] == nil { closeReasons[connection.id] = "closed by this client" }
        connection.outgoing.append(OutgoingFrame(MaskedFrame.encode(opcode: MaskedFrame.close,
                                                                    MaskedFrame.closePayload(code: code, reason: reason),
                                                                    mask: MaskedFrame.randomMask()), isText: false))
    }
}
