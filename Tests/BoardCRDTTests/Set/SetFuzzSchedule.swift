import Testing
@testable import BoardCRDT

/// What the Set schedules exercised (`BOARDCRDT_SET_STATS=1` prints it).
struct SetFuzzStatistics: CustomStringConvertible {
    var schedules = 0, steps = 0, operations = 0, restamped = 0, duplicates = 0, buffered = 0
    var takenBack = 0, stepsOver = 0, matches = 0, lateStarts = 0
    /// The hub compacted; clients adopted a checkpoint (relayed or in a sync).
    var compactions = 0, checkpointsAdopted = 0
    /// Own operations a client re-timed after an adopted checkpoint, and own
    /// operations it moved to the hub's re-stamped version.
    var retimedOwn = 0, restampedBack = 0
    var reconnects = 0, rateLimited = 0, resentLogCopies = 0
    /// Refusal codes met locally (prepare) and on the hub (the total order).
    var refusedLocally: [String: Int] = [:]
    var refusedByHub: [String: Int] = [:]

    mutating func add(_ other: SetFuzzStatistics) {
        schedules += other.schedules; steps += other.steps; operations += other.operations
        restamped += other.restamped; duplicates += other.duplicates; buffered += other.buffered
        takenBack += other.takenBack; stepsOver += other.stepsOver; matches += other.matches
        lateStarts += other.lateStarts; compactions += other.compactions; checkpointsAdopted += other.checkpointsAdopted
        retimedOwn += other.retimedOwn; restampedBack += other.restampedBack; reconnects += other.reconnects
        rateLimited += other.rateLimited; resentLogCopies += other.resentLogCopies
        refusedLocally.merge(other.refusedLocally, uniquingKeysWith: +)
        refusedByHub.merge(other.refusedByHub, uniquingKeysWith: +)
    }

    var description: String {
        "\(schedules) schedules (\(resentLogCopies) sending log copies), \(steps) steps, \(operations) operations, \(matches) matches, "
            + "\(restamped) re-stamped by the hub, \(restampedBack) moved back on their author, \(retimedOwn) own re-timed on adopt, "
            + "\(compactions) compactions, \(checkpointsAdopted) checkpoints adopted, \(reconnects) reconnects, "
            + "\(rateLimited) frames rate-limited, \(duplicates) duplicates, \(buffered) buffered, \(takenBack) taken back on their author, "
            + "\(stepsOver) steps with the game over, \(lateStarts) schedules started late in a game; "
            + "refused locally \(refusedLocally.sorted { $0.key < $1.key }), by the hub \(refusedByHub.sorted { $0.key < $1.key })"
    }
}

struct SetFuzzFailure: Error, CustomStringConvertible {
    var seed: UInt64
    var step: Int
    var problems: [String]
    var trace: [String]
    var description: String {
        "Set convergence failure, reproduce with BOARDCRDT_SET_SEED=\(seed) BOARDCRDT_SET_SCHEDULES=1 BOARDCRDT_SET_TRACE=1 swift test --filter SetConvergence\n"
            + "step \(step): " + problems.joined(separator: "\n  ")
            + (trace.isEmpty ? "" : "\ntrace:\n" + trace.joined(separator: "\n"))
    }
}

/// One random schedule of SyncHub's shape, modelled on what the real hub
/// (`KindRoom`) and replica client (`ReplicaSession`) do:
///
/// - a hub replica that seals its order and compacts
///   (`ReplicaLimits(keptOperations: 4...32, sealsOrder: true)`), and 2 to
///   4 client replicas (`compacts: false, hubSealsOrder: true`) playing under
///   player names (sometimes two under one name, one person on two devices);
/// - one connection per client, FIFO both ways (a WebSocket keeps order):
///   clients perform intents at once (local-first) and send their
///   unacknowledged operations in frames; the hub answers each frame with an
///   ack carrying `have`, relays what it integrated to every other connected
///   client, and to the author too only when it re-stamped one of its
///   operations; when it compacts, the checkpoint goes to every connected
///   client after the operations; the rate limiter sometimes drops a frame
///   (`rate_limited` with `have`: the client sends again from there, so the
///   hub meets gaps and duplicates);
/// - disconnects: part of what was in flight arrives, the rest is lost; the
///   client reconnects with a `hello` and the hub answers with a `sync` (its
///   checkpoint when the client's is older, and its whole log); the client
///   then sends again what the hub does not hold. Per schedule, clients send
///   either their operations as first recorded (as `ReplicaSession` does) or
///   their log's current copies (re-timed ones re-timed).
///
/// After every step: the invariants of every touched replica (engine and
/// `SetTable.violations`); acks are final (the hub's outcome and stamp of
/// every operation it integrated never change while it is in the hub's
/// log); the hub integrates no id twice and every operation of a client it
/// integrated is exactly one intent that client prepared (no change applied
/// twice, no rebase under a new id); a client never holds another replica's
/// operation at a stamp other than the hub's; and a client holding exactly
/// the hub's checkpoint and log shows the hub's state. At the end, full
/// delivery: every client equals the hub, operation by operation.
struct SetFuzzSchedule {
    enum Up {
        case hello(frontier: Stamp)
        case ops([TableOp], lastSeq: UInt64)
    }

    enum Down {
        case ops([TableOp])
        case checkpoint(Checkpoint<SetTable>)
        case sync(Delta<SetTable>, have: UInt64)
        case ack(have: UInt64, lastSeq: UInt64)
        case rateLimited(have: UInt64)
    }

    struct Client {
        var replica: Table
        let name: String
        /// Own operations the hub has not acknowledged, as recorded.
        var unacked: [TableOp] = []
        /// Own operations up to this seq were sent on the current connection.
        var sentUpTo: UInt64 = 0
        var connected = true
        /// The hub's `sync` arrived on this connection (operations may go).
        var synced = true
        /// The hub took its `hello`: it gets relays and checkpoints.
        var member = true
        var up: [Up] = []
        var down: [Down] = []
    }

    /// Who prepared an operation: which client, which of its intents.
    struct Prepared {
        var client: Int
        var intent: Int
        var author: String
        var change: SetTable.Change
    }

    let seed: UInt64
    var rng: SplitMix64
    var hub: Table
    var clients: [Client] = []
    /// Operations sent are the log's current copies, not the first recorded.
    let sendsLogCopies: Bool
    /// Percent of `ops` frames the hub's rate limiter drops.
    let rateLimitPercent: Int
    /// The rate limiter drops single frames, so the hub buffers later ones
    /// behind a gap, as the real hub does (a client sends its next frame
    /// before it reads `rate_limited`). Off, the limiter drops the whole
    /// burst in flight and any frame that would be buffered behind a gap.
    /// On by default since the engine fix it found: a sealing hub's
    /// `compact` retired a replica whose buffered operation the new
    /// frontier passed and refused all its operations as stale for good
    /// (seeds 1584900896 and 1584901023, kept as tests).
    let gaps: Bool
    var intents = 0
    var prepared: [OperationID: Prepared] = [:]
    var integratedIntents: Set<Int> = []
    /// What the hub integrated: the outcome and stamp each had then (its ack).
    var firstOutcome: [OperationID: Outcome<SetRefusal>] = [:]
    var hubStamp: [OperationID: Stamp] = [:]
    var integratedOrder: [OperationID] = []
    var delivering = false
    let tracing: Bool
    let trace = Trace()
    var step = 0
    var touched: Set<Int> = []
    var statistics = SetFuzzStatistics()
    /// The schedule began from a game well under way (no opening).
    var lateStart = false
    static let hubIndex = -1

    static func run(seed: UInt64, tracing: Bool, gaps: Bool = false) -> SetFuzzFailure? {
        var schedule = SetFuzzSchedule(seed: seed, tracing: tracing, gaps: gaps)
        do {
            try schedule.run()
            return nil
        } catch {
            return error
        }
    }

    init(seed: UInt64, tracing: Bool, gaps: Bool = true) {
        self.seed = seed
        self.gaps = gaps
        self.tracing = tracing
        rng = SplitMix64(seed: seed)
        var ids: Set<UInt64> = []
        func freshID(_ rng: inout SplitMix64) -> ReplicaID {
            while true {
                let raw = UInt64(rng.inRange(1...1_000))
                if ids.insert(raw).inserted { return ReplicaID(raw) }
            }
        }
        // Sometimes every replica starts from a checkpoint late in a game,
        // so empty decks, holes and game over come within reach.
        var start = Checkpoint<SetTable>.empty
        if rng.percent(35) {
            var dealer = Table(id: ReplicaID(5_000), limits: ReplicaLimits(compacts: false))
            _ = try? dealer.perform(.newGame(seed: rng.next()), by: "")
            let deckLeft = 3 * rng.inRange(0...4)
            while dealer.state.deck.count > deckLeft {
                let before = dealer.state
                for card in aSet(on: dealer.state) ?? [] { _ = try? dealer.perform(.choose(card), by: "zed") }
                if dealer.state == before { _ = try? dealer.perform(.deal, by: "zed") }
                if dealer.state == before { break }
            }
            start = Checkpoint(state: dealer.state, frontier: .origin, versions: VersionVector())
            lateStart = true
        }
        // Mostly small, so the hub compacts several times per schedule.
        let kept = rng.percent(70) ? rng.inRange(4...10) : rng.inRange(11...32)
        hub = Table(id: freshID(&rng), checkpoint: start, limits: ReplicaLimits(keptOperations: kept, sealsOrder: true))
        sendsLogCopies = rng.percent(50)
        rateLimitPercent = rng.percent(50) ? 0 : rng.inRange(2...15)
        let pool = ["ana", "bo", "cy", "dee"]
        let count = rng.inRange(2...4)
        for _ in 0..<count {
            let replica = Table(id: freshID(&rng), checkpoint: start, limits: ReplicaLimits(compacts: false, hubSealsOrder: true))
            clients.append(Client(replica: replica, name: pool[rng.below(pool.count)]))
        }
        note("seed \(seed): late start \(lateStart) deck \(hub.state.deck.count), hub \(hub.id) keeps \(kept), "
            + "rate limit \(rateLimitPercent)%, sends \(sendsLogCopies ? "log copies" : "first recorded"), "
            + "clients \(clients.map { "\($0.replica.id)=\($0.name)" })")
    }

    func note(_ line: @autoclosure () -> String) {
        if tracing { trace.lines.append("[\(step)] " + line()) }
    }

    func fail(_ problems: [String]) -> SetFuzzFailure {
        SetFuzzFailure(seed: seed, step: step, problems: problems, trace: trace.lines)
    }

    func stamps(_ ops: [TableOp]) -> String { ops.map { "\($0.id)@\($0.lamport)" }.joined(separator: " ") }

    mutating func run() throws(SetFuzzFailure) {
        statistics.schedules = 1
        if sendsLogCopies { statistics.resentLogCopies = 1 }
        // S3: the hub deals the first game of a fresh board (its `opening`);
        // sometimes late, so clients meet `no_game` first.
        let opensAt = lateStart ? -1 : rng.percent(85) ? 0 : rng.inRange(1...10)
        if lateStart { statistics.lateStarts = 1 }
        let steps = rng.inRange(40...120)
        statistics.steps = steps
        for index in 0..<steps {
            step = index
            if index == opensAt { try open() }
            let client = rng.below(clients.count)
            switch rng.below(100) {
            case 0..<40: try localIntent(client)
            case 40..<50: try sendPending(client)
            case 50..<72: try hubTakes(from: client, frames: rng.inRange(1...3))
            case 72..<96: try clientTakes(client, messages: rng.inRange(1...4))
            default:
                if clients[client].connected { try disconnect(client) } else { reconnect(client) }
            }
            // A client away reconnects after a while.
            for index in clients.indices where !clients[index].connected && rng.percent(8) { reconnect(index) }
            try check()
            if hub.state.over { statistics.stepsOver += 1 }
        }
        step = steps
        try finalDelivery()
        statistics.matches = hub.state.matches.count
    }

    // MARK: The hub

    mutating func open() throws(SetFuzzFailure) {
        let seed = rng.next()
        let frontier = hub.checkpoint.frontier
        hub.limits.compacts = false
        let op: TableOp?
        do {
            op = try hub.perform(.newGame(seed: seed), by: "")
        } catch {
            throw fail(["the hub's opening was refused: \(error)"])
        }
        guard let op else { throw fail(["the hub's opening recorded nothing"]) }
        note("hub opens game with seed \(seed): \(op.id)@\(op.lamport)")
        try hubIntegrated([op], restamped: false, author: nil, frontierBefore: frontier)
    }

    /// The hub takes the next frames of a client's connection, in order.
    mutating func hubTakes(from index: Int, frames: Int) throws(SetFuzzFailure) {
        var taken = 0
        while taken < frames, !clients[index].up.isEmpty {
            taken += 1
            let frame = clients[index].up.removeFirst()
            let id = clients[index].replica.id
            switch frame {
            case let .hello(frontier):
                clients[index].member = true
                let delta = Delta(checkpoint: frontier < hub.checkpoint.frontier ? hub.checkpoint : nil, operations: hub.log)
                let have = hub.versions[id]
                note("hub greets \(id) (frontier \(frontier)): sync with \(delta.checkpoint.map { "checkpoint \($0.frontier)" } ?? "no checkpoint"), \(delta.operations.count) operations, have \(have)")
                clients[index].down.append(.sync(delta, have: have))
            case let .ops(ops, lastSeq):
                // Without `gaps`, a frame that would wait behind a gap (its
                // predecessor was rate-limited) is dropped too, as if the limiter
                // were still closed; the client sends again from `have`.
                let behindGap = !gaps && ops.first.map { $0.id.seq > hub.versions[id] + 1 } == true
                if behindGap || (!delivering && rng.percent(rateLimitPercent)) {
                    var dropped = [ops]
                    if !gaps {
                        // The whole burst: no later frame lands after a gap.
                        while case let .ops(more, _)? = clients[index].up.first {
                            dropped.append(more)
                            clients[index].up.removeFirst()
                        }
                    }
                    statistics.rateLimited += dropped.count
                    note("hub rate-limits \(id)'s frames \(dropped.map { stamps($0) })")
                    for _ in dropped { clients[index].down.append(.rateLimited(have: hub.versions[id])) }
                    continue
                }
                let frontier = hub.checkpoint.frontier
                touched.insert(Self.hubIndex)
                // Compaction runs at the end of `receive`; it is run just
                // after instead, so the outcome of each integrated operation
                // can be read before a compaction folds it.
                hub.limits.compacts = false
                let report = hub.receive(ops)
                note("\(id) sends \(stamps(ops)) -> integrated \(stamps(report.integratedOperations)) restamped \(report.restamped) buffered \(report.buffered) duplicates \(report.duplicates)")
                if !report.refused.isEmpty {
                    hub.limits.compacts = true
                    throw fail(["the hub refused honest operations of \(id): \(report.refused)"])
                }
                if !report.changedOutcomes.isEmpty { throw fail(["the hub's own operations changed outcome: \(report.changedOutcomes)"]) }
                statistics.restamped += report.restamped.count
                statistics.duplicates += report.duplicates
                statistics.buffered += report.buffered
                try hubIntegrated(report.integratedOperations, restamped: !report.restamped.isEmpty, author: index, frontierBefore: frontier)
                clients[index].down.append(.ack(have: hub.versions[id], lastSeq: lastSeq))
            }
        }
    }

    /// Records what the hub integrated (with compaction held back), then
    /// compacts and relays as `KindRoom.committed` does: the operations to
    /// every other connected client (and to the author when one of its was
    /// re-stamped), then the checkpoint to every connected client.
    mutating func hubIntegrated(_ ops: [TableOp], restamped: Bool, author: Int?, frontierBefore: Stamp) throws(SetFuzzFailure) {
        var problems: [String] = []
        for op in ops {
            if firstOutcome[op.id] != nil { problems.append("the hub integrated \(op.id) twice") }
            guard let outcome = hub.outcome(of: op.id) else {
                problems.append("the hub integrated \(op.id) but it is not in its log")
                continue
            }
            firstOutcome[op.id] = outcome
            hubStamp[op.id] = op.stamp
            integratedOrder.append(op.id)
            if case let .refused(refusal) = outcome { statistics.refusedByHub[refusal.code, default: 0] += 1 }
            if op.id.replica == hub.id { continue }
            // Applied once: each client operation is one prepared intent.
            guard let origin = prepared[op.id] else {
                problems.append("the hub integrated \(op.id), which no client prepared")
                continue
            }
            if origin.change != op.change || origin.author != op.author {
                problems.append("the hub integrated \(op.id) as \(op.change) by \(op.author), prepared as \(origin.change) by \(origin.author)")
            }
            if !integratedIntents.insert(origin.intent).inserted {
                problems.append("intent \(origin.intent) of client \(origin.client) (\(op.change)) was integrated twice, the second time as \(op.id)")
            }
        }
        hub.limits.compacts = true
        hub.compactIfNeeded()
        let compacted = hub.checkpoint.frontier != frontierBefore
        if compacted {
            statistics.compactions += 1
            note("hub compacts to \(hub.checkpoint.frontier), keeping \(hub.log.count)")
        }
        if !problems.isEmpty { throw fail(problems) }
        for index in clients.indices where clients[index].member {
            if !ops.isEmpty, index != author || restamped { clients[index].down.append(.ops(ops)) }
            if compacted { clients[index].down.append(.checkpoint(hub.checkpoint)) }
        }
    }

    // MARK: Clients

    /// A random intent under the client's name, often a good one (a card
    /// completing the pick), so matches, races for cards, empty decks and
    /// game over all happen. Sent at once most of the time, as a replica
    /// client does.
    mutating func localIntent(_ index: Int) throws(SetFuzzFailure) {
        let name = clients[index].name
        let before = clients[index].replica
        let intent = randomIntent(in: before.state, by: name)
        touched.insert(index)
        let result = Result { () throws(SetRefusal) in try clients[index].replica.perform(intent, by: name) }
        switch result {
        case let .success(op?):
            note("\(name)@\(before.id) \(intent) -> \(op.id)@\(op.lamport) \(op.change)")
            statistics.operations += 1
            intents += 1
            prepared[op.id] = Prepared(client: index, intent: intents, author: name, change: op.change)
            clients[index].unacked.append(op)
            let outcome = clients[index].replica.outcome(of: op.id)
            // SC2 told once: a choose settling a pick that lost a card to a
            // match is recorded (it clears the player's `lost`) and refused.
            let toldTaken: Bool
            if case .refused(.taken)? = outcome, before.state.players[name]?.lost.isEmpty == false { toldTaken = true } else { toldTaken = false }
            if outcome != .applied, !toldTaken {
                throw fail(["\(intent) by \(name) was prepared but applying it gave \(String(describing: outcome))"])
            }
            if clients[index].replica.state == before.state { throw fail(["\(intent) by \(name) applied without changing the state"]) }
            if rng.percent(70) { try sendPending(index) }
        case .success(nil):
            throw fail(["\(intent) by \(name) recorded nothing; every Set intent changes something or is refused"])
        case let .failure(refusal):
            note("\(name)@\(before.id) \(intent) refused \(refusal.code): \(refusal.message)")
            statistics.refusedLocally[refusal.code, default: 0] += 1
            if clients[index].replica.state != before.state || clients[index].replica.versions != before.versions {
                throw fail(["refused \(intent) changed the replica"])
            }
        }
    }

    mutating func randomIntent(in state: SetTable.State, by name: String) -> SetTable.Intent {
        let roll = rng.below(1000)
        if roll < 12 || (state.over && rng.percent(30)) { return .newGame(seed: rng.next()) }
        if roll < 100 || (state.setsOnTable == 0 && rng.percent(70)) { return .deal }
        let onTable = state.cardsOnTable
        let anyCard = Card.all[rng.below(Card.all.count)]
        guard !onTable.isEmpty, !rng.percent(8) else { return .choose(anyCard) }
        let pick = state.players[name]?.picked ?? []
        if !pick.isEmpty, rng.percent(10) { return .choose(pick[rng.below(pick.count)]) }
        let shuffled = shuffledCards(onTable)
        if rng.percent(75) {
            switch pick.count {
            case 2:
                return .choose(Card.completing(pick[0], pick[1]))
            case 1:
                if let partner = shuffled.first(where: { $0 != pick[0] && onTable.contains(Card.completing(pick[0], $0)) }) {
                    return .choose(partner)
                }
            case 0:
                for (i, a) in shuffled.enumerated() {
                    if let b = shuffled[(i + 1)...].first(where: { onTable.contains(Card.completing(a, $0)) }) {
                        return .choose(rng.percent(50) ? a : b)
                    }
                }
            default:
                break
            }
        }
        return .choose(shuffled[0])
    }

    mutating func shuffledCards(_ cards: [Card]) -> [Card] {
        var cards = cards
        rng.shuffle(&cards)
        return cards
    }

    /// Sends the client's unacknowledged operations not yet sent on this
    /// connection, in one or more frames, in sequence order.
    mutating func sendPending(_ index: Int) throws(SetFuzzFailure) {
        guard clients[index].connected, clients[index].synced else { return }
        let client = clients[index]
        let id = client.replica.id
        var fresh = client.unacked.filter { $0.id.replica == id && $0.id.seq > client.sentUpTo }
        guard !fresh.isEmpty else { return }
        if sendsLogCopies {
            for i in fresh.indices {
                if let at = client.replica.logIndex(of: fresh[i].id) { fresh[i] = client.replica.log[at] }
            }
        }
        var start = 0
        while start < fresh.count {
            let size = delivering ? fresh.count : rng.inRange(1...max(1, fresh.count - start))
            let chunk = Array(fresh[start..<min(fresh.count, start + size)])
            let last = chunk[chunk.count - 1].id.seq
            clients[index].up.append(.ops(chunk, lastSeq: last))
            clients[index].sentUpTo = last
            start += chunk.count
        }
    }

    /// The client takes the next messages of its connection, in order.
    mutating func clientTakes(_ index: Int, messages: Int) throws(SetFuzzFailure) {
        var taken = 0
        while taken < messages, !clients[index].down.isEmpty {
            taken += 1
            let message = clients[index].down.removeFirst()
            touched.insert(index)
            let id = clients[index].replica.id
            switch message {
            case let .ops(ops):
                let report = clients[index].replica.receive(ops)
                note("relay to \(id): \(stamps(ops)) moved \(report.restamped) changed \(report.changedOutcomes.map { "\($0.0) \($0.1)" })")
                try merged(report, on: index)
            case let .checkpoint(checkpoint):
                try adopt(Delta(checkpoint: checkpoint), on: index, have: nil)
            case let .sync(delta, have):
                try adopt(delta, on: index, have: have)
            case let .ack(have, lastSeq):
                dropAcknowledged(index, upTo: have)
                // A gap (a frame the rate limiter dropped): send again from `have`.
                if have < lastSeq {
                    clients[index].sentUpTo = min(clients[index].sentUpTo, have)
                    try sendPending(index)
                }
            case let .rateLimited(have):
                dropAcknowledged(index, upTo: have)
                clients[index].sentUpTo = min(clients[index].sentUpTo, have)
                if rng.percent(50) || delivering { try sendPending(index) }
            }
        }
    }

    mutating func dropAcknowledged(_ index: Int, upTo have: UInt64) {
        let id = clients[index].replica.id
        clients[index].unacked.removeAll { $0.id.replica == id && $0.id.seq <= have }
    }

    mutating func merged(_ report: MergeReport<SetTable>, on index: Int) throws(SetFuzzFailure) {
        if !report.refused.isEmpty { throw fail(["\(clients[index].replica.id) refused operations from the hub: \(report.refused)"]) }
        statistics.restampedBack += report.restamped.count
        statistics.takenBack += report.changedOutcomes.filter { $0.1.isRefused }.count
    }

    /// A relayed checkpoint (`delta` holds only it) or a `sync` (checkpoint
    /// when newer, the hub's log, and `have`), applied as `ReplicaSession` does.
    mutating func adopt(_ delta: Delta<SetTable>, on index: Int, have: UInt64?) throws(SetFuzzFailure) {
        let before = clients[index].replica
        let id = before.id
        var rebasedTo: ReplicaID?
        let (adoptReport, mergeReport) = clients[index].replica.apply(delta, freshID: {
            rebasedTo = ReplicaID(9_000 + UInt64(index))
            return rebasedTo!
        })
        let kind = have == nil ? "checkpoint" : "sync"
        var retimed = 0
        if adoptReport.adopted {
            statistics.checkpointsAdopted += 1
            var stampOf: [OperationID: UInt64] = [:]
            for op in before.log where op.id.replica == id { stampOf[op.id] = op.lamport }
            for op in clients[index].replica.log where op.id.replica == id {
                if let old = stampOf[op.id], old != op.lamport, !mergeReport.restamped.contains(op.id) { retimed += 1 }
            }
            statistics.retimedOwn += retimed
        }
        note("\(kind) to \(id): \(delta.checkpoint.map { "checkpoint \($0.frontier)" } ?? "no checkpoint") adopted \(adoptReport.adopted), "
            + "\(delta.operations.count) operations, re-timed \(retimed) own, moved \(mergeReport.restamped), have \(have.map(String.init) ?? "-")"
            + (tracing ? ", log now \(stamps(clients[index].replica.log))" : ""))
        if let refusal = adoptReport.refusal { throw fail(["\(id) could not adopt the hub's checkpoint \(delta.checkpoint?.frontier as Any): \(refusal)"]) }
        if let rebasedTo {
            // A sealing hub re-stamps our late operations; rebasing them
            // under a new id would apply their changes twice.
            throw fail(["\(id) rebased to \(rebasedTo) on adopting the hub's checkpoint \(delta.checkpoint?.frontier as Any): \(adoptReport.rebased.map { "\($0.id) \($0.change)" })"])
        }
        try merged(mergeReport, on: index)
        if let have {
            clients[index].synced = true
            dropAcknowledged(index, upTo: have)
            clients[index].sentUpTo = min(clients[index].sentUpTo, have)
            try sendPending(index)
        }
    }

    /// The connection drops: part of what was in flight each way arrives,
    /// the rest is lost. The hub forgets the connection.
    mutating func disconnect(_ index: Int) throws(SetFuzzFailure) {
        let arriving = rng.inRange(0...clients[index].up.count)
        note("\(clients[index].replica.id) disconnects; \(arriving) of \(clients[index].up.count) frames still reach the hub")
        try hubTakes(from: index, frames: arriving)
        clients[index].member = false
        try clientTakes(index, messages: rng.inRange(0...clients[index].down.count))
        clients[index].up = []
        clients[index].down = []
        clients[index].connected = false
        clients[index].synced = false
    }

    /// A new connection: `hello` with the checkpoint the client holds.
    mutating func reconnect(_ index: Int) {
        statistics.reconnects += 1
        clients[index].connected = true
        clients[index].synced = false
        clients[index].up = [.hello(frontier: clients[index].replica.checkpoint.frontier)]
        note("\(clients[index].replica.id) reconnects with frontier \(clients[index].replica.checkpoint.frontier)")
    }

    /// Everything is delivered: every client connected, every frame taken,
    /// until nothing is in flight and the hub holds every operation.
    mutating func finalDelivery() throws(SetFuzzFailure) {
        note("final delivery")
        delivering = true
        for index in clients.indices where !clients[index].connected { reconnect(index) }
        var rounds = 0
        while true {
            rounds += 1
            if rounds > 100 { throw fail(["delivery does not settle: \(clients.map { "\($0.replica.id) up \($0.up.count) down \($0.down.count) unacked \($0.unacked.count)" })"]) }
            for index in clients.indices { try sendPending(index) }
            for index in clients.indices { try hubTakes(from: index, frames: .max) }
            for index in clients.indices { try clientTakes(index, messages: .max) }
            touched = Set(clients.indices).union([Self.hubIndex])
            try check()
            if clients.allSatisfy({ $0.up.isEmpty && $0.down.isEmpty && $0.unacked.isEmpty }) { break }
        }
        if hub.pendingCount != 0 { throw fail(["the hub still buffers \(hub.pendingCount) operations after everything was sent"]) }
        var problems: [String] = []
        for prepared in prepared.values where !integratedIntents.contains(prepared.intent) {
            problems.append("intent \(prepared.intent) of client \(prepared.client) (\(prepared.change)) never reached the hub")
        }
        for client in clients.map(\.replica) {
            if client.state != hub.state { problems.append("\(client.id) shows game \(client.state.game) \(places(client.state)), the hub \(hub.state.game) \(places(hub.state))") }
            if client.versions != hub.versions { problems.append("\(client.id) versions \(client.versions.entries), the hub's \(hub.versions.entries)") }
            if client.checkpoint.frontier != hub.checkpoint.frontier { problems.append("\(client.id) holds checkpoint \(client.checkpoint.frontier), the hub \(hub.checkpoint.frontier)") }
            if client.log.map(\.stamp) != hub.log.map(\.stamp) {
                problems.append("\(client.id) orders its log unlike the hub: \(stamps(client.log)) vs \(stamps(hub.log))")
            }
            for (op, outcome) in zip(client.log, client.outcomes) where firstOutcome[op.id] != outcome {
                problems.append("\(client.id): \(op.id) \(op.change) by \(op.author) was \(outcome), acked \(String(describing: firstOutcome[op.id]))")
            }
        }
        if !problems.isEmpty { throw fail(problems) }
    }

    // MARK: Checks

    mutating func check() throws(SetFuzzFailure) {
        var problems: [String] = []
        defer { touched = [] }
        for index in touched {
            let replica = index == Self.hubIndex ? hub : clients[index].replica
            problems += replica.checkInvariants().map { "\(replica.id): \($0)" }
        }
        if touched.contains(Self.hubIndex) {
            // K14: an ack is final (while the operation is in the log;
            // compaction folds it in the same order).
            for (op, outcome) in zip(hub.log, hub.outcomes) {
                guard let ack = firstOutcome[op.id] else {
                    problems.append("the hub holds \(op.id), which it never reported integrated")
                    continue
                }
                if ack != outcome { problems.append("K14: \(op.id) \(op.change) by \(op.author) was acked \(ack) but is now \(outcome)") }
                if hubStamp[op.id] != op.stamp { problems.append("\(op.id) was integrated at \(hubStamp[op.id] as Any), now at \(op.stamp)") }
            }
            let inLog = Set(hub.log.map(\.id))
            for id in integratedOrder where !inLog.contains(id) && !hub.checkpoint.versions.covers(id) {
                problems.append("the hub integrated \(id), which is neither in its log nor in its checkpoint")
            }
        }
        for index in touched where index != Self.hubIndex {
            let client = clients[index].replica
            // Another replica's operation comes only through the hub, so
            // only with the hub's final stamp.
            for op in client.log where op.id.replica != client.id && hubStamp[op.id] != op.stamp {
                problems.append("\(client.id) holds \(op.id) at \(op.stamp), the hub integrated it at \(hubStamp[op.id] as Any)")
            }
            if client.checkpoint.frontier == hub.checkpoint.frontier, client.versions == hub.versions,
               client.log.map(\.stamp) == hub.log.map(\.stamp), client.state != hub.state {
                problems.append("\(client.id) holds the hub's checkpoint and log but shows another state")
            }
        }
        if !problems.isEmpty { throw fail(problems) }
    }
}
