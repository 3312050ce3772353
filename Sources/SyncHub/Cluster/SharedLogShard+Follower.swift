import Foundation
import Logging
import WebSocketLoop

/// The follower thread of a shard: reads the followed boards' logs (XREAD),
/// exchanges presence once a second, checks heads after a restart (R15) and
/// which server the Sentinels call primary (R13).
extension SharedLogShard {
    func runFollower() {
        let connection = RedisConnection(server: address, timeoutMilliseconds: settings.timeoutMilliseconds + settings.blockMilliseconds)
        var scripts: ScriptHashes?
        var generation: UInt64 = 0
        var lastPresence: UInt64 = 0
        var lastPrimaryCheck: UInt64 = 0
        // R15: while the server's fence runs, presence (and the check of
        // every followed board's head) goes ten times a second.
        var presenceEvery: UInt64 = 1_000_000_000
        // R15: whether the last exchange found every followed board whole.
        var heldAllBefore = false
        // The server's run id when last reached: another one is a restart or a promotion.
        var lastRunID = ""
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
            if connection.opened != opened {
                lastPresence = 0
                heldAllBefore = false
                // The server restarted (another run id; unknown counts as
                // another): the appender's and the readers' connections are
                // to its old process, and the first append on one would be
                // answered `unavailable`. They connect again before their next
                // use (as after a failover, R13). A reconnect to the same run
                // (a dropped connection) is not a restart.
                let restarted = opened > 0 && (connection.runID.isEmpty || connection.runID != lastRunID)
                lastRunID = connection.runID
                if restarted {
                    primaryMoved()
                    generation = currentPrimaryGeneration   // this connection is the new one
                    lock.lock()
                    announceRestart = true
                    lock.unlock()
                }
            }
            let now = DispatchTime.now().uptimeNanoseconds
            if address.isSentinel, now >= lastPrimaryCheck + 1_000_000_000 {
                // R13: a promotion is followed within about a second, also
                // when the old primary still answers (a partition).
                lastPrimaryCheck = now
                checkPrimary(connection)
                continue
            }
            if now >= lastPresence + presenceEvery || !gone.isEmpty {
                lastPresence = now
                let fenced = exchangePresence(on: connection, targets: targets, gone: gone, heldAllBefore: &heldAllBefore)
                presenceEvery = fenced ? 100_000_000 : 1_000_000_000
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
    func notePrimary(_ primary: RedisServerAddress.Endpoint?) {
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
                logger.notice("the Sentinels promoted another primary",
                              metadata: ["server": "\(address)", "was": "\(connected)", "now": "\(named)"])
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
    /// R15: also says this hub is live (`synchub:hubs`), and, while the
    /// server's fence runs, that it checked every board it follows there.
    /// Answers whether the fence still runs.
    private func exchangePresence(on connection: RedisConnection, targets: [String: Followed], gone: Set<String>,
                                  heldAllBefore: inout Bool) -> Bool {
        lock.lock()
        let here = presence
        let known = knownHubs
        let acked = acknowledged
        lock.unlock()
        let names = Array(targets.keys)
        // R17: the lease on this hub's id, renewed with presence.
        var commands: [[String]] = [HubLease.takeCommand(hubID: settings.hubID, token: HubLease.token),
                                    // R15: a server that restarted or was promoted is fenced from here.
                                    ["EVAL", SharedLogScripts.arrive, "2", Self.runKey, Self.fenceKey, connection.runID,
                                     settings.fenceSpans, settings.hubID] + known.filter { $0 != settings.hubID },
                                    ["ZADD", Self.hubsKey, "{{TIME}}", settings.hubID],
                                    ["ZRANGE", Self.hubsKey, "0", "-1", "WITHSCORES"]]
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
                return false
            }
            if let error = replies[0].errorText {
                logger.warning("cannot renew the lease on --hub-id", metadata: ["server": "\(address)", "error": "\(error)"])
            }
            if let error = replies[1].errorText {
                // The hub cannot say it checked: every restart of this server would cost the fence's ceiling.
                note { $0.errors[RedisFailure(reason: .script, message: error).label, default: 0] += 1 }
                logger.warning("redis refused R15's fence script (arrive)", metadata: ["server": "\(address)", "error": "\(error)"])
            }
            let fenceLeft = replies[1].integer ?? 0
            let live = Self.liveHubs(in: replies[3], nowMillis: nowMillis)
            lock.lock()
            knownHubs = live
            lock.unlock()
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
            var holdsAll = true
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
                    guard fields.count == 3, let stamp = Int64(fields[0]), let count = Int(fields[1]), nowMillis - stamp <= 3000 else {
                        continue
                    }
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
                if lost || head.top < acked[logName, default: 0] { holdsAll = false }
                news.append(.logHead(board: target.board, head, lost: lost))
            }
            note { $0.behind = behind }
            if nowMillis % 60 == 0 {
                // Now and then: hubs gone for a minute leave the list.
                departed.append(["ZREMRANGEBYSCORE", Self.hubsKey, "-inf", String(nowMillis - 60_000)])
            }
            lock.lock()
            let announce = announceRestart
            announceRestart = false
            if announce { checksOwed += 1 }
            lock.unlock()
            if announce {
                // Last in the batch: the core handles the heads first, so
                // every write-back they call for is counted before it answers.
                news.append(.serverReached(server: "\(address)", boards: targets.values.map(\.board)))
            }
            if !news.isEmpty { deliver(news) }
            if !departed.isEmpty { _ = try? connection.pipeline(departed) }
            lock.lock()
            let repairing = repairs > 0 || checksOwed > 0 || announceRestart
            lock.unlock()
            let settled = holdsAll && heldAllBefore && !repairing
            heldAllBefore = holdsAll
            if fenceLeft > 0, settled {
                // R15: every board here holds what this hub applied (or was
                // written back), twice running (the core has had the first
                // look to ask for its write-backs and keys), and none of
                // those is still under way: the fence stops waiting for it.
                let reply = try connection.command(["EVAL", SharedLogScripts.checked, "1", Self.fenceKey, settings.hubID])
                if let error = reply.errorText {
                    note { $0.errors[RedisFailure(reason: .script, message: error).label, default: 0] += 1 }
                    logger.warning("redis refused R15's fence script (checked)", metadata: ["server": "\(address)", "error": "\(error)"])
                }
            }
            try console?.exchange(on: connection, nowMillis: nowMillis)
            return fenceLeft > 0
        } catch {
            note { $0.count(error); $0.up = false }
            return false
        }
    }

    /// `ZRANGE synchub:hubs 0 -1 WITHSCORES` as the hubs seen in the last 3 s.
    static func liveHubs(in reply: RedisReply, nowMillis: Int64) -> [String] {
        let parts = reply.elements
        return stride(from: 0, to: parts.count - 1, by: 2).compactMap { index in
            guard let hub = parts[index].text, let seen = parts[index + 1].text.flatMap({ Double($0) }),
                  Double(nowMillis) - seen <= 3_000 else { return nil }
            return hub
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
