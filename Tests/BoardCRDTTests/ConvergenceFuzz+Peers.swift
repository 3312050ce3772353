@testable import BoardCRDT

/// The peer topology: 3 to 8 replicas, random intents, random partial syncs
/// with duplicated and reordered delivery, replicas offline across
/// compactions (they rebase when they come back). In hub mode replica 0 is
/// always online, compacts automatically with a tiny log bound and runs the
/// compaction steps, as a (non-sealing) hub does; otherwise no replica
/// compacts by itself and any online one runs a compaction step.
extension ConvergenceFuzz {
    mutating func setUpPeers() {
        hubMode = rng.percent(40)
        let count = rng.inRange(3...8)
        let maxPending = [1, 3, 4096][rng.below(3)]
        let hubKeeps = rng.inRange(2...6)
        for index in 0..<count {
            let compacts = hubMode && index == 0
            let limits = ReplicaLimits(keptOperations: compacts ? hubKeeps : 1024, maxPending: maxPending, compacts: compacts)
            replicas.append(Replica(id: freshID(upTo: 1_000_000), limits: limits))
            links.append(Link())
        }
        note("seed \(seed): \(count) replicas \(replicas.map(\.id)), hub mode \(hubMode), maxPending \(maxPending)")
    }

    mutating func runPeers() throws(FuzzFailure) {
        let steps = rng.inRange(K.fuzz.steps)
        counts.bump("steps", by: steps)
        for index in 0..<steps {
            step = index
            K.countStep(replicas, counts: &counts)
            switch rng.below(100) {
            case 0..<50: if let op = try clientIntent(rng.below(replicas.count)) { made.append(op) }
            case 50..<84: try partialSync()
            case 84..<93: toggleOnline()
            default: try compactionStep()
            }
            try checkPeers()
        }
        step = steps
        try finalPeerSync()
        counts.bump("compactions", by: checkpoints.count)
    }

    /// Two replicas on the same side of the partition: a random part of the
    /// delta, some operations twice, shuffled, sometimes without checkpoint.
    mutating func partialSync() throws(FuzzFailure) {
        let source = rng.below(replicas.count)
        let peers = replicas.indices.filter { $0 != source && links[$0].online == links[source].online }
        guard !peers.isEmpty else { return }
        let target = peers[rng.below(peers.count)]
        let delta = replicas[source].delta(for: replicas[target].versions, remoteFrontier: replicas[target].checkpoint.frontier)
        var operations: [Op] = []
        let whole = rng.percent(30)
        for op in delta.operations where whole || rng.percent(60) {
            operations.append(op)
            if rng.percent(20) { operations.append(op) }
        }
        if rng.percent(70) { rng.shuffle(&operations) }
        let checkpoint = rng.percent(85) ? delta.checkpoint : nil
        note("sync \(replicas[source].id) -> \(replicas[target].id): \(operations.map(\.id)) checkpoint " +
             "\(checkpoint.map { "\($0.frontier)" } ?? "-")")
        try deliver(Delta(checkpoint: checkpoint, operations: operations), toPeer: target)
    }

    mutating func deliver(_ delta: Delta<K>, toPeer target: Int) throws(FuzzFailure) {
        let fresh = freshID(upTo: 1_000_000)
        let oldID = replicas[target].id
        touched.insert(target)
        let (adopt, merge) = replicas[target].apply(delta, freshID: { fresh })
        made += adopt.rebased
        counts.bump("operations", by: adopt.rebased.count)
        counts.bump("buffered", by: merge.buffered)
        counts.bump("duplicates", by: merge.duplicates)
        counts.bump("refused by merging", by: merge.changedOutcomes.filter { $0.1.isRefused }.count)
        if !adopt.rebased.isEmpty {
            counts.bump("rebases")
            note("\(oldID) rebased as \(replicas[target].id): \(adopt.rebased.map(\.change))")
        }
        for refusal in merge.refused {
            switch refusal {
            case .stale: counts.bump("stale")
            case .pendingFull: counts.bump("pending-full")
            case .malformed, .clockWentBack: throw fail(["honest operation refused: \(refusal)"])
            }
        }
    }

    mutating func toggleOnline() {
        let index = rng.below(replicas.count)
        if hubMode && index == 0 { return }
        if links[index].online && links.filter(\.online).count == 1 { return }
        links[index].online.toggle()
        note("\(replicas[index].id) \(links[index].online ? "online" : "offline")")
    }

    /// The online replicas sync fully, one compacts and the others adopt its
    /// checkpoint; offline ones catch up (and rebase) later.
    mutating func compactionStep() throws(FuzzFailure) {
        let group = replicas.indices.filter { links[$0].online }
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
            let fresh = freshID(upTo: 1_000_000)
            let result = Result { () throws(CheckpointRefusal) in try replicas[index].adopt(checkpoint, freshID: { fresh }) }
            switch result {
            case let .failure(refusal): throw fail(["online replica refused the checkpoint: \(refusal)"])
            case let .success(report):
                made += report.rebased
                if !report.rebased.isEmpty { throw fail(["a fully synced replica rebased on adopting"]) }
            }
        }
    }

    /// Whole deltas through the group's first replica, both ways, until
    /// every member holds the same operations and checkpoint.
    mutating func fullSync(_ group: [Int]) throws(FuzzFailure) {
        let center = group[0]
        for _ in 0..<8 {
            let first = replicas[center]
            if group.allSatisfy({ replicas[$0].versions == first.versions
                && replicas[$0].checkpoint.frontier == first.checkpoint.frontier }) {
                return
            }
            for other in group.dropFirst() { try wholeDelta(from: other, to: center) }
            for other in group.dropFirst() { try wholeDelta(from: center, to: other) }
        }
        throw fail(["full sync of \(group.map { replicas[$0].id }) did not settle"] + group.map { describe(replicas[$0]) })
    }

    mutating func wholeDelta(from source: Int, to target: Int) throws(FuzzFailure) {
        let delta = replicas[source].delta(for: replicas[target].versions, remoteFrontier: replicas[target].checkpoint.frontier)
        if delta.checkpoint != nil || !delta.operations.isEmpty { try deliver(delta, toPeer: target) }
    }

    /// Everyone online, a full sync; then every replica equals the others
    /// and the kind's reference (`finalProblems`).
    mutating func finalPeerSync() throws(FuzzFailure) {
        for index in replicas.indices { links[index].online = true }
        touched = Set(replicas.indices)
        note("final sync")
        try fullSync(Array(replicas.indices))
        try checkPeers()
        let first = replicas[0]
        var problems: [String] = []
        for replica in replicas {
            if replica.state != first.state {
                problems.append("\(replica.id) shows \(K.describe(replica.state)), \(first.id) shows \(K.describe(first.state))")
            }
            if replica.versions != first.versions { problems.append("\(replica.id) versions differ from \(first.id)'s") }
            if replica.checkpoint != first.checkpoint { problems.append("\(replica.id) checkpoint differs from \(first.id)'s") }
        }
        problems += K.finalProblems(replicas, made: made, checkpoints: checkpoints.map { (frontier: $0.key, versions: $0.value) })
        if !problems.isEmpty { throw fail(problems) }
    }

    func describe(_ replica: Replica<K>) -> String {
        "\(replica.id): frontier \(replica.checkpoint.frontier) checkpoint \(replica.checkpoint.versions.entries) versions " +
        "\(replica.versions.entries) log \(replica.log.map { "\($0.id)@\($0.lamport)" }) retired \(replica.retired) pending " +
        "\(replica.pending.mapValues { Array($0.keys) })"
    }

    /// Invariants of every touched replica, one line of compactions, and C1
    /// for any two replicas holding the same operations.
    mutating func checkPeers() throws(FuzzFailure) {
        var problems: [String] = []
        defer { touched = [] }
        for index in touched {
            let replica = replicas[index]
            problems += (replica.checkInvariants() + K.replicaProblems(replica)).map { "\(replica.id): \($0)" }
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
                problems.append("C1: \(a.id) and \(b.id) hold the same operations but show \(K.describe(a.state)) and " +
                                "\(K.describe(b.state))")
            }
        }
        if !problems.isEmpty { throw fail(problems) }
    }
}
