@testable import BoardCRDT

/// The inbox topology: clients send in random batches (reordered, with
/// resends and, with `gaps`, holes the hub buffers across its compactions);
/// the hub relays what it integrated to every other client (to the author
/// too when it re-stamped one of its operations), pushes checkpoints and
/// `sync`s; each client's inbox is taken in random order, some messages twice.
extension ConvergenceFuzz {
    mutating func runInbox(_ mix: InboxMix) throws(FuzzFailure) {
        let opening = K.openingStep(&rng, late: late)
        let steps = rng.inRange(K.fuzz.steps)
        counts.bump("steps", by: steps)
        let clients = replicas.count - 1
        for index in 0..<steps {
            step = index
            if opening == index, let intent = K.openingIntent(&rng) {
                guard let op = try hubIntent(intent, by: "") else {
                    throw fail(["the hub's opening \(intent) was refused or recorded nothing"])
                }
                for client in clientIndices { links[client].inbox.append(.ops([op])) }
            }
            var roll = rng.below(100)
            if roll < mix.localIntent {
                let client = 1 + rng.below(clients)
                if let op = try clientIntent(client) { links[client].unsent.append(op) }
            } else if (roll - mix.localIntent) < mix.hubIntent {
                try thinIntent()
            } else {
                roll -= mix.localIntent + mix.hubIntent
                if roll < mix.send {
                    try send(from: 1 + rng.below(clients), everything: false)
                } else if roll - mix.send < mix.deliver {
                    try deliver(to: 1 + rng.below(clients), everything: false)
                } else if roll - mix.send - mix.deliver < mix.catchUp {
                    catchUp(1 + rng.below(clients))
                } else {
                    hubCompacts()
                }
            }
            try checkHub()
            K.countStep(replicas, counts: &counts)
        }
        step = steps
        note("final delivery")
        for index in clientIndices { try send(from: index, everything: true) }
        touched.insert(Self.hub)
        try checkHub()
        for index in clientIndices { try deliver(to: index, everything: true) }
        try finalHubChecks()
    }

    /// A thin client's intent, prepared on the hub's own state; relayed to every client.
    mutating func thinIntent() throws(FuzzFailure) {
        let intent = K.randomIntent(&rng, in: hub.state, by: K.fuzz.guest)
        let pool = links.dropFirst().map(\.name)
        let name = rng.percent(50) ? K.fuzz.guest : pool[rng.below(pool.count)]
        guard let op = try hubIntent(intent, by: name) else { return }
        for index in clientIndices { links[index].inbox.append(.ops([op])) }
    }

    /// The hub compacts on its own (keeping 0 to 2 operations).
    mutating func hubCompacts() {
        let keeping = rng.below(3)
        touched.insert(Self.hub)
        replicas[0].compact(keeping: keeping)
        note("hub compacts keeping \(keeping): frontier \(hub.checkpoint.frontier)")
    }

    /// A client sends part of what it has not sent (with `gaps`, not a
    /// prefix: the hub buffers the holes) and resends some of what it sent.
    mutating func send(from index: Int, everything: Bool) throws(FuzzFailure) {
        var ops: [Op] = []
        var kept: [Op] = []
        let unsent = links[index].unsent
        let whole = everything || rng.percent(40)
        if !gaps {
            let count = whole ? unsent.count : rng.inRange(0...unsent.count)
            ops = Array(unsent.prefix(count))
            kept = Array(unsent.dropFirst(count))
        } else {
            for op in unsent {
                if whole || rng.percent(60) { ops.append(op) } else { kept.append(op) }
            }
        }
        links[index].sent += ops
        links[index].unsent = kept
        if !everything {
            for op in links[index].sent where rng.percent(8) { ops.append(op) }
            if rng.percent(60) { rng.shuffle(&ops) }
        }
        guard !ops.isEmpty else { return }
        let report = try hubReceives(ops, from: index)
        guard !report.integratedOperations.isEmpty else { return }
        for other in clientIndices where other != index || !report.restamped.isEmpty {
            links[other].inbox.append(.ops(report.integratedOperations))
        }
    }

    /// The hub pushes its checkpoint, or answers a `hello` with a `sync`.
    mutating func catchUp(_ index: Int) {
        if rng.percent(50) {
            links[index].inbox.append(.checkpoint(hub.checkpoint))
            note("hub pushes its checkpoint at \(hub.checkpoint.frontier) to \(replicas[index].id)")
        } else {
            let delta = syncDelta(for: index)
            links[index].inbox.append(.sync(delta, have: nil))
            note("hub syncs \(replicas[index].id): checkpoint \(delta.checkpoint.map { "\($0.frontier)" } ?? "-") and " +
                 "\(delta.operations.count) operations")
        }
    }

    /// One or more waiting messages reach a client, in random order, some twice.
    mutating func deliver(to index: Int, everything: Bool) throws(FuzzFailure) {
        guard !links[index].inbox.isEmpty else { return }
        touched.insert(index)
        let count = everything ? links[index].inbox.count : rng.inRange(1...min(3, links[index].inbox.count))
        for _ in 0..<count {
            let pick = rng.below(links[index].inbox.count)
            let message = everything || !rng.percent(10) ? links[index].inbox.remove(at: pick) : links[index].inbox[pick]
            switch message {
            case let .ops(ops):
                var ops = ops
                if rng.percent(30) { rng.shuffle(&ops) }
                try relayed(ops, to: index)
            case let .checkpoint(checkpoint):
                try adopt(Delta(checkpoint: checkpoint), at: index)
            case let .sync(delta, _):
                counts.bump("syncs")
                try adopt(delta, at: index)
            case .ack, .rateLimited:
                break
            }
        }
    }
}
