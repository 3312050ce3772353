import CLibWebsockets

/// Writing to connections (service thread only): the two lanes of each
/// connection, direct writes, the replies held while a turn's work runs,
/// and the writable callback that frames what waits into one buffer.
extension WebSocketServer {
    /// Queues a frame that must arrive (ack, refusal, error). When a client
    /// stops reading, its queue fills and the hub stops reading from it.
    public func send(_ frame: OutgoingFrame, to connection: ServerConnection) {
        assertOnServiceThread()
        guard !connection.closed, connection.closing == nil else { return }
        connection.replies.append(frame)
        if connection.queuedReplies >= options.maxQueuedReplies, !connection.receivePaused {
            connection.receivePaused = true
            lws_rx_flow_control(connection.wsi, 0)
        }
        requestWrite(connection, mayWait: true)
    }

    /// Offers the newest board state: replaces any state not yet written.
    public func sendLatest(_ frame: OutgoingFrame, to connection: ServerConnection) {
        assertOnServiceThread()
        guard !connection.closed, connection.closing == nil else { return }
        if connection.latest == nil, connection.replyHead == connection.replies.count, options.directWrites,
           connection.writesDirectly, connection.id != receivingFrom, lws_partial_buffered(connection.wsi) == 0 {
            // Nothing of it waits, here or in lws: written now, never queued
            // (a fan-out's usual case, and its per-client cost).
            if lws_write(connection.wsi, frame.payload, frame.count, frame.isText ? LWS_WRITE_TEXT : LWS_WRITE_BINARY) < frame.count {
                lws_set_timeout(connection.wsi, pending_timeout(rawValue: PENDING_TIMEOUT_USER_OK.rawValue), LWS_TO_KILL_ASYNC)
                return
            }
            counted.framesWritten += 1
            counted.writes += 1
            connection.lastWasState = true  // as `takeNextFrame` would: the lanes keep alternating
            return
        }
        if connection.latest != nil { counted.statesReplaced += 1 }
        // Replies held this turn (acks of the changes this state shows) go before it.
        if connection.writeHeld { connection.repliesFirst = true }
        connection.latest = frame
        requestWrite(connection)
    }

    /// Sends a close frame with `code` once pending writes allow, and drops
    /// the connection at once if it cannot even take that.
    public func close(_ connection: ServerConnection, code: UInt16, reason: String) {
        assertOnServiceThread()
        guard !connection.closed, connection.closing == nil else { return }
        // Replies held this turn leave before the close, as they would have unheld.
        if connection.writeHeld { writeNow(connection) }
        connection.closing = (code, String(reason.utf8.prefix(100)) ?? "")
        connection.latest = nil
        connection.replies.removeAll()
        connection.replyHead = 0
        lws_set_timeout(connection.wsi, pending_timeout(rawValue: PENDING_TIMEOUT_USER_OK.rawValue), 3)
        lws_callback_on_writable(connection.wsi)
    }

    /// `mayWait`: a reply, which waits while writes are held (a state never does).
    func requestWrite(_ connection: ServerConnection, mayWait: Bool = false) {
        if connection.waitingSince == nil { connection.waitingSince = holding ? holdStarted : Self.nowNanos() }
        guard options.directWrites, connection.writesDirectly, connection.id != receivingFrom else {
            lws_callback_on_writable(connection.wsi)
            return
        }
        if holding && mayWait {
            // Written with the state this turn gives it, or when the hold ends.
            if !connection.writeHeld {
                connection.writeHeld = true
                held.append(connection)
            }
            return
        }
        writeNow(connection)
    }

    /// Writes what `connection` has queued at once when nothing of it waits
    /// in lws (`ServerOptions.directWrites`), else when lws says it may.
    func writeNow(_ connection: ServerConnection) {
        guard !connection.closed else { return }
        if connection.closing == nil, lws_partial_buffered(connection.wsi) == 0 {
            if writeable(connection) < 0 {
                lws_set_timeout(connection.wsi, pending_timeout(rawValue: PENDING_TIMEOUT_USER_OK.rawValue), LWS_TO_KILL_ASYNC)
            }
            return
        }
        lws_callback_on_writable(connection.wsi)
    }

    /// Runs `body` (the end of a turn, a piece of posted work) with the
    /// direct writes of replies held: a board state is written at once and
    /// takes the replies queued before it along, in the same `send`
    /// (`writeable`), so a sender's ack and the state its change made leave
    /// together; replies no state came for are written when `body` ends,
    /// in the order they were queued.
    func holdingWrites(_ body: () -> Void) {
        guard options.directWrites, !holding else { return body() }
        holding = true
        holdStarted = Self.nowNanos()
        body()
        holding = false
        writeHeldReplies()
    }

    /// Writes the replies held so far now, within a hold: before work that
    /// may block (cluster mode's reads of Redis), so they do not wait for it.
    public func writeHeldReplies() {
        assertOnServiceThread()
        guard !held.isEmpty else { return }
        var due: [ServerConnection] = []
        swap(&due, &held)
        for connection in due {
            connection.writeHeld = false
            writeNow(connection)
        }
        while due.popLast() != nil {}  // keeps the capacity, specialised (not `removeAll(keepingCapacity:)`)
        if held.isEmpty { held = due }
    }

    func writeable(_ connection: ServerConnection) -> Int32 {
        if let closing = connection.closing {
            var reason = Array(closing.reason.utf8)
            lws_close_reason(connection.wsi, lws_close_status(rawValue: UInt32(closing.code)), &reason, reason.count)
            return -1
        }
        guard let frame = connection.takeNextFrame() else {
            connection.waitingSince = nil
            return 0
        }
        if connection.hasOutput, frame.count + 10 <= batch.capacity {
            // Several frames are waiting: frame them here and hand the kernel
            // one buffer, one send() for all. Per-frame syscalls are what
            // limits a hub; a client that is behind catches up in one write.
            var length = 0
            var frames = 0
            var next: OutgoingFrame? = frame
            while let current = next {
                guard let size = batch.append(current, at: length) else {
                    connection.pushBack(current)
                    break
                }
                length += size
                frames += 1
                next = length < batch.capacity / 2 ? connection.takeNextFrame() : nil
            }
            if lws_write(connection.wsi, batch.payload, length, LWS_WRITE_HTTP) < length { return -1 }
            counted.framesWritten += UInt64(frames)
            counted.writes += 1
        } else {
            let written = lws_write(connection.wsi, frame.payload, frame.count,
                                    frame.isText ? LWS_WRITE_TEXT : LWS_WRITE_BINARY)
            if written < frame.count { return -1 }
            counted.framesWritten += 1
            counted.writes += 1
        }
        if connection.receivePaused, connection.queuedReplies <= options.maxQueuedReplies / 2 {
            connection.receivePaused = false
            lws_rx_flow_control(connection.wsi, 1)
        }
        if connection.hasOutput {
            connection.waitingSince = Self.nowNanos()
            lws_callback_on_writable(connection.wsi)
        } else {
            connection.waitingSince = nil
        }
        return 0
    }
}
