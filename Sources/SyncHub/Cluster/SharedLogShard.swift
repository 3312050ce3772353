import Foundation
import Logging
import WebSocketLoop

/// One Redis server of the cluster and the two threads that talk to it:
/// the appender (proposals and folds, pipelined, each batch one round trip)
/// and the follower (XREAD BLOCK on the logs of the boards this hub holds,
/// presence once a second). Both hand what they learn to the service thread
/// through `deliver`; neither touches the hub's state. The appender is in
/// SharedLogShard+Appender.swift, the follower in SharedLogShard+Follower.swift;
/// the state below is theirs to share, under `lock`.
final class SharedLogShard: @unchecked Sendable {
    // Sendable: guarded by `lock` (the rest are `let`s of Sendable types); each thread's RedisConnection is its local (not Sendable).
    let address: RedisServerAddress
    let settings: SharedLogConnectionSettings
    let logger: Logger
    let lock = NSCondition()
    var jobs: [Job] = []
    var stopping = false
    var threadsRunning = 0
    /// logName -> (board key, offset to read after and the link of the entry there).
    var followed: [String: Followed] = [:]
    struct Followed { var board: String; var after: UInt64; var link: UInt64 }
    /// R15: logName -> the highest offset the appender had acknowledged
    /// (the follower may not have read it yet): a board whose log ends below
    /// it is not checked after a restart.
    var acknowledged: [String: UInt64] = [:]
    /// R15: the hubs seen live on this server (`synchub:hubs`, in the last
    /// 3 s): those a fence after its restart waits for.
    var knownHubs: [String] = []
    /// R15: write-backs and keys to keep that the core asked for and that
    /// are not done: while any is, this hub has not finished its check.
    var repairs = 0

    /// R15: reached again after a restart, and the core has not yet asked
    /// for the keys it remembers of its boards here (`.serverReached`).
    var checksOwed = 0
    /// The follower is to tell the core at its next exchange (`.serverReached`).
    var announceRestart = false

    func restartChecked() { lock.lock(); checksOwed = max(0, checksOwed - 1); lock.unlock() }
    func repairStarted() { lock.lock(); repairs += 1; lock.unlock() }
    func repairEnded() { lock.lock(); repairs = max(0, repairs - 1); lock.unlock() }
    var unfollowed: Set<String> = []
    /// logName -> (connections, names) on this hub.
    var presence: [String: (clients: Int, names: [String])] = [:]
    var stats = SharedLogStats()
    var deliverNews: @Sendable ([StoreAnswer]) -> Void = { _ in }
    /// Set before `start()`: hands news to the service thread (called with `lock` not held).
    var deliver: @Sendable ([StoreAnswer]) -> Void {
        get { lock.lock(); defer { lock.unlock() }; return deliverNews }
        set { lock.lock(); deliverNews = newValue; lock.unlock() }
    }

    enum Job: Sendable {
        case propose(SharedProposal)
        /// A fold whose snapshot `submitFolds` has written (packed).
        case fold(SharedFold, snapshot: [UInt8])
        /// R15: a board written back, its snapshot written off the appender too.
        case restore(SharedRestore, snapshot: [UInt8])
    }

    /// Snapshots are written there, not on the appender: a fold's encoding
    /// (the whole board) must not hold up the proposals behind it.
    let foldEncoder: FoldEncoder
    /// Write-backs (R15) are encoded on their own queue: never behind folds.
    let restoreEncoder = DispatchQueue(label: "redis-restore-encoder")

    /// R15: writes the board's snapshot off the appender thread, then queues the write-back.
    func submitRestore(_ restore: SharedRestore) {
        restoreEncoder.async { [self] in
            do {
                submit([.restore(restore, snapshot: try PackedSnapshot.pack(restore.encode()))])
            } catch {
                logger.error("cannot encode a board's snapshot to write it back",
                             metadata: ["board": "\(restore.logName)", "error": "\(error)"])
                deliver([.restored(board: restore.board, .failed(reason: "cannot encode the board: \(error)"))])
            }
        }
    }

    func noteAcknowledged(_ logName: String, offset: UInt64) {
        lock.lock()
        if followed[logName] != nil, acknowledged[logName, default: 0] < offset { acknowledged[logName] = offset }
        lock.unlock()
    }

    /// Writes each fold's snapshot off the appender thread, then queues it.
    func submitFolds(_ folds: [SharedFold]) {
        foldEncoder.submit(folds)
    }

    /// O6: this is the cluster's first server, which keeps the revocations
    /// (its follower reads them each second and hands them to the core).
    let keepsRevocations: Bool
    static let revokedKey = "synchub:revoked"

    /// O2-O4: the console's exchange, on the first server only.
    let console: ClusterConsole?

    init(address: RedisServerAddress, settings: SharedLogConnectionSettings, logger: Logger, keepsRevocations: Bool = false,
         console: ClusterConsole? = nil) {
        self.keepsRevocations = keepsRevocations
        self.console = console
        self.address = address
        self.settings = settings
        self.logger = logger
        foldEncoder = FoldEncoder(logger: logger)
    }

    func start() {
        lock.lock()
        threadsRunning = 3
        lock.unlock()
        let appender = Thread { [self] in runAppender() }
        appender.name = "redis-appender"
        appender.start()
        let follower = Thread { [self] in runFollower() }
        follower.name = "redis-follower"
        follower.start()
        foldEncoder.start()
        let folder = Thread { [self] in runFolder() }
        folder.name = "redis-folder"
        folder.start()
    }

    /// Stops the threads once the appender has sent what is queued (folds not sent are dropped).
    func stop() {
        foldEncoder.stop()
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
        // What was acknowledged before is covered by `seen` (R15's check after a restart).
        acknowledged.removeValue(forKey: logName)
        unfollowed.remove(logName)
        lock.unlock()
    }

    func unfollow(_ logName: String) {
        lock.lock()
        if followed.removeValue(forKey: logName) != nil { unfollowed.insert(logName) }
        acknowledged.removeValue(forKey: logName)
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

    func note(_ body: (inout SharedLogStats) -> Void) {
        lock.lock()
        body(&stats)
        lock.unlock()
    }

    func finished() {
        lock.lock()
        threadsRunning -= 1
        lock.broadcast()
        lock.unlock()
    }

    /// R13: bumped when the Sentinels name another primary than the one the
    /// follower is connected to; each thread then connects again (`ready`).
    var primaryGeneration: UInt64 = 0
    /// R13: the primary a thread of this server last connected to (under `lock`).
    var lastPrimary: RedisServerAddress.Endpoint?
    /// R18: the last refusal logged, so a refused server is not logged on every reconnect.
    var lastRefusal: String?
    /// R15: a server without a run id is warned about once (under `lock`).
    var runIDWarned = false

    /// The primary's generation (R13), read by this server's threads and its reader.
    var currentPrimaryGeneration: UInt64 {
        lock.lock()
        defer { lock.unlock() }
        return primaryGeneration
    }

    func primaryMoved() {
        lock.lock()
        primaryGeneration &+= 1
        lock.unlock()
    }

    /// Connects `connection` if needed (loading the scripts), again when
    /// the primary moved since it connected (`generation`); false when
    /// Redis cannot be reached.
    func ready(_ connection: RedisConnection, scripts: inout ScriptHashes?, generation: inout UInt64, role: String) -> Bool {
        let now = currentPrimaryGeneration
        if connection.isConnected, scripts != nil, generation == now { return true }
        if connection.isConnected {
            logger.notice(address.isSentinel ? "the Sentinels name another primary: connecting to it"
                                             : "the server was restarted: connecting to it again",
                          metadata: ["server": "\(address)", "role": "\(role)"])
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
                    logger.warning("""
                        cannot read redis's run id (INFO server): a restart of this server is not fenced, so a hub that never saw what \
                        it lost may write on top of it before the hubs that did write it back (R15)
                        """,
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
    func checkSettings(on connection: RedisConnection) throws(RedisFailure) {
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
}
