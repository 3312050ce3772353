@testable import BoardCRDT

/// The connection topology, modelled on what the real hub (`KindRoom`) and
/// replica client (`ReplicaSession`) do: one connection per client, FIFO
/// both ways. Clients perform intents at once and send their unacknowledged
/// operations in frames (per schedule, as first recorded or as their log's
/// current copies); the hub answers each frame with an ack carrying `have`,
/// relays what it integrated to every other connected client (to the author
/// too when it re-stamped one of its operations) and, when it compacts, its
/// checkpoint to every connected client; the rate limiter sometimes drops a
/// frame (`rate_limited` with `have`: the client sends again from there,
/// so the hub meets gaps and duplicates; without `gaps` the whole burst
/// goes). Disconnects lose part of what was in flight; the client comes
/// back with `hello`, the hub answers with a `sync`.
extension ConvergenceFuzz {
    mutating func runConnections() throws(FuzzFailure) {
        if sendsLogCopies { counts.bump("schedules sending log copies") }
        let opening = K.openingStep(&rng, late: late)
        let steps = rng.inRange(K.fuzz.steps)
        counts.bump("steps", by: steps)
        for index in 0..<steps {
            step = index
            if opening == index, let intent = K.openingIntent(&rng) {
                let frontier = hub.checkpoint.frontier
                guard let op = try hubIntent(intent, by: "") else {
                    throw fail(["the hub's opening \(intent) was refused or recorded nothing"])
                }
                relayFromHub([op], author: nil, restamped: false, frontierBefore: frontier)
            }
            let client = 1 + rng.below(replicas.count - 1)
            switch rng.below(100) {
            case 0..<40:
                if let op = try clientIntent(client) {
                    links[client].unacked.append(op)
                    if rng.percent(70) { try sendPending(client) }
                }
            case 40..<50: try sendPending(client)
            case 50..<72: try hubTakes(from: client, frames: rng.inRange(1...3))
            case 72..<96: try clientTakes(client, messages: rng.inRange(1...4))
            default:
                if links[client].connected { try disconnect(client) } else { reconnect(client) }
            }
            // A client away reconnects after a while.
            for index in clientIndices where !links[index].connected && rng.percent(8) { reconnect(index) }
            try checkHub()
            K.countStep(replicas, counts: &counts)
        }
        step = steps
        try finalDelivery()
    }

    /// The hub takes the next frames of a client's connection, in order.
    mutating func hubTakes(from index: Int, frames: Int) throws(FuzzFailure) {
        var taken = 0
        while taken < frames, !links[index].up.isEmpty {
            taken += 1
            let frame = links[index].up.removeFirst()
            let id = replicas[index].id
            switch frame {
            case let .hello(frontier):
                links[index].member = true
                let delta = Delta(checkpoint: frontier < hub.checkpoint.frontier ? hub.checkpoint : nil, operations: hub.log)
                let have = hub.versions[id]
                note("hub greets \(id) (frontier \(frontier)): sync with " +
                     "\(delta.checkpoint.map { "checkpoint \($0.frontier)" } ?? "no checkpoint"), \(delta.operations.count) operations, " +
                     "have \(have)")
                links[index].down.append(.sync(delta, have: have))
            case let .ops(ops, lastSeq):
                // Without `gaps`, a frame that would wait behind a gap is
                // dropped too, as if the limiter were still closed.
                let behindGap = !gaps && ops.first.map { $0.id.seq > hub.versions[id] + 1 } == true
                if behindGap || (!delivering && rng.percent(rateLimitPercent)) {
                    var dropped = [ops]
                    if !gaps {
                        while case let .ops(more, _)? = links[index].up.first {
                            dropped.append(more)
                            links[index].up.removeFirst()
                        }
                    }
                    counts.bump("frames rate-limited", by: dropped.count)
                    note("hub rate-limits \(id)'s frames \(dropped.map { stamps($0) })")
                    for _ in dropped { links[index].down.append(.rateLimited(have: hub.versions[id])) }
                    continue
                }
                let frontier = hub.checkpoint.frontier
                let report = try hubReceives(ops, from: index)
                relayFromHub(report.integratedOperations, author: index, restamped: !report.restamped.isEmpty, frontierBefore: frontier)
                links[index].down.append(.ack(have: hub.versions[id], lastSeq: lastSeq))
            }
        }
    }

    /// As `KindRoom.committed`: the operations to every other connected
    /// client (and to the author when one of its was re-stamped), then the
    /// checkpoint to every connected client when the hub compacted.
    mutating func relayFromHub(_ ops: [Op], author: Int?, restamped: Bool, frontierBefore: Stamp) {
        let compacted = hub.checkpoint.frontier != frontierBefore
        for index in clientIndices where links[index].member {
            if !ops.isEmpty, index != author || restamped { links[index].down.append(.ops(ops)) }
            if compacted { links[index].down.append(.checkpoint(hub.checkpoint)) }
        }
    }

    /// Sends the client's unacknowledged operations not yet sent on this
    /// connection, in one or more frames, in sequence order.
    mutating func sendPending(_ index: Int) throws(FuzzFailure) {
        guard links[index].connected, links[index].synced else { return }
        let replica = replicas[index]
        var fresh = links[index].unacked.filter { $0.id.replica == replica.id && $0.id.seq > links[index].sentUpTo }
        guard !fresh.isEmpty else { return }
        if sendsLogCopies {
            for i in fresh.indices {
                if let at = replica.logIndex(of: fresh[i].id) { fresh[i] = replica.log[at] }
            }
        }
        var start = 0
        while start < fresh.count {
            let size = delivering ? fresh.count : rng.inRange(1...max(1, fresh.count - start))
            let chunk = Array(fresh[start..<min(fresh.count, start + size)])
            let last = chunk[chunk.count - 1].id.seq
            links[index].up.append(.ops(chunk, lastSeq: last))
            links[index].sentUpTo = last
            start += chunk.count
        }
    }

    /// The client takes the next messages of its connection, in order.
    mutating func clientTakes(_ index: Int, messages: Int) throws(FuzzFailure) {
        var taken = 0
        while taken < messages, !links[index].down.isEmpty {
            taken += 1
            let message = links[index].down.removeFirst()
            touched.insert(index)
            switch message {
            case let .ops(ops):
                try relayed(ops, to: index)
            case let .checkpoint(checkpoint):
                try adopt(Delta(checkpoint: checkpoint), at: index)
            case let .sync(delta, have):
                try adopt(delta, at: index)
                if let have {
                    links[index].synced = true
                    dropAcknowledged(index, upTo: have)
                    links[index].sentUpTo = min(links[index].sentUpTo, have)
                    try sendPending(index)
                }
            case let .ack(have, lastSeq):
                dropAcknowledged(index, upTo: have)
                // A gap (a frame the rate limiter dropped): send again from `have`.
                if have < lastSeq {
                    links[index].sentUpTo = min(links[index].sentUpTo, have)
                    try sendPending(index)
                }
            case let .rateLimited(have):
                dropAcknowledged(index, upTo: have)
                links[index].sentUpTo = min(links[index].sentUpTo, have)
                if rng.percent(50) || delivering { try sendPending(index) }
            }
        }
    }

    mutating func dropAcknowledged(_ index: Int, upTo have: UInt64) {
        let id = replicas[index].id
        links[index].unacked.removeAll { $0.id.replica == id && $0.id.seq <= have }
    }

    /// The connection drops: part of what was in flight each way arrives,
    /// the rest is lost. The hub forgets the connection.
    mutating func disconnect(_ index: Int) throws(FuzzFailure) {
        let arriving = rng.inRange(0...links[index].up.count)
        note("\(replicas[index].id) disconnects; \(arriving) of \(links[index].up.count) frames still reach the hub")
        try hubTakes(from: index, frames: arriving)
        links[index].member = false
        try clientTakes(index, messages: rng.inRange(0...links[index].down.count))
        links[index].up = []
        links[index].down = []
        links[index].connected = false
        links[index].synced = false
    }

    /// A new connection: `hello` with the checkpoint the client holds.
    mutating func reconnect(_ index: Int) {
        counts.bump("reconnects")
        links[index].connected = true
        links[index].synced = false
        links[index].up = [.hello(frontier: replicas[index].checkpoint.frontier)]
        note("\(replicas[index].id) reconnects with frontier \(replicas[index].checkpoint.frontier)")
    }

    /// Everything is delivered: every client connected, every frame taken,
    /// until nothing is in flight and the hub holds every operation.
    mutating func finalDelivery() throws(FuzzFailure) {
        note("final delivery")
        delivering = true
        for index in clientIndices where !links[index].connected { reconnect(index) }
        var rounds = 0
        while true {
            rounds += 1
            if rounds > 100 {
                let unsettled = clientIndices.map {
                    "\(replicas[$0].id) up \(links[$0].up.count) down \(links[$0].down.count) unacked \(links[$0].unacked.count)"
                }
                throw fail(["delivery does not settle: \(unsettled)"])
            }
            for index in clientIndices { try sendPending(index) }
            for index in clientIndices { try hubTakes(from: index, frames: .max) }
            for index in clientIndices { try clientTakes(index, messages: .max) }
            touched = Set(replicas.indices)
            try checkHub()
            if clientIndices.allSatisfy({ links[$0].up.isEmpty && links[$0].down.isEmpty && links[$0].unacked.isEmpty }) { break }
        }
        // The hub pushed every checkpoint to its members: they hold it already.
        for client in replicas.dropFirst() where client.checkpoint.frontier != hub.checkpoint.frontier
            || client.log.map(\.stamp) != hub.log.map(\.stamp) {
            throw fail(["\(client.id) holds checkpoint \(client.checkpoint.frontier) and log \(stamps(client.log)), " +
                        "the hub \(hub.checkpoint.frontier) and \(stamps(hub.log))"])
        }
        try finalHubChecks()
    }
}
