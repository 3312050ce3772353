import CLibWebsockets

/// The bulk reader's connections (`ClientReader.bulk`): libwebsockets keeps
/// the socket and the loop; the upgrade and the frames are done here. Loop
/// thread only, like the rest of `WebSocketClient`.
extension WebSocketClient {
    /// How long the hub has to answer the upgrade, as lws's own client allows.
    static let answerTimeoutSeconds: Int32 = 10

    /// A plain socket's callback for a bulk connection; nil for the reasons
    /// every connection shares (`handle` takes those).
    func handleBulk(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ connection: ClientConnection,
                    _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32? {
        switch reason {
        case LWS_CALLBACK_RAW_CONNECTED:
            guard let upgrade = connection.upgrade else { return -1 }
            let authorization = connection.authorization?.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            connection.outgoing.append(OutgoingFrame(upgrade.request(for: connection.url, authorization: authorization), isText: false))
            lws_set_timeout(wsi, PENDING_TIMEOUT_AWAITING_SERVER_RESPONSE, Self.answerTimeoutSeconds)
            lws_callback_on_writable(wsi)
            return 0
        case LWS_CALLBACK_RAW_RX:
            guard let input, length > 0, !connection.closesAfterWrites else { return 0 }
            let bytes = UnsafeRawBufferPointer(start: input, count: length)
            return connection.upgrade == nil ? readFrames(bytes, wsi, connection) : readAnswer(bytes, wsi, connection)
        case LWS_CALLBACK_RAW_WRITEABLE:
            return writeNext(wsi, connection)
        case LWS_CALLBACK_RAW_CLOSE:
            let reason = closeReasons.removeValue(forKey: connection.id)
                ?? (connection.upgrade != nil ? "the connection closed before the hub answered the upgrade"
                                              : "the connection to the hub was lost")
            finish(connection, reason: reason)
            return 0
        default:
            return nil
        }
    }

    /// The hub's answer to the upgrade, gathered until its header ends.
    private func readAnswer(_ bytes: UnsafeRawBufferPointer, _ wsi: OpaquePointer, _ connection: ClientConnection) -> Int32 {
        guard let upgrade = connection.upgrade else { return -1 }
        connection.answer.append(contentsOf: bytes)
        switch connection.answer.withUnsafeBytes({ upgrade.read($0) }) {
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
    /// the hub's close answered, a refused frame closing with its code.
    private func readFrames(_ bytes: UnsafeRawBufferPointer, _ wsi: OpaquePointer, _ connection: ClientConnection) -> Int32 {
        // Out of the connection while the delegate runs: no access to a
        // stored property spans a delegate call (docs/ARCHITECTURE.md).
        guard var frames = connection.frames else { return -1 }
        connection.frames = nil
        defer { connection.frames = frames }
        var reply = false
        let refusal = frames.read(bytes) { event in
            switch event {
            case let .message(payload, isText):
                delegate?.received(connection, message: payload, isText: isText)
            case let .ping(payload):
                connection.outgoing.append(OutgoingFrame(MaskedFrame.encode(opcode: MaskedFrame.pong, payload: payload,
                                                                            mask: MaskedFrame.randomMask()), isText: false))
                reply = true
            case .pong:
                break
            case let .close(code, reason):
                connection.closeCode = code
                connection.closeReason = reason
                closeReasons[connection.id] = code.map { "closed by the hub (\($0)\(reason.isEmpty ? "" : ": " + reason))" }
                    ?? "closed by the hub"
                queueClose(connection, code: code ?? 1000, reason: "")
                reply = true
            }
        }
        if let refusal {
            closeReasons[connection.id] = refusal.reason
            queueClose(connection, code: refusal.code, reason: "")
            reply = true
        }
        if reply { lws_callback_on_writable(wsi) }
        return 0
    }

    /// Writes the next queued frame; once the queue is empty after a close, the socket closes.
    private func writeNext(_ wsi: OpaquePointer, _ connection: ClientConnection) -> Int32 {
        if connection.closeRequested, !connection.closesAfterWrites {
            // Before the upgrade there is no WebSocket to close politely.
            if connection.upgrade != nil { return -1 }
            queueClose(connection, code: 1000, reason: "bye")
        }
        if let frame = connection.takeNextFrame() {
            // LWS_WRITE_RAW (a macro Swift does not see) is LWS_WRITE_HTTP: the bytes as they are.
            if lws_write(wsi, frame.payload, frame.count, LWS_WRITE_HTTP) < frame.count { return -1 }
            if connection.queuedFrames > 0 {
                lws_callback_on_writable(wsi)
                return 0
            }
        }
        return connection.closesAfterWrites ? -1 : 0
    }

    /// Queues a close frame; nothing else is read, and the socket closes once it is written.
    private func queueClose(_ connection: ClientConnection, code: Int, reason: String) {
        guard !connection.closesAfterWrites else { return }
        connection.closesAfterWrites = true
        connection.outgoing.append(OutgoingFrame(MaskedFrame.encode(opcode: MaskedFrame.close,
                                                                    MaskedFrame.closePayload(code: code, reason: reason),
                                                                    mask: MaskedFrame.randomMask()), isText: false))
    }
}
