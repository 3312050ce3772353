import BoardCRDT
import Foundation
import Logging
import WebSocketLoop

/// Cluster mode (`--redis`): how the shell hands boards to and from their
/// shared logs in Redis. Everything here runs on the service thread; the
/// shards' threads reach it only through `server.post`.
extension HubServer {
    /// Cluster mode, before a connection joins `board`: the board as its
    /// log holds it now when this hub does not hold it, else nil after
    /// applying what the log has beyond this hub (a client moving here
    /// never sees an older version than it saw elsewhere, R4). Nil and the
    /// connection closed when Redis cannot be read.
    func readShared(_ board: BoardAddress, for connection: ServerConnection) -> StoredBoard?? {
        guard let sharedLog else { return .some(nil) }
        do throws(RedisFailure) {
            if let room = core.boards[board.key] {
                let fresh = try sharedLog.load(board.logName, after: room.shared.applied)
                if fresh.snapshot == nil {
                    carryOut(core.handle(.sequenced(board: board.key, entries: fresh.entries)))
                } else {
                    carryOut(core.handle(.reloaded(board: board.key, fresh)))
                }
                reloadBehind()
                if core.holds(board: board) { return .some(nil) }
                // Dropped while reading (the log lost its history): loaded afresh.
                return .some(StoredBoard(shared: try sharedLog.load(board.logName, after: 0)))
            }
            return .some(StoredBoard(shared: try sharedLog.load(board.logName, after: 0)))
        } catch {
            logger.error("cannot read a board from redis", metadata: ["board": "\(board)", "error": "\(error.message)"])
            core.counters.boardsUnreadable += 1
            server.close(connection, code: 1011, reason: "the hub cannot reach its store; try again")
            return nil
        }
    }

    /// Cluster mode: boards this hub fell behind are read again (on the
    /// service thread, bounded by --redis-timeout); one that cannot be read
    /// is dropped, its clients reconnect.
    func reloadBehind() {
        guard let sharedLog else { return }
        for key in core.takeReloads() {
            let board = BoardAddress(key: key)
            do throws(RedisFailure) {
                let log = try sharedLog.load(board.logName, after: core.boards[key]?.shared.applied ?? 0)
                carryOut(core.handle(.reloaded(board: key, log)))
                logger.notice("read a board's log again", metadata: [
                    "board": "\(board)", "snapshot": "\(log.snapshot == nil ? "none" : "at \(log.snapshotOffset)")",
                    "entries": "\(log.entries.first?.offset ?? 0)...\(log.entries.last?.offset ?? 0)",
                    "applied": "\(core.boards[key]?.shared.applied ?? 0)"])
            } catch {
                logger.error("cannot read a board again from redis", metadata: ["board": "\(board)", "error": "\(error.message)"])
                var dropped: [HubAction] = []
                core.reload(board: key, actions: &dropped)
                carryOut(dropped)
            }
            followHeld(board)
        }
    }

    /// Cluster mode: the shard follower reads `board`'s log from what this
    /// hub applied. Set again on every join: a board loaded afresh (after a
    /// gap) starts from its snapshot, and entries read twice are skipped by offset.
    func followHeld(_ board: BoardAddress) {
        guard let sharedLog, let room = core.boards[board.key] else { return }
        followed[room.logName] = board.key
        sharedLog.shard(of: room.logName).follow(room.logName, board: board.key, after: room.shared.applied)
    }

    /// Cluster mode, each tick: proposals past their deadline are answered
    /// `unavailable`; boards no longer held stop being followed; once a
    /// second the followers get who is here (presence, R4).
    func tickShared(_ sharedLog: SharedLog, nowNanos: UInt64) {
        var expired: [HubAction] = []
        core.expireProposals(actions: &expired)
        carryOut(expired)
        for (logName, board) in followed where !core.holds(board: BoardAddress(key: board)) {
            followed[logName] = nil
            sharedLog.shard(of: logName).unfollow(logName)
        }
        guard nowNanos >= lastPresence + 1_000_000_000 else { return }
        lastPresence = nowNanos
        var perShard: [[String: (clients: Int, names: [String])]] = Array(repeating: [:], count: sharedLog.shards.count)
        for room in core.boards.values {
            perShard[sharedLog.shardIndex(of: room.logName)][room.logName] = (room.members.count, room.localNames)
        }
        for (shard, snapshot) in zip(sharedLog.shards, perShard) { shard.setPresence(snapshot) }
    }

    /// Cluster mode, after each turn of the loop: the turn's proposals and
    /// folds go to their boards' shards, in one batch a shard.
    func submitProposals(to sharedLog: SharedLog) {
        let (proposals, folds) = core.takeProposals()
        guard !proposals.isEmpty || !folds.isEmpty else { return }
        var jobs: [[SharedLogShard.Job]] = Array(repeating: [], count: sharedLog.shards.count)
        for proposal in proposals { jobs[sharedLog.shardIndex(of: proposal.logName)].append(.propose(proposal)) }
        for (shard, batch) in zip(sharedLog.shards, jobs) { shard.submit(batch) }
        for fold in folds { sharedLog.shard(of: fold.logName).submitFolds([fold]) }
    }

    /// Cluster mode: the shards' threads hand their news to the service thread.
    func attachSharedLog() {
        guard let sharedLog else { return }
        for shard in sharedLog.shards {
            shard.deliver = { [weak self] news in
                guard let self else { return }
                server.post { [self] in
                    for item in news {
                        switch item {
                        case let .appended(board, number, result):
                            carryOut(core.handle(.appended(board: board, number: number, result: result)))
                        case let .entries(board, entries):
                            logger.trace("log entries", metadata: ["board": "\(board)", "first": "\(entries.first?.offset ?? 0)",
                                                                   "last": "\(entries.last?.offset ?? 0)", "applied": "\(core.boards[board]?.shared.applied ?? 0)",
                                                                   "held": "\(core.boards[board] != nil)"])
                            if let first = entries.first, let applied = core.boards[board]?.shared.applied, first.offset > applied + 1 {
                                logger.notice("this hub fell behind a board's log; reading it again",
                                              metadata: ["board": "\(board)", "applied": "\(applied)", "next": "\(first.offset)"])
                            }
                            carryOut(core.handle(.sequenced(board: board, entries: entries)))
                        case let .presence(board, clients, names):
                            carryOut(core.handle(.presence(board: board, clients: clients, names: names)))
                        case let .folded(board, offset):
                            carryOut(core.handle(.folded(board: board, offset: offset)))
                        case let .head(board, epoch, lost):
                            if lost { logger.error("a board's log in redis lost history this hub applied", metadata: ["board": "\(board)"]) }
                            carryOut(core.handle(.logHead(board: board, epoch: epoch, lost: lost)))
                        }
                    }
                    // Answers so far leave now, not after the reads of Redis below.
                    server.writeHeldReplies()
                    reloadBehind()
                    carryOut(core.publishChanged())
                }
            }
        }
        sharedLog.start()
    }
}
