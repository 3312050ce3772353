import Foundation
import Logging
import WebSocketLoop

/// The appender thread of a shard: batches of proposals, folds and
/// write-backs, each unit one script call, pipelined on its own connection.
extension SharedLogShard {
    func runAppender() {
        let connection = RedisConnection(server: address, timeoutMilliseconds: settings.timeoutMilliseconds)
        var scripts: ScriptHashes?
        var generation: UInt64 = 0
        while true {
            lock.lock()
            while jobs.isEmpty && !stopping { lock.wait() }
            if jobs.isEmpty && stopping { lock.unlock(); break }
            let batch = Array(jobs.prefix(512))
            jobs.removeFirst(batch.count)
            lock.unlock()
            guard ready(connection, scripts: &scripts, generation: &generation, role: "appender"), let hashes = scripts else {
                // Everything queued meanwhile fails too: none of it is sent late.
                lock.lock()
                let waiting = jobs
                jobs.removeAll()
                let stop = stopping
                lock.unlock()
                fail(batch + waiting, reason: "cannot reach \(address)")
                if !stop { Thread.sleep(forTimeInterval: 0.05) }
                continue
            }
            // A proposal already answered `unavailable` is never sent late.
            let now = WebSocketServer.nowNanos()
            let expired = batch.filter { if case let .propose(proposal) = $0 { return proposal.deadline <= now } else { return false } }
            if !expired.isEmpty { fail(expired, reason: "waited past --redis-timeout") }
            let live = batch.filter { if case let .propose(proposal) = $0 { return proposal.deadline > now } else { return true } }
            if !live.isEmpty { send(live, on: connection, hashes: hashes) }
        }
        finished()
    }

    /// Jobs that go as one command: up to `SharedLogScripts.maxBatch`
    /// consecutive proposals of one board (one `append` call), or one fold.
    static func units(of batch: [Job]) -> [[Job]] {
        var units: [[Job]] = []
        for job in batch {
            if case let .propose(proposal) = job, let last = units.last, last.count < SharedLogScripts.maxBatch,
               case let .propose(previous)? = last.first, previous.logName == proposal.logName {
                units[units.count - 1].append(job)
            } else {
                units.append([job])
            }
        }
        return units
    }

    /// The folder thread: sends the folds the encoder wrote on a connection
    /// of its own, so a fold's script (a snapshot of 10-25 KB stored, the
    /// stream trimmed) never delays the proposals in the appender's pipeline.
    func runFolder() {
        let connection = RedisConnection(server: address, timeoutMilliseconds: settings.timeoutMilliseconds)
        var scripts: ScriptHashes?
        var generation: UInt64 = 0
        while let written = foldEncoder.takeWritten() {
            var folds: [Job] = []
            for item in written {
                switch item {
                case let .snapshot(fold, bytes):
                    folds.append(.fold(fold, snapshot: bytes))
                case let .failed(fold, reason):
                    // Nothing is trimmed without a snapshot; the next fold tries again.
                    note { $0.errors["fold_encode", default: 0] += 1 }
                    logger.error("cannot encode a board's snapshot", metadata: ["board": "\(fold.logName)", "error": "\(reason)"])
                }
            }
            guard !folds.isEmpty else { continue }
            // A fold that cannot be sent is dropped: the board's next one goes.
            guard ready(connection, scripts: &scripts, generation: &generation, role: "folder"), let hashes = scripts else { continue }
            send(folds, on: connection, hashes: hashes)
        }
        connection.close()
        finished()
    }

    func send(_ batch: [Job], on connection: RedisConnection, hashes: ScriptHashes, isRetry: Bool = false) {
        var hashes = hashes
        if isRetry {
            var scripts: ScriptHashes?
            var generation = currentPrimaryGeneration
            guard ready(connection, scripts: &scripts, generation: &generation, role: "appender"), let loaded = scripts else {
                fail(batch, reason: "cannot reach \(address)")
                return
            }
            hashes = loaded
        }
        let units = Self.units(of: batch)
        let run = connection.runID
        var commands = units.map { command(for: $0, hashes: hashes, run: run, evalText: false) }
        let proposals = batch.contains { if case .propose = $0 { return true } else { return false } }
        let waits = settings.waitReplicas > 0 && proposals
        // WAIT answers before the socket's timeout, so a lagging replica is
        // a WAIT shortfall, not a lost connection.
        let waitCommand = ["WAIT", String(settings.waitReplicas), String(max(1, settings.timeoutMilliseconds / 2))].map { Array($0.utf8) }
        if waits { commands.append(waitCommand) }
        let started = DispatchTime.now().uptimeNanoseconds
        var replies: [RedisReply]
        do {
            replies = try connection.pipelineBytes(commands)
        } catch {
            note { $0.count(error); $0.up = false }
            logger.warning("redis append failed; answered unavailable", metadata: ["server": "\(address)", "error": "\(error.message)"])
            // A write-back is safe to send again (it checks what the log
            // holds): it goes once more, on a new connection, rather than
            // wait a second for the next look at the log (R15's fence is short).
            connection.close()
            let again = batch.filter { if case .restore = $0 { true } else { false } }
            fail(batch.filter { if case .restore = $0 { false } else { true } }, reason: error.message)
            if !again.isEmpty, !isRetry {
                send(again, on: connection, hashes: hashes, isRetry: true)
            } else {
                fail(again, reason: error.message)
            }
            return
        }
        note { $0.observe(seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9); $0.up = true }
        // A script flushed behind our back (SCRIPT FLUSH): those run again as EVAL.
        let missing = replies.indices.filter { $0 < units.count && replies[$0].errorText?.hasPrefix("NOSCRIPT") == true }
        if !missing.isEmpty {
            note { $0.errors["noscript", default: 0] += 1 }
            do {
                // With --redis-wait, what runs again is waited for again.
                var retry = missing.map { command(for: units[$0], hashes: hashes, run: run, evalText: true) }
                if waits { retry.append(waitCommand) }
                let again = try connection.pipelineBytes(retry)
                for (index, reply) in zip(missing, again) { replies[index] = reply }
                if waits, let last = again.last, (last.integer ?? 0) < Int64(settings.waitReplicas) {
                    for index in missing {
                        replies[index] = .error("WAIT only \(last.integer ?? 0) of \(settings.waitReplicas) Redis replicas confirmed")
                    }
                }
            } catch {
                note { $0.count(error); $0.up = false }
                for index in missing { replies[index] = .error("ERR \(error.message)") }
            }
        }
        var waitProblem: String?
        if waits, let last = replies.last {
            let have = last.integer ?? 0
            if have < Int64(settings.waitReplicas) {
                waitProblem = "only \(have) of \(settings.waitReplicas) Redis replicas confirmed within \(settings.timeoutMilliseconds) ms"
                note { $0.errors["wait", default: 0] += 1 }
            }
        }
        if replies.contains(where: { $0.errorText?.hasPrefix("READONLY") == true }) {
            // R13: this server became a replica: never written to again; every
            // thread connects to the primary the Sentinels name.
            logger.warning("redis answered READONLY: it is a replica now", metadata: ["server": "\(address)"])
            connection.close()
            primaryMoved()
        }
        var news: [StoreAnswer] = []
        for (unit, reply) in zip(units, replies) {
            for (place, job) in unit.enumerated() {
                switch job {
                case let .propose(proposal):
                    let answer = result(of: reply, place: place, waitProblem: waitProblem, logName: proposal.logName)
                    if case let .appended(offset, _) = answer { noteAcknowledged(proposal.logName, offset: offset) }
                    news.append(.appended(board: proposal.board, number: proposal.number, result: answer))
                case let .restore(restore, _):
                    news.append(.restored(board: restore.board, restoreResult(of: reply, logName: restore.logName)))
                case let .fold(fold, _):
                    if let error = reply.errorText {
                        note { $0.errors[RedisFailure(reason: .script, message: error).label, default: 0] += 1 }
                        logger.warning("redis refused a fold", metadata: ["board": "\(fold.logName)", "error": "\(error)"])
                    } else if reply.elements.first?.text == "ok" {
                        note { $0.folds += 1 }
                        news.append(.folded(board: fold.board, offset: fold.offset))
                    } else {
                        note { $0.foldsDeclined += 1 }
                        // 'behind': a newer snapshot is stored; 'busy': another hub holds the lease.
                        if reply.elements.first?.text == "behind", let at = reply.elements.dropFirst().first?.integer, at > 0 {
                            news.append(.folded(board: fold.board, offset: UInt64(at)))
                            news.append(.foldedElsewhere(board: fold.board))
                        } else if reply.elements.first?.text == "busy" {
                            news.append(.foldedElsewhere(board: fold.board))
                        }
                    }
                }
            }
        }
        deliver(news)
    }

    /// The answer to a write-back (R15).
    private func restoreResult(of reply: RedisReply, logName: String) -> SharedRestoreResult {
        if let error = reply.errorText {
            note { $0.errors[RedisFailure(reason: .script, message: error).label, default: 0] += 1 }
            logger.warning("redis refused a write-back", metadata: ["board": "\(logName)", "error": "\(error)"])
            return .failed(reason: error)
        }
        let parts = reply.elements
        switch parts.first?.text {
        case "ok"?: return .restored
        case "moved"? where parts.count == 4: return .moved(Self.head(parts[1...]))
        case "notmine"?:
            let message = "another hub holds --hub-id \(settings.hubID) on \(address): this hub's write-back is refused"
            logger.critical("\(message)")
            deliver([.storeFailed(StoreError(description: message))])
            return .failed(reason: "another hub holds this hub's id")
        default:
            note { $0.errors["protocol", default: 0] += 1 }
            return .failed(reason: "unexpected answer from the restore script")
        }
    }

    /// `top, last, epoch` as a script answers them.
    static func head(_ parts: ArraySlice<RedisReply>) -> SharedLogHead {
        let values = Array(parts)
        func number(_ reply: RedisReply) -> UInt64 { UInt64(reply.text ?? "") ?? UInt64(max(0, reply.integer ?? 0)) }
        return SharedLogHead(top: values.count > 0 ? number(values[0]) : 0, last: values.count > 1 ? number(values[1]) : 0,
                             epoch: values.count > 2 ? (values[2].text ?? "") : "", snap: values.count > 3 ? number(values[3]) : 0)
    }

    /// The answer to the `place`-th entry of an `append` call.
    private func result(of reply: RedisReply, place: Int, waitProblem: String?, logName: String) -> SharedAppendResult {
        if let error = reply.errorText {
            // OOM, READONLY after a failover, LOADING, BUSY...: never an ack.
            if place == 0 {
                note { $0.errors[RedisFailure(reason: .script, message: error).label, default: 0] += 1 }
                logger.warning("redis refused an append; answered unavailable", metadata: ["board": "\(logName)", "error": "\(error)"])
            }
            return .failed(reason: error)
        }
        let parts = reply.elements
        switch parts.first?.text {
        case "fence"? where parts.count == 2:
            // R15: nothing appended; proposed again when the fence is over.
            return .fenced(milliseconds: UInt64(max(1, parts[1].integer ?? 1)))
        case "notmine"?:
            // R17: another process took this hub's id (this one was cut off
            // past its lease): nothing of it is appended, and it stops.
            if place == 0 {
                let message = "another hub holds --hub-id \(settings.hubID) on \(address): this hub's appends are refused"
                logger.critical("\(message)")
                deliver([.storeFailed(StoreError(description: message))])
            }
            return .failed(reason: "another hub holds this hub's id")
        case "lost"? where parts.count == 4:
            if place == 0 { logger.error("redis lost a part of a board's log this hub applied", metadata: ["board": "\(logName)"]) }
            return .lost(Self.head(parts[1...]))
        default:
            break
        }
        let at = 1 + 2 * place
        if parts.count >= at + 2, let epoch = parts[0].text {
            switch parts[at].text {
            case "ok"?:
                guard let offset = parts[at + 1].integer, offset > 0 else { break }
                if let waitProblem { return .failed(reason: waitProblem) }
                return .appended(offset: UInt64(offset), epoch: epoch)
            case "dup"?:
                guard let seen = parts[at + 1].text else { break }
                return .duplicate(seen: seen)
            case "owner"?:
                return .notOwner
            case "err"?:
                let message = parts[at + 1].text ?? "an error"
                note { $0.errors[RedisFailure(reason: .script, message: message).label, default: 0] += 1 }
                logger.warning("redis refused an append; answered unavailable", metadata: ["board": "\(logName)", "error": "\(message)"])
                return .failed(reason: message)
            default:
                break
            }
        }
        note { $0.errors["protocol", default: 0] += 1 }
        return .failed(reason: "unexpected answer from the append script")
    }

    /// Bytes, not text: a snapshot is stored packed (`PackedSnapshot`).
    private func command(for unit: [Job], hashes: ScriptHashes, run: String, evalText: Bool) -> [[UInt8]] {
        let (text, snapshot) = commandText(for: unit, hashes: hashes, run: run, evalText: evalText)
        var command = text.map { Array($0.utf8) }
        if let (at, bytes) = snapshot { command[at] = bytes }
        return command
    }

    /// The command with a placeholder where a snapshot goes, and where it goes.
    private func commandText(for unit: [Job], hashes: ScriptHashes, run: String, evalText: Bool)
        -> ([String], snapshot: (at: Int, bytes: [UInt8])?) {
        switch unit.first {
        case let .propose(first)?:
            let keys = SharedLogScripts.BoardKeys(logName: first.logName)
            let head = evalText ? ["EVAL", SharedLogScripts.append] : ["EVALSHA", hashes.append]
            let seen = first.seen
            var command = head + ["8", keys.meta, keys.log, keys.keys, keys.keyOrder, keys.owners, Self.runKey, Self.fenceKey,
                                  HubLease.key(hubID: settings.hubID),
                                  Self.newEpoch(), run, settings.fenceSpans,
                                  String(seen.offset), String(seen.link), seen.epoch, HubLease.token]
            command.reserveCapacity(command.count + 5 * unit.count)
            for case let .propose(proposal) in unit {
                command += [proposal.body, proposal.key ?? "", proposal.owner.map { String($0.replica.rawValue) } ?? "",
                            proposal.owner?.sub ?? "", String(Self.newLink())]
            }
            return (command, nil)
        case let .restore(restore, snapshot)?:
            let keys = SharedLogScripts.BoardKeys(logName: restore.logName)
            let head = evalText ? ["EVAL", SharedLogScripts.restore] : ["EVALSHA", hashes.restore]
            var command = head + ["6", keys.meta, keys.log, keys.snapshot, keys.keys, keys.keyOrder, HubLease.key(hubID: settings.hubID),
                                  String(restore.seen.offset), String(restore.seen.link), "", restore.seen.epoch,
                                  String(restore.expected.top), String(restore.expected.last), Self.newEpoch(),
                                  String(settings.fenceMilliseconds), HubLease.token]
            for answer in restore.answers { command += [answer.key, answer.answer, String(answer.offset)] }
            return (command, (at: head.count + 9, bytes: snapshot))
        case let .fold(fold, snapshot)?:
            let keys = SharedLogScripts.BoardKeys(logName: fold.logName)
            let head = evalText ? ["EVAL", SharedLogScripts.fold] : ["EVALSHA", hashes.fold]
            var command = head + ["6", keys.meta, keys.log, keys.snapshot, keys.keys, keys.keyOrder, keys.lease,
                                  String(fold.offset), "", settings.hubID,
                                  String(fold.fallback ? min(1_000, settings.leaseMilliseconds) : settings.leaseMilliseconds),
                                  String(settings.maxKeysPerBoard), String(settings.keptBehindSnapshot), fold.epoch, String(fold.link)]
            for answer in fold.answers { command += [answer.key, answer.answer] }
            return (command, (at: head.count + 8, bytes: snapshot))
        case nil:
            return (["PING"], nil)
        }
    }

    func fail(_ batch: [Job], reason: String) {
        var news: [StoreAnswer] = []
        for job in batch {
            switch job {
            case let .propose(proposal):
                news.append(.appended(board: proposal.board, number: proposal.number, result: .failed(reason: reason)))
            case let .restore(restore, _):
                news.append(.restored(board: restore.board, .failed(reason: reason)))
            case .fold:
                break
            }
        }
        if !news.isEmpty { deliver(news) }
    }

    private static func newEpoch() -> String { String(UInt64.random(in: 1...UInt64.max), radix: 36) }

    /// An entry's link (R15): 48 random bits, never 0 (a stream id's second part).
    private static func newLink() -> UInt64 { UInt64.random(in: 1...(1 << 48)) }

    /// R15's fence (`SharedLogScripts.fence`): server-wide keys.
    static let runKey = "synchub:run"
    static let fenceKey = "synchub:fence"
    /// R15: hub id -> when it was last seen (server milliseconds).
    static let hubsKey = "synchub:hubs"
}
