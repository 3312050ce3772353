import Foundation
import Glibc
import Histogram

/// Runs a bench: starts the workers, ramps the connections, sends for the
/// warm-up plus the measured window, drains, checks convergence, reports.
struct BenchRunner {
    let plan: BenchPlan
    /// The hub processes (`--hub-pid`, repeatable) whose RSS and CPU are summed; none: not sampled.
    let hubPIDs: [Int32]
    let progress: Bool

    func run() -> BenchReport { run(plan.kind.driver) }

    /// The run with `Driver`'s workers (the driver of `--kind`).
    private func run<Driver: BenchDriver>(_ driver: Driver.Type) -> BenchReport {
        let workers = (0..<plan.threads).map { BenchWorker<Driver>(index: $0, plan: plan) }
        for worker in workers where !worker.start() {
            FileHandle.standardError.write(Data("bench: could not start a network loop\n".utf8))
        }
        // Signalled once per loop when its `run` returns (at once for one that did not start).
        let loopsEnded = DispatchSemaphore(value: 0)
        let threads = workers.map { worker in
            let thread = Thread {
                worker.client.run()
                loopsEnded.signal()
            }
            thread.name = "bench-\(worker.index)"
            thread.start()
            return thread
        }
        _ = threads
        // Ramp up.
        let total = plan.totalClients
        let rampDeadline = BenchClock.now() + UInt64((Double(total) / plan.connectionsPerSecond + 30) * 1e9)
        while BenchClock.now() < rampDeadline {
            let done = workers.reduce(0) { $0 + $1.connected.load(ordering: .relaxed) + $1.failures.load(ordering: .relaxed) }
            if progress { status("connecting \(done)/\(total)") }
            if done >= total { break }
            usleep(100_000)
        }
        usleep(300_000) // let the joins' state frames settle
        let hubBefore = ProcessSample.read(pids: hubPIDs)
        let ownBefore = ProcessSample.own()
        let start = BenchClock.now() + 20_000_000
        let recordFrom = start + plan.warmupNanos
        let end = recordFrom + plan.durationNanos
        for worker in workers { worker.client.post { worker.beginSending(at: start, recordFrom: recordFrom, until: end) } }
        var lastAnswers = 0, lastFrames = 0, lastTime = BenchClock.now()
        while BenchClock.now() < end {
            usleep(1_000_000)
            let answers = workers.reduce(0) { $0 + $1.answers.load(ordering: .relaxed) }
            let frames = workers.reduce(0) { $0 + $1.framesIn.load(ordering: .relaxed) }
            let now = BenchClock.now()
            let seconds = Double(now - lastTime) / 1e9
            if progress {
                status("t=\(Int(Double(now - start) / 1e9))s answers \(Int(Double(answers - lastAnswers) / seconds))/s frames " +
                       "\(Int(Double(frames - lastFrames) / seconds))/s")
            }
            (lastAnswers, lastFrames, lastTime) = (answers, frames, now)
        }
        let hubAfter = ProcessSample.read(pids: hubPIDs)
        let ownAfter = ProcessSample.own()
        // Drain: every answer in, and the last states delivered.
        let drainDeadline = BenchClock.now() + 10_000_000_000
        while BenchClock.now() < drainDeadline, workers.contains(where: { $0.outstanding.load(ordering: .relaxed) > 0 }) {
            usleep(50_000)
        }
        usleep(1_000_000)
        if progress { status("") }
        // The loops end before anything they wrote is read: a frame or an
        // answer arriving late can no longer change what is summed up.
        for worker in workers { worker.client.post { worker.closeAll() } }
        usleep(300_000)
        for worker in workers { worker.client.stop() }
        let ended = workers.allSatisfy { _ in loopsEnded.wait(timeout: .now() + 30) == .success }
        if !ended {
            FileHandle.standardError.write(Data("bench: a network loop did not end within 30 s; its figures may be incomplete\n".utf8))
        }
        return summarize(workers, hubBefore: hubBefore, hubAfter: hubAfter, ownBefore: ownBefore, ownAfter: ownAfter)
    }

    private func status(_ text: String) {
        FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
    }

    private func summarize<Driver>(_ workers: [BenchWorker<Driver>], hubBefore: ProcessSample?, hubAfter: ProcessSample?,
                           ownBefore: ProcessSample?, ownAfter: ProcessSample?) -> BenchReport {
        // Peers and acknowledgements are read once the loops have ended.
        for worker in workers { worker.fileStatesSeen() }
        let peers = workers.flatMap(\.peers)
        var connect = Histogram<UInt64>(highestTrackableValue: 120_000_000_000)
        for peer in peers { if let nanos = peer.connectNanos { _ = connect.record(max(1, nanos)) } }
        // The change that made version v is the earliest-sent operation acknowledged with v
        // (its send time, and the hub it was sent to).
        var firstSend: [Int: [UInt64: (sent: UInt64, hub: Int)]] = [:]
        for worker in workers {
            for ack in worker.acknowledged {
                if let old = firstSend[ack.board]?[ack.version], old.sent <= ack.sent { continue }
                firstSend[ack.board, default: [:]][ack.version] = (ack.sent, ack.hub)
            }
        }
        // Several hubs: the same samples again, by where the receiver is.
        var split: HubSplit? = plan.hubCount > 1 ? HubSplit() : nil
        var visibility = Histogram<UInt64>(highestTrackableValue: 120_000_000_000)
        var everyClient = Histogram<UInt64>(highestTrackableValue: 120_000_000_000)
        var unseen = 0
        var peersOfBoard: [Int: [BenchWorker<Driver>.Peer]] = [:]
        for peer in peers { peersOfBoard[peer.board, default: []].append(peer) }
        for (board, sends) in firstSend {
            let ops = sends.sorted { $0.key < $1.key }
            var latest = [UInt64](repeating: 0, count: ops.count)
            for peer in peersOfBoard[board] ?? [] {
                var cursor = 0
                for (index, op) in ops.enumerated() {
                    while cursor < peer.stateVersions.count, peer.stateVersions[cursor] < op.key { cursor += 1 }
                    guard cursor < peer.stateVersions.count else { unseen += ops.count - index; break }
                    let seen = peer.stateTimes[cursor]
                    let latency = seen > op.value.sent ? seen - op.value.sent : 1
                    _ = visibility.record(latency)
                    split?.record(latency, sender: op.value.hub, receiver: peer.hub)
                    latest[index] = max(latest[index], latency)
                }
            }
            for value in latest where value > 0 { _ = everyClient.record(value) }
        }
        if plan.raw { for worker in workers { visibility.add(worker.rawVisibility) } }
        var acks = Histogram<UInt64>(highestTrackableValue: 120_000_000_000)
        for worker in workers { acks.add(worker.ackLatency) }
        var divergent: [String] = []
        for (board, group) in peersOfBoard where !plan.raw {
            let first = group[0]
            if group.contains(where: {
                $0.lastOrder != first.lastOrder || $0.lastVersion != first.lastVersion || $0.stateTail != first.stateTail
            }) {
                divergent.append(plan.boardNames[board])
            }
        }
        let seconds = Double(plan.durationNanos) / 1e9
        let acknowledged = workers.reduce(0) { $0 + $1.acknowledged.count }
        let changes = firstSend.values.reduce(0) { $0 + $1.count }
        var report = BenchReport(
            boards: plan.boardNames.count, clientsPerBoard: plan.clientsPerBoard, sendersPerBoard: plan.sendersPerBoard,
            mode: (plan.rate > 0 ? "paced" : "saturated") + (plan.raw ? " (raw broadcaster)" : ""), targetRate: plan.rate, seconds: seconds,
            connected: peers.filter { $0.connectNanos != nil }.count,
            connectFailures: workers.reduce(0) { $0 + $1.failures.load(ordering: .relaxed) },
            connectMillis: .init(connect),
            operationsAcknowledged: acknowledged, operationsRejected: workers.reduce(0) { $0 + $1.rejected },
            errors: workers.reduce(0) { $0 + $1.errors },
            disconnects: workers.reduce(0) { $0 + $1.failures.load(ordering: .relaxed) },
            acknowledgedPerSecond: Double(acknowledged) / seconds,
            changesPerSecond: Double(changes) / seconds,
            statesDeliveredPerSecond: Double(workers.reduce(0) { $0 + $1.statesInWindow }) / seconds,
            framesDeliveredPerSecond: Double(workers.reduce(0) { $0 + $1.framesInWindow }) / seconds,
            visibilityMillis: .init(visibility), visibilityAtEveryClientMillis: .init(everyClient), ackMillis: .init(acks),
            unseen: unseen, converged: divergent.isEmpty, divergentBoards: divergent.sorted(),
            hubRSSMiB: hubAfter.map { Double($0.residentKiB) / 1024 },
            hubRSSDeltaMiB: hubBefore.flatMap { before in hubAfter.map { Double($0.residentKiB - before.residentKiB) / 1024 } },
            hubCPUPercent: hubBefore.flatMap { before in hubAfter.map { before.cpuPercent(until: $0) } },
            benchCPUPercent: ownBefore.flatMap { before in ownAfter.map { before.cpuPercent(until: $0) } })
        if let split {
            report.hubs = plan.hubs.map { $0.with(path: "").description }
            report.visibilitySameHubMillis = split.sameHubMillis
            report.visibilityCrossHubMillis = split.crossHubMillis
        }
        if hubPIDs.count > 1 { report.hubProcesses = hubPIDs.count }
        let frames = workers.reduce(0) { $0 + $1.framesInWindow }
        report.reader = plan.hub.isSecure ? .libwebsockets : plan.reader
        if frames > 0 { report.meanFrameBytes = Double(workers.reduce(0) { $0 + $1.bytesInWindow }) / Double(frames) }
        if plan.histogram { report.visibilityHistogram = visibility.recordedValues().map { [$0.value, $0.count] } }
        Driver.report(&report, workers: workers, plan: plan, seconds: seconds)
        return report
    }
}
