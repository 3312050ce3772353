import Foundation
import Logging
import WebSocketLoop

/// One Redis server of the cluster and the two threads that talk to it:
/// the appender (proposals and folds, pipelined, each batch one round trip)
/// and the follower (XREAD BLOCK on the logs of the boards this hub holds,
/// presence once a second). Both hand what they learn to the service thread
/// through `deliver`; neither touches the hub's state.
final class SharedLogShard: @unchecked Sendable {
    // Sendable: guarded by `lock` (the rest are `let`s of Sendable types); each thread's RedisConnection is its local (not Sendable).
    let address: RedisServerAddress
    private let settings: SharedLogConnectionSettings
    private let logger: Logger
    private let lock = NSCondition()
    private var jobs: [Job] = []
    private var stopping = false
    private var threadsRunning = 0
    /// logName -> (board key, offset to read after and the link of the entry there).
    private var followed: [String: Followed] = [:]
    struct Followed { var board: String; var after: UInt64; var link: UInt64 }
    private var unfollowed: Set<String> = []
    /// logName -> (connections, names) on this hub.
    private var presence: [String: (clients: Int, names: [String])] = [:]
    private var stats = SharedLogStats()
    private var deliverNews: @Sendable ([StoreAnswer]) -> Void = { _ in }
    /// Set before `start()`: hands news to the service thread (called with `lock` not held).
    var deliver: @Sendable ([StoreAnswer]) -> Void {
        get { lock.lock(); defer { lock.unlock() }; return deliverNews }
        set { lock.lock(); deliverNews = newValue; lock.unlock() }
    }

    enum Job: Sendable {
        case propose(SharedProposal)
        /// A fold whose snapshot `encodeFolds` has written.
        case fold(SharedFold, snapshot: String)
        /// R15: a board written back, its snapshot written off the appender too.
        case restore(SharedRestore, snapshot: String)
    }

    /// Snapshots are written here, not on the appender: a fold's encoding
    /// (the whole board) must not hold up the proposals behind it.
    private let foldEncoder = DispatchQueue(label: "redis-fold-encoder")
    /// Write-backs (R15) are encoded on their own queue: never behind folds.
    private let restoreEncoder = DispatchQueue(label: "redis-restore-encoder")

    /// R15: writes the board's snapshot off the appender thread, then queues the write-back.
    func submitRestore(_ restore: SharedRestore) {
        restoreEncoder.async { [self] in
            do {
                submit([.restore(restore, snapshot: try restore.encode())])
            } catch {
                logger.error("cannot encode a board's snapshot to write it back", metadata: ["board": "\(restore.logName)", "error": "\(error)"])
                deliver([.restored(board: restore.board, .failed(reason: "cannot encode the board: \(error)"))])
            }
        }
    }

    /// Writes each fold's snapshot off the appender thread, then queues it.
    func submitFolds(_ folds: [SharedFold]) {
        for fold in folds {
            foldEncoder.async { [self] in
                do {
                    let snapshot = try fold.encode()
                    submit([.fold(fold, snapshot: snapshot)])
                } catch {
                    // Nothing is trimmed without a snapshot; the next fold tries again.
                    logger.error("cannot encode a board's snapshot", metadata: ["board": "\(fold.logName)", "error": "\(error)"])
                }
            }
        }
    }

    /// O6: this is the cluster's first server, which keeps the revocations
    /// (its follower reads them each second and hands them to the core).
    private let keepsRevocations: Bool
    static let revokedKey = "synchub:revoked"

    /// O2-O4: the console's exchange, on the first server only.
    private let console: ClusterConsole?

    init(address: RedisServerAddress, settings: SharedLogConnectionSettings, logger: Logger, keepsRevocations: Bool = false,
         console: ClusterConsole? = nil) {
        self.keepsRevocations = keepsRevocations
        self.console = console
        self.address = address
        self.settings = settings
        self.logger = logger
    }

    func start() {
        lock.lock()
        threadsRunning = 2
        lock.unlock()
        let appender = Thread { [self] in runAppender() }
        appender.name = "redis-appender"
        appender.start()
        let follower = Thread { [self] in runFollower() }
        follower.name = "redis-follower"
        follower.start()
    }

    /// Stops both threads once the appender has sent what is queued.
    func stop() {
        lock.lock()
        stopping = true
        lock.broadcast()
        while threadsRunning > 0 { lock.wait() }
        lock.unlock()
    }

    func submit(_ new: [Job]) {
        guard !new.isEmpty else { return }
        lock.lock()
        if jobs.count >= Self.maxQueued {
            // Redis cannot keep up (or is away): nothing more waits in memory.
            lock.unlock()
            note { $0.errors["queue_full", default: 0] += 1 }
            fail(new, reason: "too many changes waiting for \(address)")
            return
        }
        jobs.append(contentsOf: new)
        lock.signal()
        lock.unlock()
    }

    /// Proposals and folds waiting for the appender at most.
    static let maxQueued = 50_000

    /// Follows `logName` from after `seen` (replacing where it was).
    func follow(_ logName: String, board: String, after seen: SharedSeen) {
        lock.lock()
        followed[logName] = Followed(board: board, after: seen.offset, link: seen.link)
        unfollowed.remove(logName)
        lock.unlock()
    }

    func unfollow(_ logName: String) {
        lock.lock()
        if followed.removeValue(forKey: logName) != nil { unfollowed.insert(logName) }
        lock.unlock()
    }

    func setPresence(_ snapshot: [String: (clients: Int, names: [String])]) {
        lock.lock()
        presence = snapshot
        lock.unlock()
    }

    var currentStats: SharedLogStats {
        lock.lock()
        defer { lock.unlock() }
        return stats
    }

    var isUp: Bool { currentStats.up }

    /// Reached at start (`SharedLog.connectAtStart`): up until a call fails.
    func markUp() {
        note { $0.up = true }
    }

    /// R18: the settings read from the server (at start or after a reconnect).
    func noteSettings(_ settings: RedisSettings) {
        note { $0.persistent = settings.appendOnly }
    }

    /// R19: the server came back empty and was taken in its old place.
    func noteReplaced() {
        note { $0.replaced += 1 }
    }

    /// A read on the service thread failed: down until a thread gets through again.
    func markDown(_ failure: RedisFailure) {
        note { $0.count(failure); $0.up = false }
    }

    private func note(_ body: (inout SharedLogStats) -> Void) {
        lock.lock()
        body(&stats)
        lock.unlock()
    }

    private func finished() {
        lock.lock()
        threadsRunning -= 1
        lock.broadcast()
        lock.unlock()
    }

    /// R13: bumped when the Sentinels name another primary than the one the
    /// follower is connected to; each thread then connects again (`ready`).
    private var primaryGeneration: UInt64 = 0
    /// R13: the primary a thread of this server last connected to (under `lock`).
    private var lastPrimary: RedisServerAddress.Endpoint?
    /// R18: the last refusal logged, so a refused server is not logged on every reconnect.
    private var lastRefusal: String?
    /// R15: a server without a run id is warned about once (under `lock`).
    private var runIDWarned = false

    /// The primary's generation (R13), read by this server's threads and its reader.
    var currentPrimaryGeneration: UInt64 {
        lock.lock()
        defer { lock.unlock() }
        return primaryGeneration
    }

    private func primaryMoved() {
        lock.lock()
        primaryGeneration &+= 1
        lock.unlock()
    }

    /// Connects `connection` if needed (loading the scripts), again when
    /// the primary moved since it connected (`generation`); false when
    /// Redis cannot be reached.
    private func ready(_ connection: RedisConnection, scripts: inout ScriptHashes?, generation: inout UInt64, role: String) -> Bool {
        let now = currentPrimaryGeneration
        if connection.isConnected, scripts != nil, generation == now { return true }
        if connection.isConnected {
            logger.notice("the Sentinels name another primary: connecting to it", metadata: ["server": "\(address)", "role": "\(role)"])
            connection.close()
        }
        generation = now
        do {
            try connection.connect(name: "synchub-\(settings.hubID)-\(role)")
            notePrimary(connection.connectedTo)
            if let problem = connection.runIDProblem {
                lock.lock()
                let fresh = !runIDWarned
                runIDWarned = true
                lock.unlock()
                if fresh {
                    logger.warning("cannot read redis's run id (INFO server): a restart of this server is not fenced, so a hub that never saw what it lost may write on top of it before the hubs that did write it back (R15)",
                                   metadata: ["server": "\(address)", "error": "\(problem)"])
                }
            }
            generation = currentPrimaryGeneration  // this connection is on the newest primary
            try checkSettings(on: connection)
            scripts = try ScriptHashes.load(on: connection)
            return true
        } catch {
            note { $0.count(error); $0.up = false; $0.reconnects += 1 }
            logger.warning("cannot reach redis", metadata: ["server": "\(address)", "role": "\(role)", "error": "\(error.message)"])
            connection.close()
            scripts = nil
            return false
        }
    }

    /// R18 after a (re)connect: a server that may evict keys is not
    /// written to (the connection fails, the server counts as down, and it
    /// is tried again); one without an append-only file is warned about.
    private func checkSettings(on connection: RedisConnection) throws(RedisFailure) {
        guard let found = try RedisSettings.read(on: connection) else { return }
        let before = currentStats.persistent
        noteSettings(found)
        if let refusal = found.refusal(server: address) {
            lock.lock()
            let fresh = lastRefusal != refusal
            lastRefusal = refusal
            lock.unlock()
            if fresh { logger.critical("\(refusal)") }
            throw RedisFailure(reason: .reply, message: "maxmemory-policy \(found.maxmemoryPolicy) refused")
        }
        if before != found.appendOnly, let warning = found.warning(server: address) { logger.warning("\(warning)") }
    }

    // MARK: Appender

    private func runAppender() {
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

    private func send(_ batch: [Job], on connection: RedisConnection, hashes: ScriptHashes, isRetry: Bool = false) {
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
        let waitCommand = ["WAIT", String(settings.waitReplicas), String(max(1, settings.timeoutMilliseconds / 2))]
        if waits { commands.append(waitCommand) }
        let started = DispatchTime.now().uptimeNanoseconds
        var replies: [RedisReply]
        do {
            replies = try connection.pipeline(commands)
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
                let again = try connection.pipeline(retry)
                for (index, reply) in zip(missing, again) { replies[index] = reply }
                if waits, let last = again.last, (last.integer ?? 0) < Int64(settings.waitReplicas) {
                    for index in missing { replies[index] = .error("WAIT only \(last.integer ?? 0) of \(settings.waitReplicas) Redis replicas confirmed") }
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
                    news.append(.appended(board: proposal.board, number: proposal.number,
                                          result: result(of: reply, place: place, waitProblem: waitProblem, logName: proposal.logName)))
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

    private func command(for unit: [Job], hashes: ScriptHashes, run: String, evalText: Bool) -> [String] {
        switch unit.first {
        case let .propose(first)?:
            let keys = SharedLogScripts.BoardKeys(logName: first.logName)
            let head = evalText ? ["EVAL", SharedLogScripts.append] : ["EVALSHA", hashes.append]
            let seen = first.seen
            var command = head + ["8", keys.meta, keys.log, keys.keys, keys.keyOrder, keys.owners, Self.runKey, Self.fenceKey,
                                  HubLease.key(hubID: settings.hubID),
                                  Self.newEpoch(), run, String(settings.fenceMilliseconds),
                                  String(seen.offset), String(seen.link), seen.epoch, HubLease.token]
            command.reserveCapacity(command.count + 5 * unit.count)
            for case let .propose(proposal) in unit {
                command += [proposal.body, proposal.key ?? "", proposal.owner.map { String($0.replica.rawValue) } ?? "",
                            proposal.owner?.sub ?? "", String(Self.newLink())]
            }
            return command
        case let .restore(restore, snapshot)?:
            let keys = SharedLogScripts.BoardKeys(logName: restore.logName)
            let head = evalText ? ["EVAL", SharedLogScripts.restore] : ["EVALSHA", hashes.restore]
            var command = head + ["6", keys.meta, keys.log, keys.snapshot, keys.keys, keys.keyOrder, HubLease.key(hubID: settings.hubID),
                                  String(restore.seen.offset), String(restore.seen.link), snapshot, restore.seen.epoch,
                                  String(restore.expected.top), String(restore.expected.last), Self.newEpoch(),
                                  String(settings.fenceMilliseconds), HubLease.token]
            for answer in restore.answers { command += [answer.key, answer.answer, String(answer.offset)] }
            return command
        case let .fold(fold, snapshot)?:
            let keys = SharedLogScripts.BoardKeys(logName: fold.logName)
            let head = evalText ? ["EVAL", SharedLogScripts.fold] : ["EVALSHA", hashes.fold]
            var command = head + ["6", keys.meta, keys.log, keys.snapshot, keys.keys, keys.keyOrder, keys.lease,
                                  String(fold.offset), snapshot, settings.hubID, String(settings.leaseMilliseconds), String(settings.maxKeysPerBoard),
                                  String(settings.keptBehindSnapshot), fold.epoch, String(fold.link)]
            for answer in fold.answers { command += [answer.key, answer.answer] }
            return command
        case nil:
            return ["PING"]
        }
    }

    private func fail(_ batch: [Job], reason: String) {
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


    // MARK: Follower

    private func runFollower() {
        let connection = RedisConnection(server: address, timeoutMilliseconds: settings.timeoutMilliseconds + settings.blockMilliseconds)
        var scripts: ScriptHashes?
        var generation: UInt64 = 0
        var lastPresence: UInt64 = 0
        var lastPrimaryCheck: UInt64 = 0
        while true {
            lock.lock()
            let done = stopping
            let targets = followed
            let gone = unfollowed
            unfollowed.removeAll()
            lock.unlock()
            if done { break }
            let opened = connection.opened
            guard ready(connection, scripts: &scripts, generation: &generation, role: "follower") else {
                Thread.sleep(forTimeInterval: 0.1)
                continue
            }
            // R15: reached again (a restart, a failover, another primary): the
            // fence starts and every followed board's head is checked now.
            if connection.opened != opened { lastPresence = 0 }
            let now = DispatchTime.now().uptimeNanoseconds
            if address.isSentinel, now >= lastPrimaryCheck + 1_000_000_000 {
                // R13: a promotion is followed within about a second, also
                // when the old primary still answers (a partition).
                lastPrimaryCheck = now
                checkPrimary(connection)
                continue
            }
            if now >= lastPresence + 1_000_000_000 || !gone.isEmpty {
                lastPresence = now
                exchangePresence(on: connection, targets: targets, gone: gone)
                continue
            }
            if targets.isEmpty {
                Thread.sleep(forTimeInterval: Double(settings.blockMilliseconds) / 1000)
                // A round trip now and then keeps `up` honest with nothing followed.
                continue
            }
            read(on: connection, targets: targets)
        }
        finished()
    }

    /// R13: a thread connected to `primary`; another than the last one (a
    /// reconnect after the old primary died) is a failover the others follow.
    private func notePrimary(_ primary: RedisServerAddress.Endpoint?) {
        guard address.isSentinel, let primary else { return }
        lock.lock()
        let moved = lastPrimary != nil && lastPrimary != primary
        lastPrimary = primary
        if moved {
            primaryGeneration &+= 1
            stats.failovers += 1
        }
        lock.unlock()
        if moved { logger.notice("connected to a new primary", metadata: ["server": "\(address)", "primary": "\(primary)"]) }
    }

    /// R13: asks the Sentinels which server is the primary; another one than
    /// this connection's moves every thread of this server to it.
    private func checkPrimary(_ connection: RedisConnection) {
        guard let connected = connection.connectedTo else { return }
        do throws(RedisFailure) {
            let named = try connection.primary()
            if named != connected {
                logger.notice("the Sentinels promoted another primary", metadata: ["server": "\(address)", "was": "\(connected)", "now": "\(named)"])
                primaryMoved()
            }
        } catch {
            logger.warning("no Sentinel answers", metadata: ["server": "\(address)", "error": "\(error.message)"])
        }
    }

    private func read(on connection: RedisConnection, targets: [String: Followed]) {
        let names = Array(targets.keys)
        var command = ["XREAD", "COUNT", "1000", "BLOCK", String(settings.blockMilliseconds), "STREAMS"]
        command += names.map { SharedLogScripts.BoardKeys(logName: $0).log }
        // After every id of the last offset read (ids are OFFSET-LINK).
        command += names.map { "\(targets[$0]?.after ?? 0)-\(UInt64.max)" }
        let reply: RedisReply
        do {
            reply = try connection.command(command)
        } catch {
            note { $0.count(error); $0.up = false }
            logger.warning("redis follower failed", metadata: ["server": "\(address)", "error": "\(error.message)"])
            return
        }
        note { $0.up = true }
        if let error = reply.errorText {
            note { $0.errors[RedisFailure(reason: .reply, message: error).label, default: 0] += 1 }
            logger.warning("redis refused XREAD", metadata: ["error": "\(error)"])
            Thread.sleep(forTimeInterval: 0.1)
            return
        }
        var news: [StoreAnswer] = []
        var advanced: [String: SharedLogEntry] = [:]
        for stream in reply.elements {
            let parts = stream.elements
            guard parts.count == 2, let key = parts[0].text else { continue }
            let logName = Self.logName(ofStreamKey: key)
            guard let target = targets[logName] else { continue }
            let entries = Self.entries(parts[1])
            guard let last = entries.last else { continue }
            advanced[logName] = last
            news.append(.sequenced(board: target.board, entries: entries))
        }
        lock.lock()
        for (logName, last) in advanced {
            if let current = followed[logName], current.after < last.offset {
                followed[logName] = Followed(board: current.board, after: last.offset, link: last.link)
            }
        }
        lock.unlock()
        if !news.isEmpty { deliver(news) }
    }

    /// Once a second: tells Redis who is on each followed board here, reads
    /// who is on the other hubs, and how far the logs ran ahead (R4, R11).
    private func exchangePresence(on connection: RedisConnection, targets: [String: Followed], gone: Set<String>) {
        lock.lock()
        let here = presence
        lock.unlock()
        let names = Array(targets.keys)
        // R17: the lease on this hub's id, renewed with presence.
        var commands: [[String]] = [HubLease.takeCommand(hubID: settings.hubID, token: HubLease.token),
                                    // R15: a server that restarted or was promoted is fenced from here.
                                    ["EVAL", SharedLogScripts.arrive, "2", Self.runKey, Self.fenceKey, connection.runID,
                                     String(settings.fenceMilliseconds)]]
        for logName in gone { commands.append(["HDEL", SharedLogScripts.BoardKeys(logName: logName).here, settings.hubID]) }
        let revokedAt = commands.count
        if keepsRevocations { commands.append(["HGETALL", Self.revokedKey]) }
        let first = commands.count
        for logName in names {
            let keys = SharedLogScripts.BoardKeys(logName: logName)
            let mine = here[logName] ?? (0, [])
            let namesJSON = String(decoding: (try? JSONEncoder().encode(mine.names)) ?? Data("[]".utf8), as: UTF8.self)
            commands.append(["HSET", keys.here, settings.hubID, "{{TIME}} \(mine.clients) \(namesJSON)"])
            commands.append(["PEXPIRE", keys.here, "10000"])
            commands.append(["HGETALL", keys.here])
            commands.append(["HMGET", keys.meta, "top", "last", "epoch", "snap"])
        }
        do {
            // The server's clock stamps every hub's entry, so hubs on
            // machines whose clocks differ still agree on what is stale.
            let time = try connection.command(["TIME"])
            let seconds = time.elements.first?.integer ?? 0
            let micros = time.elements.count > 1 ? (time.elements[1].integer ?? 0) : 0
            let nowMillis = seconds * 1000 + micros / 1000
            let stamped = commands.map { $0.map { $0.replacingOccurrences(of: "{{TIME}}", with: String(nowMillis)) } }
            let replies = try connection.pipeline(stamped)
            note { $0.up = true }
            if replies.contains(where: { $0.errorText?.hasPrefix("READONLY") == true }) {
                logger.warning("redis answered READONLY: it is a replica now", metadata: ["server": "\(address)"])
                connection.close()
                primaryMoved()
                return
            }
            if let error = replies[0].errorText {
                logger.warning("cannot renew the lease on --hub-id", metadata: ["server": "\(address)", "error": "\(error)"])
            }
            if let left = replies[0].integer, left < 0 {
                // Another process holds this hub's id (this one was cut off
                // past its lease): it stops rather than act as that hub.
                let message = "another hub took --hub-id \(settings.hubID) on \(address) while this one could not renew its lease"
                logger.critical("\(message)")
                deliver([.storeFailed(StoreError(description: message))])
            }
            var news: [StoreAnswer] = []
            if keepsRevocations {
                let revoked = Self.revocations(in: replies[revokedAt])
                if !revoked.isEmpty { news.append(.revocations(revoked)) }
            }
            var behind: UInt64 = 0
            var departed: [[String]] = []
            for (index, logName) in names.enumerated() {
                guard let target = targets[logName] else { continue }
                let all = replies[first + index * 4 + 2].elements
                var clients = 0
                var others: [String] = []
                var pair = 0
                while pair + 1 < all.count {
                    defer { pair += 2 }
                    guard let hub = all[pair].text, hub != settings.hubID, let value = all[pair + 1].text else { continue }
                    let fields = value.split(separator: " ", maxSplits: 2)
                    if let stamp = fields.first.flatMap({ Int64($0) }), nowMillis - stamp > 60_000 {
                        // A hub gone for a minute (killed, or restarted under a new id): its entry goes.
                        departed.append(["HDEL", SharedLogScripts.BoardKeys(logName: logName).here, hub])
                        continue
                    }
                    guard fields.count == 3, let stamp = Int64(fields[0]), let count = Int(fields[1]), nowMillis - stamp <= 3000 else { continue }
                    clients += count
                    if let list = try? JSONDecoder().decode([String].self, from: Data(fields[2].utf8)) { others += list }
                }
                news.append(.presence(board: target.board, clients: clients, names: others.sorted()))
                let head = Self.head(replies[first + index * 4 + 3].elements[...])
                if head.top > target.after { behind += head.top - target.after }
                // R15: the log went below what was read, or holds another
                // entry there (a failover to a replica that was behind, a
                // restart from an older file, a flush): history is gone.
                let lost = head.top < target.after || (head.top == target.after && head.last != target.link)
                if lost { logger.error("a board's log in redis lost history this hub read", metadata: ["board": "\(target.board)"]) }
                news.append(.logHead(board: target.board, head, lost: lost))
            }
            note { $0.behind = behind }
            if !departed.isEmpty { _ = try connection.pipeline(departed) }
            if !news.isEmpty { deliver(news) }
            try console?.exchange(on: connection, nowMillis: nowMillis)
        } catch {
            note { $0.count(error); $0.up = false }
        }
    }

    /// `HGETALL synchub:revoked` as revocations.
    static func revocations(in reply: RedisReply) -> [Revocations.Entry] {
        let parts = reply.elements
        return stride(from: 0, to: parts.count - 1, by: 2).compactMap { index in
            guard let field = parts[index].text, let value = parts[index + 1].text.flatMap({ Int64($0) }) else { return nil }
            return Revocations.entry(field: field, value: value)
        }
    }

    static func logName(ofStreamKey key: String) -> String {
        // sh:{KIND/NAME}:log
        guard let open = key.firstIndex(of: "{"), let close = key.lastIndex(of: "}"), open < close else { return key }
        return String(key[key.index(after: open)..<close])
    }

    /// `[[id, [field, value, ...]], ...]` as entries (offset = the id's first part).
    static func entries(_ reply: RedisReply) -> [SharedLogEntry] {
        var out: [SharedLogEntry] = []
        for item in reply.elements {
            let parts = item.elements
            guard parts.count == 2, let id = parts[0].text, let dash = id.firstIndex(of: "-"),
                  let offset = UInt64(id[..<dash]), let link = UInt64(id[id.index(after: dash)...]) else { continue }
            let fields = parts[1].elements
            var body: [UInt8]?
            var prev: UInt64?
            var index = 0
            while index + 1 < fields.count {
                switch fields[index].text {
                case "e"?: if case let .bulk(bytes) = fields[index + 1] { body = bytes }
                case "p"?: prev = fields[index + 1].text.flatMap { UInt64($0) }
                default: break
                }
                index += 2
            }
            if let body { out.append(SharedLogEntry(offset: offset, body: body, link: link, prev: prev)) }
        }
        return out
    }
}

/// How the shard threads talk to Redis.
struct SharedLogConnectionSettings: Sendable {
    var hubID: String
    var timeoutMilliseconds: Int
    var waitReplicas: Int
    /// How long one XREAD waits for news before the follower looks at its list again.
    var blockMilliseconds = 100
    /// A fold's lease: one hub folds a board at a time.
    var leaseMilliseconds = 30_000
    /// Flags every hub must share because applying the log depends on them
    /// (when the engine compacts and forgets replicas); recorded in Redis
    /// by the first hub, checked by every other at start.
    var agreedFlags = ""
    /// Idempotency keys a board keeps in Redis (the oldest go first).
    var maxKeysPerBoard = 100_000
    /// Entries kept in the stream behind a snapshot, so a hub a little
    /// behind the folding one reads on instead of reloading the board.
    var keptBehindSnapshot = 1_024
    /// R15: how long a server that restarted or was promoted takes no
    /// append, while the hubs that hold its boards write back what it lost
    /// (they check at once when they reach it again). Within half of
    /// --redis-timeout, so an intent waiting it out is still answered.
    var fenceMilliseconds: Int { min(1_000, max(100, timeoutMilliseconds / 2)) }
}

/// The SHA1s of the loaded scripts (SCRIPT LOAD on every new connection, so
/// a restarted Redis is served again at once).
struct ScriptHashes {
    var append: String
    var fold: String
    var load: String
    var restore: String

    static func load(on connection: RedisConnection) throws(RedisFailure) -> ScriptHashes {
        let scripts = [SharedLogScripts.append, SharedLogScripts.fold, SharedLogScripts.load, SharedLogScripts.restore]
        let replies = try connection.pipeline(scripts.map { ["SCRIPT", "LOAD", $0] })
        let hashes = replies.compactMap(\.text)
        guard hashes.count == scripts.count, replies.allSatisfy({ $0.errorText == nil }) else {
            throw RedisFailure(reason: .reply, message: "SCRIPT LOAD refused: \(replies.compactMap(\.errorText).first ?? "no hash")")
        }
        return ScriptHashes(append: hashes[0], fold: hashes[1], load: hashes[2], restore: hashes[3])
    }
}
