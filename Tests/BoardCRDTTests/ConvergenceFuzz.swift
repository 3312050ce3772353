import Testing
@testable import BoardCRDT

/// One seeded convergence schedule for any `FuzzedKind`, in the manner of
/// Yjs and Loro. The schedule owns everything that is not the kind's: the
/// replicas, the delivery (`FuzzTopology`: peers, or clients and a sealing,
/// compacting hub over inboxes or connections), batching, reordering,
/// duplicates and gaps, checkpoints and syncs, tracing, statistics and a
/// failure that names its seed and knobs. The kind supplies its start
/// state, workload and checks through `FuzzedKind`.
///
/// Checked after every step, on every touched replica: the engine's
/// invariants and the kind's (`checkInvariants`, `replicaProblems`); a
/// refused or no-op intent changed nothing, and each local intent passes the
/// kind's `localProblems`. With a hub: an ack is final (an integrated
/// operation's outcome and stamp never change while it is in the hub's log,
/// and an integrated operation is in the log or the checkpoint); the hub
/// integrates no id twice, each client operation it integrates is exactly one
/// intent a client prepared (no change applied twice, no rebase); its state
/// is its integrated operations replayed in order, and the kind's `book` and
/// `hubProblems` hold; honest operations and checkpoints are never refused
/// and a client never rebases on the hub's checkpoint; a client holds other
/// replicas' operations only at the hub's stamps, and one holding every
/// operation at the hub's stamps (or the hub's checkpoint and log) shows the
/// hub's state. With peers: one line of checkpoints, no honest operation
/// refused, and C1 (two replicas holding the same operations show the same
/// state). At the end, after full delivery: every intent reached the hub, no
/// buffer is left, every replica equals the hub (or each other and the
/// kind's `finalProblems` reference), operation by operation.
struct ConvergenceFuzz<K: FuzzedKind> {
    typealias Op = Operation<K.Change>

    enum Message {
        case ops([Op])
        case checkpoint(Checkpoint<K>)
        case sync(Delta<K>, have: UInt64?)
        case ack(have: UInt64, lastSeq: UInt64)
        case rateLimited(have: UInt64)
    }

    enum Up {
        case hello(frontier: Stamp)
        case ops([Op], lastSeq: UInt64)
    }

    /// One client's side of the wire (index as in `replicas`; 0 is the hub).
    struct Link {
        var name = ""
        /// Inboxes: made and not yet sent, sent, and waiting for the client.
        var unsent: [Op] = [], sent: [Op] = [], inbox: [Message] = []
        /// Connections: own operations not acknowledged, sent up to this seq.
        var unacked: [Op] = [], sentUpTo: UInt64 = 0
        var connected = true, synced = true, member = true
        var up: [Up] = [], down: [Message] = []
        /// Peers: on this side of the partition.
        var online = true
    }

    struct Prepared {
        var client: Int, intent: Int, author: String, change: K.Change
    }

    let seed: UInt64
    let tracing: Bool
    /// Gaps at the hub (`PREFIX_GAPS=0` turns them off).
    let gaps: Bool
    var rng: SplitMix64
    let trace = Trace()
    var step = 0
    var replicas: [Replica<K>] = []
    var links: [Link] = []
    var touched: Set<Int> = []
    var counts = FuzzCounts()

    // The hub's book: its ack of each operation, in the order it integrated them.
    var acked: [OperationID: Outcome<K.Refusal>] = [:]
    var hubStamp: [OperationID: Stamp] = [:]
    var integratedOrder: [OperationID] = []
    var mirror: K.State = K.initialState
    var ledger: K.Ledger
    var prepared: [OperationID: Prepared] = [:]
    var intents = 0
    var integratedIntents: Set<Int> = []
    var hubFrontier: Stamp = .origin
    var late = false

    // Connections.
    var sendsLogCopies = false, rateLimitPercent = 0, delivering = false

    // Peers.
    var hubMode = false
    var made: [Op] = []
    var checkpoints: [Stamp: VersionVector] = [:]
    var usedIDs: Set<UInt64> = []

    static var hub: Int { 0 }
    var hub: Replica<K> { replicas[0] }
    var clientIndices: Range<Int> { 1..<replicas.count }

    init(seed: UInt64, tracing: Bool, gaps: Bool = true) {
        self.seed = seed
        self.tracing = tracing
        self.gaps = gaps
        rng = SplitMix64(seed: seed)
        ledger = K.ledger(from: K.initialState)
        switch K.fuzz.topology {
        case .peers: setUpPeers()
        case .inbox, .connections: setUpHub()
        }
    }

    /// A sealing hub at index 0 and 2 to 4 clients under player names, all
    /// from the kind's start state.
    /// The hub keeps 1 to 6 operations over inboxes; over connections mostly
    /// 4 to 10, so it compacts several times per schedule.
    mutating func setUpHub() {
        let (start, late) = K.start(&rng)
        self.late = late
        let kept: Int
        if case .connections = K.fuzz.topology {
            kept = rng.percent(70) ? rng.inRange(4...10) : rng.inRange(11...32)
        } else {
            kept = rng.inRange(1...6)
        }
        let checkpoint = Checkpoint<K>(state: start, frontier: .origin, versions: VersionVector())
        replicas = [Replica(id: freshID(upTo: 1_000), checkpoint: checkpoint,
                            limits: ReplicaLimits(keptOperations: kept, sealsOrder: true))]
        links = [Link()]
        mirror = start
        ledger = K.ledger(from: start)
        if case .connections = K.fuzz.topology {
            sendsLogCopies = rng.percent(50)
            rateLimitPercent = rng.percent(50) ? 0 : rng.inRange(2...15)
        }
        let pool = K.fuzz.players
        for _ in 0..<rng.inRange(2...4) {
            replicas.append(Replica(id: freshID(upTo: 1_000), checkpoint: checkpoint,
                                    limits: ReplicaLimits(compacts: false, hubSealsOrder: true)))
            links.append(Link(name: pool[rng.below(pool.count)]))
        }
        note("seed \(seed): late start \(late), gaps \(gaps), start \(K.describe(start)), hub \(hub.id) keeps \(kept), "
            + "rate limit \(rateLimitPercent)%, sends \(sendsLogCopies ? "log copies" : "first recorded"), "
            + "clients \(clientIndices.map { "\(replicas[$0].id)=\(links[$0].name)" })")
    }

    /// Random ids, so tie-breaks between equal Lamport times vary.
    mutating func freshID(upTo top: Int) -> ReplicaID {
        while true {
            let raw = UInt64(rng.inRange(1...top))
            if usedIDs.insert(raw).inserted { return ReplicaID(raw) }
        }
    }

    func note(_ line: @autoclosure () -> String) {
        if tracing { trace.lines.append("[\(step)] " + line()) }
    }

    func fail(_ problems: [String]) -> FuzzFailure {
        var usesGaps: Bool?
        if case .peers = K.fuzz.topology {} else { usesGaps = gaps }
        return FuzzFailure(title: K.fuzz.title, knobs: K.fuzz.knobs, filter: K.fuzz.filter, seed: seed, gaps: usesGaps,
                           step: step, problems: problems, trace: trace.lines)
    }

    func stamps(_ ops: [Op]) -> String { ops.map { "\($0.id)@\($0.lamport)" }.joined(separator: " ") }

    // MARK: Running

    static func run(seed: UInt64, tracing: Bool = false, gaps: Bool = true) -> FuzzFailure? {
        var schedule = Self(seed: seed, tracing: tracing, gaps: gaps)
        do {
            try schedule.run()
            return nil
        } catch {
            return error
        }
    }

    /// The seeds of `shard` (see `FuzzKnobs`), each failure recorded (at
    /// most three per shard), statistics printed with `PREFIX_STATS=1`.
    static func runShard(_ shard: Int) {
        let knobs = K.fuzz.knobs
        let tracing = knobs.value("TRACE") != nil
        let gaps = knobs.value("GAPS") != "0"
        var totals = FuzzCounts()
        var failures = 0
        for seed in knobs.seeds(shard: shard) {
            var schedule = Self(seed: seed, tracing: tracing, gaps: gaps)
            do {
                try schedule.run()
            } catch {
                Issue.record("\(error)")
                failures += 1
                if failures >= 3 { return }
                continue
            }
            totals.add(schedule.counts)
        }
        if knobs.value("STATS") != nil { print("\(K.fuzz.title) shard \(shard): \(totals)") }
    }

    mutating func run() throws(FuzzFailure) {
        counts.bump("schedules")
        if late { counts.bump("schedules from a state under way") }
        switch K.fuzz.topology {
        case .peers: try runPeers()
        case let .inbox(mix): try runInbox(mix)
        case .connections: try runConnections()
        }
    }

    // MARK: Local intents

    /// Performs `intent` on replica `index` under `name`: the generic checks
    /// and the kind's `localProblems`. Returns the operation recorded.
    mutating func perform(_ intent: K.Intent, by name: String, at index: Int) throws(FuzzFailure) -> Op? {
        let before = replicas[index]
        touched.insert(index)
        let result = Result { () throws(K.Refusal) in try replicas[index].perform(intent, by: name) }
        let after = replicas[index]
        var problems = K.localProblems(intent, by: name, before: before, after: after, result: result, counts: &counts)
        switch result {
        case let .success(op?):
            note("\(name)@\(before.id) \(intent) -> \(op.id)@\(op.lamport) \(op.change): \(K.describe(after.state))")
            counts.bump(index == Self.hub && K.fuzz.topology.hasHub ? "thin intents on the hub" : "operations")
            if after.versions[after.id] != before.versions[before.id] + 1 {
                problems.append("\(intent) recorded \(op.id) but versions did not advance by one")
            }
        case .success(nil):
            note("\(name)@\(before.id) \(intent) changes nothing")
            if after.state != before.state || after.versions != before.versions { problems.append("a no-op \(intent) changed the replica") }
        case let .failure(refusal):
            note("\(name)@\(before.id) \(intent) refused \(refusal.code): \(refusal.message)")
            counts.bump("refused locally: \(refusal.code)")
            if after.state != before.state || after.versions != before.versions { problems.append("refused \(intent) changed the replica") }
        }
        if !problems.isEmpty { throw fail(problems) }
        return try? result.get()
    }

    /// A client's intent from what it shows; with a hub, remembered as
    /// prepared (to check the hub integrates it exactly once).
    mutating func clientIntent(_ index: Int) throws(FuzzFailure) -> Op? {
        let name = links[index].name
        let intent = K.randomIntent(&rng, in: replicas[index].state, by: name)
        guard let op = try perform(intent, by: name, at: index) else { return nil }
        if K.fuzz.topology.hasHub {
            intents += 1
            prepared[op.id] = Prepared(client: index, intent: intents, author: name, change: op.change)
        }
        return op
    }
}

extension FuzzTopology {
    var hasHub: Bool {
        if case .peers = self { return false }
        return true
    }
}
