@testable import BoardCRDT

/// SplitMix64 (Steele, Lea, Flood): tiny, seedable, and good enough to drive
/// schedules; Foundation randomness would not be reproducible from a seed.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Uniform-enough in 0..<n for small n; n must be positive.
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    mutating func inRange(_ range: ClosedRange<Int>) -> Int { range.lowerBound + below(range.count) }
    mutating func percent(_ p: Int) -> Bool { below(100) < p }
    mutating func shuffle<T>(_ items: inout [T]) {
        guard items.count > 1 else { return }
        for i in stride(from: items.count - 1, to: 0, by: -1) { items.swapAt(i, below(i + 1)) }
    }
}

/// What the schedules exercised (`BOARDCRDT_STATS=1` prints it per shard).
struct FuzzStatistics: CustomStringConvertible {
    var schedules = 0, steps = 0, operations = 0, refusedIntents = 0
    var compactions = 0, rebases = 0, stale = 0, pendingFull = 0, buffered = 0, duplicates = 0
    var refusedByMerge = 0, fullBoards = 0

    mutating func add(_ other: FuzzStatistics) {
        schedules += other.schedules; steps += other.steps; operations += other.operations
        refusedIntents += other.refusedIntents; compactions += other.compactions; rebases += other.rebases
        stale += other.stale; pendingFull += other.pendingFull; buffered += other.buffered
        duplicates += other.duplicates; refusedByMerge += other.refusedByMerge; fullBoards += other.fullBoards
    }

    var description: String {
        "\(schedules) schedules, \(steps) steps, \(operations) operations, \(refusedIntents) refused intents, "
            + "\(fullBoards) steps with a full board, \(compactions) compactions, \(rebases) rebases, "
            + "\(stale) stale, \(pendingFull) pending-full, \(buffered) buffered, \(duplicates) duplicates, "
            + "\(refusedByMerge) selects refused by merging"
    }
}

final class Trace {
    var lines: [String] = []
}

struct FuzzFailure: Error, CustomStringConvertible {
    var seed: UInt64
    var step: Int
    var problems: [String]
    var trace: [String]
    var description: String {
        "convergence failure, reproduce with BOARDCRDT_SEED=\(seed) BOARDCRDT_SCHEDULES=1 BOARDCRDT_TRACE=1 swift test --filter Convergence\n"
            + "step \(step): " + problems.joined(separator: "\n  ")
            + (trace.isEmpty ? "" : "\ntrace:\n" + trace.joined(separator: "\n"))
    }
}

/// One random schedule. In peer mode no replica compacts by itself and a
/// compaction step is run by any online replica; in hub mode replica 0 is
/// always online, compacts automatically with a tiny log bound, and runs the
/// compaction steps, as the hub does.
struct FuzzSchedule {
    let seed: UInt64
    var rng: SplitMix64
    var replicas: [Board] = []
    var online: [Bool] = []
    let hubMode: Bool
    var made: [BoardOp] = []
    var checkpoints: [Stamp: VersionVector] = [:]
    var usedIDs: Set<UInt64> = []
    let tracing: Bool
    /// A reference so that noting a step does not conflict with mutating one.
    let trace = Trace()
    var step = 0
    /// Replicas touched since the last check; the others' invariants cannot
    /// have changed, and skipping them keeps 20,000 schedules fast.
    var touched: Set<Int> = []
    var statistics = FuzzStatistics()

    static func run(seed: UInt64, tracing: Bool) -> FuzzFailure? {
        var schedule = FuzzSchedule(seed: seed, tracing: tracing)
        do {
            try schedule.run()
            return nil
        } catch {
            return error
        }
    }

    init(seed: UInt64, tracing: Bool) {
        self.seed = seed
        self.tracing = tracing
        rng = SplitMix64(seed: seed)
        hubMode = rng.percent(40)
        let count = rng.inRange(3...8)
        let maxPending = [1, 3, 4096][rng.below(3)]
        let hubKeeps = rng.inRange(2...6)
        for index in 0..<count {
            let compacts = hubMode && index == 0
            let limits = ReplicaLimits(keptOperations: compacts ? hubKeeps : 1024, maxPending: maxPending, compacts: compacts)
            replicas.append(Board(id: freshID(), limits: limits))
            online.append(true)
        }
        note("seed \(seed): \(count) replicas \(replicas.map(\.id)), hub mode \(hubMode), maxPending \(maxPending)")
    }

    func note(_ line: @autoclosure () -> String) {
        if tracing { trace.lines.append("[\(step)] " + line()) }
    }

    func fail(_ problems: [String]) -> FuzzFailure {
        FuzzFailure(seed: seed, step: step, problems: problems, trace: trace.lines)
    }

    /// Random ids, so tie-breaks between equal Lamport times vary.
    mutating func freshID() -> ReplicaID {
        while true {
            let raw = UInt64(rng.inRange(1...1_000_000))
            if usedIDs.insert(raw).inserted { return ReplicaID(raw) }
        }
    }

    mutating func run() throws(FuzzFailure) {
        let steps = rng.inRange(30...80)
        statistics.schedules = 1
        statistics.steps = steps
        for index in 0..<steps {
            step = index
            if replicas.contains(where: { $0.state.order.count == 6 }) { statistics.fullBoards += 1 }
            switch rng.below(100) {
            case 0..<50: try localIntent()
            case 50..<84: try partialSync()
            case 84..<93: toggleOnline()
            default: try compactionStep()
            }
            try check()
        }
        step = steps
        try finalSync()
        statistics.compactions = checkpoints.count
    }

    // MARK: Steps

    /// A random intent, checked against the sequential rules B4-B10 (docs/rules/letters.md).
    mutating func localIntent() throws(FuzzFailure) {
        let index = rng.below(replicas.count)
        let before = replicas[index]
        let order = before.state.order
        // A small alphabet most of the time, so replicas pick the same letters.
        let anyLetter = Letter(index: rng.below(rng.percent(80) ? 9 : 26))!
        let someSelected = order.isEmpty || rng.percent(15) ? anyLetter : order[rng.below(order.count)]
        let roll = rng.below(100)
        let intent: LetterBoard.Intent =
            roll < 62 ? .select(anyLetter)
            : roll < 76 ? .deselect(someSelected)
            : roll < 97 ? .move(someSelected, to: rng.inRange(0...order.count + 1))
            : .reset

        // What the rules say should happen, on a plain array.
        var expected = order
        var expectedRefusal: BoardRefusal?
        switch intent {
        case let .select(letter):
            if !order.contains(letter) {
                if order.count >= 6 { expectedRefusal = .boardFull } else { expected.append(letter) }
            }
        case let .deselect(letter):
            expected.removeAll { $0 == letter }
        case let .move(letter, place):
            if let from = order.firstIndex(of: letter) {
                if (1...max(order.count, 1)).contains(place) {
                    expected.remove(at: from)
                    expected.insert(letter, at: place - 1)
                } else {
                    expectedRefusal = .placeOutOfRange(place, count: order.count)
                }
            } else {
                expectedRefusal = .notSelected(letter)
            }
        case .reset:
            expected = []
        }

        do {
            touched.insert(index)
            let op = try replicas[index].perform(intent)
            note("\(before.id) \(intent) -> \(op.map { "\($0.id)@\($0.lamport) \($0.change)" } ?? "no-op") order \(replicas[index].state.order)")
            if let expectedRefusal { throw fail(["\(intent) was accepted, expected \(expectedRefusal.code)"]) }
            if replicas[index].state.order != expected {
                throw fail(["\(intent) on \(order) gave \(replicas[index].state.order), expected \(expected)"])
            }
            if let op {
                statistics.operations += 1
                made.append(op)
                if replicas[index].outcome(of: op.id) != .applied { throw fail(["local \(intent) not applied"]) }
            } else if replicas[index].versions != before.versions || replicas[index].state != before.state {
                throw fail(["no-op \(intent) changed the replica"])
            }
        } catch let refusal as BoardRefusal {
            note("\(before.id) \(intent) refused: \(refusal.code)")
            statistics.refusedIntents += 1
            if refusal != expectedRefusal { throw fail(["\(intent) on \(order) refused with \(refusal), expected \(String(describing: expectedRefusal))"]) }
            if replicas[index].state != before.state || replicas[index].versions != before.versions {
                throw fail(["refused \(intent) changed the replica"])
            }
        } catch let failure as FuzzFailure {
            throw failure
        } catch {
            throw fail(["unexpected error \(error)"])
        }
    }

    /// Two replicas on the same side of the partition: a random part of the
    /// delta, some operations twice, shuffled, sometimes without checkpoint.
    mutating func partialSync() throws(FuzzFailure) {
        let source = rng.below(replicas.count)
        let peers = replicas.indices.filter { $0 != source && online[$0] == online[source] }
        guard !peers.isEmpty else { return }
        let target = peers[rng.below(peers.count)]
        let delta = replicas[source].delta(for: replicas[target].versions, remoteFrontier: replicas[target].checkpoint.frontier)
        var operations: [BoardOp] = []
        let whole = rng.percent(30)
        for op in delta.operations where whole || rng.percent(60) {
            operations.append(op)
            if rng.percent(20) { operations.append(op) }
        }
        if rng.percent(70) { rng.shuffle(&operations) }
        let checkpoint = rng.percent(85) ? delta.checkpoint : nil
        note("sync \(replicas[source].id) -> \(replicas[target].id): \(operations.map(\.id)) checkpoint \(checkpoint.map { "\($0.frontier)" } ?? "-")")
        try deliver(Delta(checkpoint: checkpoint, operations: operations), to: target)
    }

    mutating func deliver(_ delta: Delta<LetterBoard>, to target: Int) throws(FuzzFailure) {
        let fresh = freshID()
        let oldID = replicas[target].id
        touched.insert(target)
        let (adopt, merge) = replicas[target].apply(delta, freshID: { fresh })
        made += adopt.rebased
        statistics.operations += adopt.rebased.count
        statistics.buffered += merge.buffered
        statistics.duplicates += merge.duplicates
        statistics.refusedByMerge += merge.changedOutcomes.filter { $0.1.isRefused }.count
        if !adopt.rebased.isEmpty { statistics.rebases += 1 }
        if !adopt.rebased.isEmpty { note("\(oldID) rebased as \(replicas[target].id): \(adopt.rebased.map(\.change))") }
        for refusal in merge.refused {
            switch refusal {
            case .stale: statistics.stale += 1
            case .pendingFull: statistics.pendingFull += 1
            case .malformed, .clockWentBack: throw fail(["honest operation refused: \(refusal)"])
            }
        }
    }

    mutating func toggleOnline() {
        let index = rng.below(replicas.count)
        if hubMode && index == 0 { return }
        if online[index] && online.filter({ $0 }).count == 1 { return }
        online[index].toggle()
        note("\(replicas[index].id) \(online[index] ? "online" : "offline")")
    }

    /// The online replicas sync fully, one compacts and the others adopt its
    /// checkpoint; offline ones catch up (and rebase) later.
    mutating func compactionStep() throws(FuzzFailure) {
        let group = replicas.indices.filter { online[$0] }
        // Compactions form one line (a checkpoint must extend the previous
        // one): only a group holding the newest checkpoint may compact.
        let newest = replicas.map(\.checkpoint.frontier).max() ?? .origin
        guard group.contains(where: { replicas[$0].checkpoint.frontier == newest }) else {
            note("no compaction: the newest checkpoint is offline")
            return
        }
        try fullSync(group)
        let compactor = hubMode ? 0 : group[rng.below(group.count)]
        let keeping = rng.inRange(0...3)
        touched.formUnion(group)
        replicas[compactor].compact(keeping: keeping)
        let checkpoint = replicas[compactor].checkpoint
        note("\(replicas[compactor].id) compacts keeping \(keeping): frontier \(checkpoint.frontier)")
        for index in group where index != compactor {
            let fresh = freshID()
            do {
                let report = try replicas[index].adopt(checkpoint, freshID: { fresh })
                made += report.rebased
                if !report.rebased.isEmpty { throw fail(["a fully synced replica rebased on adopting"]) }
            } catch let refusal as CheckpointRefusal {
                throw fail(["online replica refused the checkpoint: \(refusal)"])
            } catch let failure as FuzzFailure {
                throw failure
            } catch {
                throw fail(["unexpected error \(error)"])
            }
        }
    }

    /// Whole deltas through the group's first replica, both ways, until
    /// every member holds the same operations and checkpoint.
    mutating func fullSync(_ group: [Int]) throws(FuzzFailure) {
        let center = group[0]
        for _ in 0..<8 {
            let first = replicas[center]
            if group.allSatisfy({ replicas[$0].versions == first.versions && replicas[$0].checkpoint.frontier == first.checkpoint.frontier }) {
                return
            }
            for other in group.dropFirst() { try wholeDelta(from: other, to: center) }
            for other in group.dropFirst() { try wholeDelta(from: center, to: other) }
        }
        throw fail(["full sync of \(group.map { replicas[$0].id }) did not settle"] + group.map { describe(replicas[$0]) })
    }

    mutating func wholeDelta(from source: Int, to target: Int) throws(FuzzFailure) {
        let delta = replicas[source].delta(for: replicas[target].versions, remoteFrontier: replicas[target].checkpoint.frontier)
        if delta.checkpoint != nil || !delta.operations.isEmpty { try deliver(delta, to: target) }
    }

    mutating func finalSync() throws(FuzzFailure) {
        for index in replicas.indices { online[index] = true }
        touched = Set(replicas.indices)
        note("final sync")
        try fullSync(Array(replicas.indices))
        try check()
        let expected = ReferenceModel.run(made: made, checkpoints: checkpoints.map { (frontier: $0.key, versions: $0.value) })
        let first = replicas[0]
        var problems: [String] = []
        for replica in replicas {
            if replica.state != first.state { problems.append("\(replica.id) shows \(replica.state.order), \(first.id) shows \(first.state.order)") }
            if replica.versions != first.versions { problems.append("\(replica.id) versions differ from \(first.id)'s") }
            if replica.checkpoint != first.checkpoint { problems.append("\(replica.id) checkpoint differs from \(first.id)'s") }
            let selections = replica.state.selections
            if selections.map(\.letter) != expected.selections.map(\.0) || selections.map(\.selectedBy) != expected.selections.map(\.1) {
                problems.append("\(replica.id) shows \(replica.state.order), the reference \(expected.selections.map(\.0))")
            }
            if replica.versions.entries != expected.versions {
                problems.append("\(replica.id) versions \(replica.versions.entries), reference \(expected.versions)")
            }
            for (op, outcome) in zip(replica.log, replica.outcomes) where expected.outcomes[op.id] != outcome {
                problems.append("\(replica.id): \(op.id) \(op.change) was \(outcome), reference \(String(describing: expected.outcomes[op.id]))")
            }
        }
        if !problems.isEmpty { throw fail(problems) }
    }

    func describe(_ replica: Board) -> String {
        "\(replica.id): frontier \(replica.checkpoint.frontier) checkpoint \(replica.checkpoint.versions.entries) versions \(replica.versions.entries) log \(replica.log.map { "\($0.id)@\($0.lamport)" }) retired \(replica.retired) pending \(replica.pending.mapValues { Array($0.keys) })"
    }

    // MARK: Checks

    /// Invariants of every replica, one line of compactions, and C1 for any
    /// two replicas holding the same operations.
    mutating func check() throws(FuzzFailure) {
        var problems: [String] = []
        defer { touched = [] }
        for index in touched {
            let replica = replicas[index]
            problems += replica.checkInvariants().map { "\(replica.id): \($0)" }
            let frontier = replica.checkpoint.frontier
            guard frontier != .origin else { continue }
            if let known = checkpoints[frontier] {
                if known != replica.checkpoint.versions { problems.append("two checkpoints at \(frontier)") }
            } else {
                checkpoints[frontier] = replica.checkpoint.versions
            }
        }
        for i in touched {
            let a = replicas[i]
            for b in replicas where b.id != a.id && a.state != b.state && a.versions == b.versions {
                problems.append("C1: \(a.id) and \(b.id) hold the same operations but show \(a.state.order) and \(b.state.order)")
            }
        }
        if !problems.isEmpty { throw fail(problems) }
    }
}
