import BoardCRDT
import Foundation
import Histogram
import Synchronization
import SyncWire
import WebSocketLoop

/// One bench thread: its own libwebsockets client loop and its share of
/// the connections. Records raw times only; `BenchReport` does the math.
/// What a kind sends, reads and counts is its `Driver`'s (`WatchedKind.Bench`).
final class BenchWorker<Driver: BenchDriver>: ClientDelegate, @unchecked Sendable {
    // Sendable: atomics shared; the rest confined to `client`'s loop thread (checked by `client.owner`, debug builds)
    // until the runner reads it after the loop.
    let index: Int
    let plan: BenchPlan
    let client: WebSocketClient
    let connected = Atomic<Int>(0)
    let answers = Atomic<Int>(0)
    let framesIn = Atomic<Int>(0)
    let failures = Atomic<Int>(0)
    let outstanding = Atomic<Int>(0)

    /// One bench client.
    final class Peer {
        let board: Int
        let slot: Int
        /// The hub it connects to, an index into `BenchPlan.hubs` (0 with one hub).
        let hub: Int
        var connection: ClientConnection?
        var connectStart: UInt64 = 0
        var connectNanos: UInt64?
        var lastVersion: UInt64 = 0
        var lastOrder: UInt64 = 0
        /// The version and arrival time of every state frame it was sent, in
        /// order: filed from the worker's `statesSeen` once the run is over.
        var stateVersions: [UInt64] = []
        var stateTimes: [UInt64] = []
        /// Its place in the worker's `peers`.
        var index = 0
        var inFlight = 0
        var nextRef = 0
        var sendTimes: [Int: UInt64] = [:]
        /// The name this client `join`s with (`Driver.joins`), and it as a JSON key (`"p3":{`).
        var name = ""
        var playerKey: [UInt8] = []
        /// The latest state's bytes from the kind's members on (the
        /// convergence check compares them), when the kind keeps them.
        var stateTail: [UInt8] = []
        /// What its kind keeps of what it was shown (a plan of cards, a stock).
        var record = Driver.Record()
        init(board: Int, slot: Int, hub: Int = 0) {
            self.board = board
            self.slot = slot
            self.hub = hub
        }
    }

    private(set) var peers: [Peer] = []
    /// One state frame as it arrived: which peer (its place in `peers`), its version, when.
    struct StateSeen {
        let peer: Int
        let version: UInt64
        let time: UInt64
    }
    /// Every state frame of every peer of this worker, in arrival order. One
    /// log appended in place rather than two arrays per client: the k-th
    /// client of a fan-out waits for the frames read before it, so what the
    /// tool does per frame adds to what it measures (with two arrays per
    /// client, their uniqueness checks alone were 3 % of the tool's time
    /// under `perf`, for hub frames only: the broadcaster's echoes are not
    /// states). BENCHMARKS.md, "The tool's own work per frame".
    private var statesSeen: [StateSeen] = []
    private var peerOfConnection: [UInt64: Peer] = [:]
    private var toConnect: [Peer] = []
    private var connectBudget = 0.0
    private var lastPace: UInt64 = 0
    /// Set by the runner: when to start and stop sending, when to record.
    private var sendingFrom: UInt64?
    private var sendingUntil: UInt64 = 0
    private var recordFrom: UInt64 = 0
    private var sendBudget = 0.0
    private var senderCursor = 0
    private var senders: [Peer] = []
    /// (board, version, send time, the sender's hub) of every acknowledged operation sent in the window.
    private(set) var acknowledged: [(board: Int, version: UInt64, sent: UInt64, hub: Int)] = []
    private(set) var rejected = 0
    /// `error` frames (e.g. rate_limited: the hub's --rate is below the load).
    private(set) var errors = 0
    private(set) var statesInWindow = 0
    /// Send to `ack` (or `rejected`) at the sender: with a store, the cost of durability.
    private(set) var ackLatency = Histogram<UInt64>(highestTrackableValue: 120_000_000_000)
    /// Raw mode: send-to-arrival latency of every echoed message, per client.
    private(set) var rawVisibility = Histogram<UInt64>(highestTrackableValue: 120_000_000_000)
    private(set) var framesInWindow = 0
    /// Bytes of the frames read in the window (`meanFrameBytes`).
    private(set) var bytesInWindow = 0
    private var windowEnd: UInt64 = .max
    // Kinds that count refusals (`Driver.countsRefusals`), in the measured window:
    /// Refusals by code (`taken`, `deck_empty`, ...), of operations sent in the window.
    private(set) var refusalCodes: [String: Int] = [:]
    private(set) var rejectedInWindow = 0
    /// What its kind counts (intents sent by type, what acks moved, ...).
    var tally = Driver.Tally()

    init(index: Int, plan: BenchPlan) {
        self.index = index
        self.plan = plan
        // Pacing needs the loop awake about twice per operation due; beyond
        // that, wake-ups only cost poll(2) over every socket of the thread.
        let perThread = plan.rate / Double(plan.threads)
        let tick = perThread > 0 ? min(10_000, max(1_000, 500_000 / perThread)) : 10_000
        client = WebSocketClient(fdLimit: UInt32(plan.totalClients / plan.threads + 1024), tickMicros: UInt32(tick), tls: plan.access.tls,
                                 reader: plan.reader.clientReader)
        let seconds = Double(plan.warmupNanos + plan.durationNanos) / 1e9 + 2
        let expectedStates = plan.rate > 0 ? min(1 << 17, Int(plan.rate / Double(plan.boardNames.count) * seconds) + 64) : 0
        for (board, slot) in plan.slots(forWorker: index) {
            let peer = Peer(board: board, slot: slot, hub: plan.hubIndex(slot: slot))
            peer.index = peers.count
            if Driver.joins {
                peer.name = "p\(slot)"
                peer.playerKey = Array("\"\(peer.name)\":{".utf8)
            }
            peers.append(peer)
        }
        toConnect = peers.reversed()
        senders = peers.filter { $0.slot < plan.sendersPerBoard }
        // A paced run's states are known: grow the log once, not while measuring.
        statesSeen.reserveCapacity(min(1 << 23, expectedStates * peers.count))
    }

    /// Files `statesSeen` into each peer's `stateVersions` and `stateTimes`,
    /// in arrival order, and empties it. `BenchRunner` calls it once the
    /// loop has ended.
    func fileStatesSeen() {
        var counts = [Int](repeating: 0, count: peers.count)
        for seen in statesSeen { counts[seen.peer] += 1 }
        for peer in peers {
            peer.stateVersions = []
            peer.stateTimes = []
            peer.stateVersions.reserveCapacity(counts[peer.index])
            peer.stateTimes.reserveCapacity(counts[peer.index])
        }
        for seen in statesSeen {
            let peer = peers[seen.peer]
            peer.stateVersions.append(seen.version)
            peer.stateTimes.append(seen.time)
        }
        statesSeen = []
    }

    func start() -> Bool {
        client.delegate = self
        return client.start()
    }

    /// Called through `client.post` by the runner.
    func beginSending(at start: UInt64, recordFrom: UInt64, until end: UInt64) {
        client.owner.check()
        sendingFrom = start
        self.recordFrom = recordFrom
        sendingUntil = end
        windowEnd = end
        lastPace = start
        // Each board's first client sets the board up (letters to move, items to edit).
        for peer in peers where peer.slot == 0 && plan.sendersPerBoard > 0 { Driver.begin(self, board: peer, at: start) }
        if plan.rate == 0 { for peer in senders { refill(peer, now: start) } }
    }

    /// A new intent of `peer`, sent at `now`: its ref (unique across the
    /// run, so an echoed one matches only its sender), counted in flight.
    func track(from peer: Peer, at now: UInt64) -> Int {
        peer.nextRef += 1
        let ref = (peer.board * plan.clientsPerBoard + peer.slot) * 1_000_000_000 + peer.nextRef
        peer.sendTimes[ref] = now
        peer.inFlight += 1
        outstanding.add(1, ordering: .relaxed)
        return ref
    }

    func closeAll() {
        client.owner.check()
        for peer in peers { if let connection = peer.connection { client.close(connection) } }
    }

    // MARK: Loop

    func serviceLoopDidRun() {
        client.owner.check()
        defer { if plan.readBatchMicros > 0 { usleep(plan.readBatchMicros) } }
        let now = BenchClock.now()
        if !toConnect.isEmpty {
            if lastPace == 0 { lastPace = now }
            connectBudget += Double(now - lastPace) / 1e9 * plan.connectionsPerSecond / Double(plan.threads)
            lastPace = now
            while connectBudget >= 1 || (connectBudget > 0 && toConnect.count == 1), let peer = toConnect.popLast() {
                connectBudget -= 1
                peer.connectStart = now
                peer.connection = client.connect(to: plan.url(board: peer.board, hub: peer.hub),
                                                 sourceAddress: plan.sourceAddress(board: peer.board, slot: peer.slot),
                                                 bearerToken: plan.access.token)
                if let connection = peer.connection { peerOfConnection[connection.id] = peer }
            }
            if toConnect.isEmpty { connectBudget = 0 }
        }
        guard let from = sendingFrom, now >= from, now < sendingUntil, plan.rate > 0, !senders.isEmpty else { return }
        let share = plan.rate * Double(senders.count) / Double(max(1, plan.boardNames.count * plan.sendersPerBoard))
        sendBudget += Double(now - min(now, max(lastPace, from))) / 1e9 * share
        lastPace = now
        while sendBudget >= 1 {
            sendBudget -= 1
            let peer = senders[senderCursor % senders.count]
            senderCursor += 1
            sendMove(from: peer, at: now)
        }
    }

    private func refill(_ peer: Peer, now: UInt64) {
        let window = max(1, plan.inFlightPerBoard / max(1, plan.sendersPerBoard))
        while peer.inFlight < window, now < sendingUntil {
            guard sendMove(from: peer, at: now) else { break }
        }
    }

    /// Sends the peer's next intent; false when it has nothing to send yet
    /// (a Set player waiting for a table or for another's new game).
    @discardableResult
    private func sendMove(from peer: Peer, at now: UInt64) -> Bool {
        Driver.send(self, from: peer, at: now, inWindow: now >= recordFrom && now < windowEnd)
    }

    /// A message to the raw broadcaster: its ref and send time, padded with
    /// a `"pad"` member to exactly `bytes` (`--raw-bytes`, at least 96: a
    /// bare message is at most 73 bytes); 0: no padding.
    static func rawFrame(ref: Int, now: UInt64, bytes: Int) -> String {
        let head = "{\"type\":\"ack\",\"ref\":\"\(ref)\",\"version\":\(now)"
        // `,"pad":"` and `"}` around the padding: 10 bytes.
        let padding = bytes - head.utf8.count - 10
        guard bytes > 0, padding >= 0 else { return head + "}" }
        return head + ",\"pad\":\"" + String(repeating: "x", count: padding) + "\"}"
    }

    // MARK: ClientDelegate

    func connected(_ connection: ClientConnection) {
        client.owner.check()
        guard let peer = peerOfConnection[connection.id] else { return }
        peer.connectNanos = BenchClock.now() - peer.connectStart
        connected.add(1, ordering: .relaxed)
        if Driver.joins { client.send(ClientMessage<Driver.Kind>.joinFrame(name: peer.name), on: connection) }
    }

    func received(_ connection: ClientConnection, message: UnsafeRawBufferPointer, isText: Bool) {
        client.owner.check()
        let now = BenchClock.now()
        guard let peer = peerOfConnection[connection.id] else { return }
        framesIn.add(1, ordering: .relaxed)
        let inWindow = now >= recordFrom && now < windowEnd
        if inWindow {
            framesInWindow += 1
            bytesInWindow += message.count
        }
        guard let frame = BenchFrame(message, readsOrder: Driver.readsOrder) else { return }
        switch frame.kind {
        case .state:
            peer.lastVersion = frame.version
            peer.lastOrder = frame.order
            statesSeen.append(StateSeen(peer: peer.index, version: frame.version, time: now))
            if inWindow { statesInWindow += 1 }
            Driver.read(self, state: message, version: frame.version, of: peer, inWindow: inWindow)
            if Driver.refillsOnState, plan.rate == 0, sendingFrom != nil, peer.inFlight == 0, peer.slot < plan.sendersPerBoard {
                refill(peer, now: now)
            }
        case .ack, .rejected:
            if plan.raw, inWindow, frame.version > 0, now >= frame.version {
                _ = rawVisibility.record(max(1, now - frame.version))
            }
            guard let ref = frame.ref, let sent = peer.sendTimes.removeValue(forKey: ref) else { return }
            peer.inFlight -= 1
            outstanding.add(-1, ordering: .relaxed)
            answers.add(1, ordering: .relaxed)
            if sent >= recordFrom && sent < windowEnd { _ = ackLatency.record(max(1, now >= sent ? now - sent : 0)) }
            Driver.answered(self, ref: ref, of: peer, acked: frame.kind == .ack, version: frame.version,
                            sentInWindow: sent >= recordFrom && sent < windowEnd)
            if frame.kind == .ack {
                if sent >= recordFrom && sent < windowEnd { acknowledged.append((peer.board, frame.version, sent, peer.hub)) }
            } else {
                rejected += 1
                if Driver.countsRefusals, sent >= recordFrom && sent < windowEnd {
                    rejectedInWindow += 1
                    refusalCodes[BenchFrame.refusalCode(message), default: 0] += 1
                }
            }
            if plan.rate == 0, sendingFrom != nil { refill(peer, now: now) }
        case .error:
            errors += 1
        case .other:
            Driver.other(self, frame: message, inWindow: inWindow)
        }
    }

    func disconnected(_ connection: ClientConnection, reason: String) {
        client.owner.check()
        if let peer = peerOfConnection[connection.id], peer.connectNanos == nil || sendingFrom != nil && BenchClock.now() < sendingUntil {
            failures.add(1, ordering: .relaxed)
        }
    }
}
