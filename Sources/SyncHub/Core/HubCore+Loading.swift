import Foundation
import SyncWire

/// A board being read from the store: the request in flight (`ticket`,
/// reading after offset `after`) and who waits for it. The request is
/// abandoned at `deadline`; each waiter is bounded by its own deadline, set
/// when it came, whatever the store does meanwhile (R16).
struct BoardLoad {
    var ticket: UInt64
    var address: BoardAddress
    var after: UInt64
    var deadline: UInt64
    /// Waiting for the read in flight.
    var waiting: [LoadWaiter] = []
    /// Cluster mode: came after the read was asked for, so it may miss
    /// what they saw elsewhere (R4): served by one more read.
    var next: [LoadWaiter] = []
    /// A held board read again because this hub fell behind its log.
    var catchUp = false

    var everyone: [LoadWaiter] { waiting + next }

    var connectionCount: Int {
        var count = 0
        for waiter in waiting where waiter.connection != nil { count += 1 }
        for waiter in next where waiter.connection != nil { count += 1 }
        return count
    }
}

/// Who waits for a board's load, and until when.
struct LoadWaiter {
    enum Who {
        /// A connection to put on the board (with its token's grant, auth on).
        case connection(UInt64, grant: Grant?)
        /// A plain HTTP request that needs the board held (`.httpBoard`).
        case http(exchange: UInt64)
    }
    var who: Who
    /// When it came plus the bound of a load: past it, it is refused.
    var deadline: UInt64

    var connection: UInt64? { if case let .connection(id, _) = who { id } else { nil } }
}

/// A connection that cannot be served yet (its board loads, or a key it
/// used is being looked up): the frames it sends meanwhile, in order.
struct PendingConnection {
    var board: String
    var frames: [HeldFrame] = []
    var bytes = 0
    /// At most this many frames, or bytes, wait; one more closes it (1008).
    static let maxFrames = 256
    static let maxBytes = 1 << 20
}

enum HeldFrame {
    case text([UInt8])
    case binary
    /// Parsed already: the frame whose key is looked up.
    case parsed(ParsedFrame)
}

/// A key the store is asked about, and the connections waiting for its answer.
struct KeyLookup {
    struct ID: Hashable {
        var board: String
        var key: String
    }
    var deadline: UInt64
    var connections: [UInt64] = []
}

/// Loading boards and looking up keys (R16): the core asks the store
/// (`.store(.load)`, `.store(.lookUpKey)`), keeps the connections that wait
/// and what they send meanwhile, and carries on when the answer comes back
/// as an event. Nothing else waits: other boards, other connections and the
/// shell go on as usual.
extension HubCore {
    /// Whether `board` must be read before a connection joins it: never
    /// without a store; when not held with one; and in cluster mode always
    /// (a client moving here never sees an older version than it saw
    /// elsewhere, R4). `joining` false: an HTTP request, for which a held
    /// board is fresh enough.
    func needsLoad(_ board: BoardAddress, joining: Bool) -> Bool {
        guard durable else { return false }
        if boards[board.key] == nil { return true }
        return joining && isShared
    }

    /// A connection allowed on `board` (its token, if any, verified): put on
    /// it now, or once the board is read.
    mutating func enter(_ connection: UInt64, board: BoardAddress, grant: Grant?, actions: inout [HubAction]) {
        guard needsLoad(board, joining: true) else {
            seat(connection, on: board, grant: grant, actions: &actions)
            return
        }
        // Its token is good: the pre-token limits stop while it waits for its board.
        if grant != nil { actions.append(.authenticated(connection: connection)) }
        pending[connection] = PendingConnection(board: board.key)
        wait(LoadWaiter(who: .connection(connection, grant: grant), deadline: now &+ loadTimeoutNanos), for: board, actions: &actions)
    }

    /// An HTTP request needs `board` held: answered at once when it is (or
    /// no store is kept), else once the board is read.
    mutating func holdForHTTP(_ board: BoardAddress, exchange: UInt64, actions: inout [HubAction]) {
        guard needsLoad(board, joining: false) else { return httpHold(board, exchange: exchange, actions: &actions) }
        if loads[board.key] == nil, let refusal = admits(board: board) {
            actions.append(.httpBoard(exchange: exchange, board: board, ready: false, reason: refusal.message))
            return
        }
        wait(LoadWaiter(who: .http(exchange: exchange), deadline: now &+ loadTimeoutNanos), for: board, actions: &actions)
    }

    /// Answers an HTTP request whose board is held now, or is made now (no
    /// store). A board held only for requests is let go like one whose
    /// last member left (`hold` marks it empty).
    private mutating func httpHold(_ board: BoardAddress, exchange: UInt64, actions: inout [HubAction]) {
        if boards[board.key] == nil, let refusal = admits(board: board) {
            actions.append(.httpBoard(exchange: exchange, board: board, ready: false, reason: refusal.message))
            return
        }
        if let failure = hold(board, stored: nil, actions: &actions) {
            actions.append(.httpBoard(exchange: exchange, board: board, ready: false, reason: failure.reason))
            return
        }
        actions.append(.httpBoard(exchange: exchange, board: board, ready: true, reason: ""))
    }

    /// Adds `waiter` to `board`'s load, asking the store when no read is in
    /// flight (or, in cluster mode, for one more read after it).
    private mutating func wait(_ waiter: LoadWaiter, for board: BoardAddress, actions: inout [HubAction]) {
        if var load = loads[board.key] {
            if isShared, waiter.connection != nil { load.next.append(waiter) } else { load.waiting.append(waiter) }
            loads[board.key] = load
            return
        }
        requestLoad(board, for: [waiter], actions: &actions)
    }

    /// Asks the store for `board` (the whole board, or in cluster mode the
    /// tail after what this hub applied) for `waiters`.
    private mutating func requestLoad(_ board: BoardAddress, for waiters: [LoadWaiter], catchUp: Bool = false,
                                      actions: inout [HubAction]) {
        nextTicket += 1
        let after = isShared ? boards[board.key]?.shared.applied ?? 0 : 0
        let deadline = now &+ loadTimeoutNanos
        actions.append(.store(.load(ticket: nextTicket, board: board, after: after, deadline: deadline)))
        loads[board.key] = BoardLoad(ticket: nextTicket, address: board, after: after, deadline: deadline, waiting: waiters,
                                     catchUp: catchUp)
    }

    /// Cluster mode: this hub fell behind `board`'s log (a fold trimmed
    /// what it had not applied): read it again; its clients stay meanwhile.
    mutating func catchUp(_ board: String, actions: inout [HubAction]) {
        guard let room = boards[board] else { return }
        if var load = loads[board] {
            load.catchUp = true
            loads[board] = load
            return
        }
        counters.sharedGaps += 1
        requestLoad(room.address, for: [], catchUp: true, actions: &actions)
    }

    /// The store's answer to a load.
    mutating func loaded(_ board: String, ticket: UInt64, result: Result<StoredBoard?, StoreFailure>, actions: inout [HubAction]) {
        guard let load = loads[board], load.ticket == ticket else { return }  // abandoned at its deadline: too late
        loads[board] = nil
        switch result {
        case .failure:
            // The store logged why; the clients hear that it could not be read.
            counters.boardsUnreadable += 1
            let reason = isShared ? "the hub cannot reach its store; try again" : "board could not be loaded"
            fail(load.everyone, board: load.address, code: 1011, reason: reason, actions: &actions)
            if load.catchUp, let room = boards[board] {
                counters.sharedGaps += 1
                drop(room, code: 1012, reason: "this hub fell behind the board's shared log; reconnect", actions: &actions)
            }
            return
        case let .success(stored):
            if boards[board] != nil {
                if isShared, let log = stored?.shared { applyFresh(log, to: board, actions: &actions) }
            } else if load.after > 0 {
                // Dropped while its tail was read (the log lost history):
                // what came is not the whole board. Read it whole.
                requestLoad(load.address, for: load.everyone, actions: &actions)
                return
            } else if let failure = hold(load.address, stored: stored, actions: &actions) {
                fail(load.everyone, board: load.address, code: failure.code, reason: failure.reason, actions: &actions)
                return
            }
            guard boards[board] != nil else {
                // Applying it dropped the board (the log lost the history
                // this hub held): everyone waits for a read afresh.
                requestLoad(load.address, for: load.everyone, actions: &actions)
                return
            }
            if var again = loads[board] {
                // Applying it showed a gap (a catch-up is asked for): everyone
                // waits for that read.
                again.waiting += load.everyone
                loads[board] = again
                return
            }
            if isShared, let room = boards[board] {
                actions.append(.store(.follow(board: board, logName: room.logName, after: room.shared.seen)))
            }
            if !load.next.isEmpty {
                // Those who came after this read was asked for wait for one more.
                requestLoad(load.address, for: load.next, actions: &actions)
            }
            for waiter in load.waiting { serve(waiter, on: load.address, actions: &actions) }
        }
    }

    /// Cluster mode: a held board's log as just read: its entries after
    /// what this hub applied, or a snapshot when it fell behind a fold.
    private mutating func applyFresh(_ log: SharedBoard, to board: String, actions: inout [HubAction]) {
        if log.snapshot == nil {
            sequenced(board: board, entries: log.entries, actions: &actions)
        } else {
            reloaded(board: board, from: log, actions: &actions)
        }
    }

    /// A waiter whose board is held now: a connection is seated and its
    /// frames taken in order; an HTTP request is told.
    private mutating func serve(_ waiter: LoadWaiter, on board: BoardAddress, actions: inout [HubAction]) {
        switch waiter.who {
        case let .http(exchange):
            httpHold(board, exchange: exchange, actions: &actions)
        case let .connection(connection, grant):
            guard let waiting = pending.removeValue(forKey: connection) else { return }  // left meanwhile
            let start = actions.count
            seat(connection, on: board, grant: grant, actions: &actions)
            guard !closes(connection, in: actions, from: start) else { return }
            // K4: its first frame is the state, before any answer to what it sent meanwhile.
            if !waiting.frames.isEmpty, let room = boards[board.key] { publishNow(room, actions: &actions) }
            replay(waiting.frames, of: connection, actions: &actions)
        }
    }

    /// Whether `actions[start...]` closes `connection`: nothing more of it is taken then.
    private func closes(_ connection: UInt64, in actions: [HubAction], from start: Int) -> Bool {
        actions[start...].contains { if case let .close(id, _, _) = $0 { id == connection } else { false } }
    }

    /// Frames a connection sent while it waited, taken as if they came now,
    /// until one makes it wait again (a key to look up) or closes it.
    private mutating func replay(_ frames: [HeldFrame], of connection: UInt64, actions: inout [HubAction]) {
        let start = actions.count
        for (index, frame) in frames.enumerated() {
            if pending[connection] != nil {
                // Waiting again: the rest stays in order behind what made it wait.
                pending[connection]?.frames += frames[index...]
                return
            }
            guard boardOf[connection] != nil, !closes(connection, in: actions, from: start) else { return }
            switch frame {
            case let .text(bytes):
                bytes.withUnsafeBytes { frameArrivedAgain($0, from: connection, actions: &actions) }
            case .binary:
                refuseBinary(from: connection, actions: &actions)
            case let .parsed(parsed):
                receive(parsed, from: connection, actions: &actions)
            }
        }
    }

    private mutating func frameArrivedAgain(_ bytes: UnsafeRawBufferPointer, from connection: UInt64, actions: inout [HubAction]) {
        guard let board = boardOf[connection], let room = boards[board] else { return }
        if let expiry = expiries[connection], wallClock >= expiry {
            expiries[connection] = nil
            counters.authExpired += 1
            actions.append(.close(connection: connection, code: 4401, reason: "token expired"))
            return
        }
        take(room.parse(bytes), from: connection, actions: &actions)
    }

    private mutating func refuseBinary(from connection: UInt64, actions: inout [HubAction]) {
        guard boardOf[connection] != nil else { return }
        counters.errorsSent += 1
        actions.append(.send(connection: connection, frame: HubMessage.error(
            ProtocolError("binary_frame", "frames are JSON text; binary frames are not accepted"), ref: nil)))
    }

    /// Keeps a frame of a connection that waits; past the bounds it is closed.
    mutating func holdFrame(_ frame: HeldFrame, of connection: UInt64, actions: inout [HubAction]) {
        guard var waiting = pending[connection] else { return }
        let size = if case let .text(bytes) = frame { bytes.count } else { 0 }
        guard waiting.frames.count < PendingConnection.maxFrames, waiting.bytes + size <= PendingConnection.maxBytes else {
            pending[connection] = nil
            stopWaiting(connection, board: waiting.board)
            actions.append(.close(connection: connection, code: 1008, reason: "too many frames while the board was loading"))
            return
        }
        waiting.frames.append(frame)
        waiting.bytes += size
        pending[connection] = waiting
    }

    /// A waiting connection that closes or is closed: out of its board's wait lists.
    mutating func stopWaiting(_ connection: UInt64, board: String) {
        if var load = loads[board] {
            load.waiting.removeAll { $0.connection == connection }
            load.next.removeAll { $0.connection == connection }
            loads[board] = load
        }
        for (id, var lookup) in keyLookups where id.board == board && lookup.connections.contains(connection) {
            lookup.connections.removeAll { $0 == connection }
            keyLookups[id] = lookup
        }
    }

    /// Waiters whose board could not be read: closed (a connection) or told (HTTP).
    private mutating func fail(_ waiters: [LoadWaiter], board: BoardAddress, code: UInt16, reason: String, actions: inout [HubAction]) {
        for waiter in waiters {
            switch waiter.who {
            case let .connection(connection, _):
                guard pending.removeValue(forKey: connection) != nil else { continue }
                actions.append(.close(connection: connection, code: code, reason: reason))
            case let .http(exchange):
                actions.append(.httpBoard(exchange: exchange, board: board, ready: false, reason: reason))
            }
        }
    }

    /// Waiters past their own deadline are refused (counted), whatever the
    /// store does; a request past its deadline is abandoned (a late answer
    /// is ignored) and asked again for those still within theirs. A
    /// catch-up that cannot be read in time drops the board.
    mutating func expireLoads(actions: inout [HubAction]) {
        guard !loads.isEmpty || !keyLookups.isEmpty else { return }
        let reason = "the board could not be read within \(Double(loadTimeoutNanos) / 1e9) s; try again"
        for (board, var load) in loads {
            let late = load.everyone.filter { now >= $0.deadline }
            if !late.isEmpty {
                counters.loadsTimedOut += UInt64(late.count)
                fail(late, board: load.address, code: 1011, reason: reason, actions: &actions)
                load.waiting.removeAll { now >= $0.deadline }
                load.next.removeAll { now >= $0.deadline }
                loads[board] = load
            }
            guard now >= load.deadline else { continue }
            loads[board] = nil
            if load.catchUp, let room = boards[board] {
                counters.sharedGaps += 1
                fail(load.everyone, board: load.address, code: 1012, reason: "this hub fell behind the board's shared log; reconnect",
                     actions: &actions)
                drop(room, code: 1012, reason: "this hub fell behind the board's shared log; reconnect", actions: &actions)
            } else if !load.everyone.isEmpty {
                requestLoad(load.address, for: load.everyone, actions: &actions)
            }
        }
        for (id, lookup) in keyLookups where now >= lookup.deadline {
            keyLookups[id] = nil
            for connection in lookup.connections where pending.removeValue(forKey: connection) != nil {
                counters.loadsTimedOut += 1
                actions.append(.close(connection: connection, code: 1011, reason: "the store could not be read in time"))
            }
        }
    }

    // MARK: Keys

    /// Holds `connection` (this frame first) until the store says whether
    /// `key` was used on `board` before.
    mutating func lookUp(_ key: String, board: String, for connection: UInt64, holding frame: ParsedFrame, actions: inout [HubAction]) {
        pending[connection] = PendingConnection(board: board, frames: [.parsed(frame)])
        let id = KeyLookup.ID(board: board, key: key)
        if var lookup = keyLookups[id] {
            lookup.connections.append(connection)
            keyLookups[id] = lookup
            return
        }
        keyLookups[id] = KeyLookup(deadline: now &+ loadTimeoutNanos, connections: [connection])
        actions.append(.store(.lookUpKey(board: board, key: key)))
    }

    /// The store's answer about a key: remembered, and the connections that
    /// waited go on with their frames.
    mutating func keyAnswered(_ key: String, board: String, result: Result<KeyedAnswer?, StoreFailure>, actions: inout [HubAction]) {
        guard let lookup = keyLookups.removeValue(forKey: KeyLookup.ID(board: board, key: key)) else { return }
        switch result {
        case .failure:
            // The store logged why.
            for connection in lookup.connections where pending.removeValue(forKey: connection) != nil {
                actions.append(.close(connection: connection, code: 1011, reason: "the store could not be read"))
            }
        case let .success(answer):
            if let answer { boards[board]?.keys.remember(key, answer: answer) }
            for connection in lookup.connections {
                guard let waiting = pending.removeValue(forKey: connection) else { continue }
                replayKeyed(waiting.frames, of: connection, actions: &actions)
            }
        }
    }

    /// The frame that waited for its key is received (the key is in memory
    /// now, or known not to be stored); the frames behind it follow.
    private mutating func replayKeyed(_ frames: [HeldFrame], of connection: UInt64, actions: inout [HubAction]) {
        guard case let .parsed(first)? = frames.first else {
            replay(frames, of: connection, actions: &actions)
            return
        }
        if boardOf[connection] != nil { receive(first, from: connection, actions: &actions) }
        replay(Array(frames.dropFirst()), of: connection, actions: &actions)
    }
}
