import BoardCRDT
import Foundation
import SyncWire

/// Cluster mode in the core (`Sequencing.shared`): proposals out, the
/// log's answers and entries in. The core never knows which engine keeps
/// the log; the shell hands proposals to it and its answers back.
extension HubCore {
    var isShared: Bool {
        if case .shared = sequencing { return true }
        return false
    }

    var sharedHubID: String {
        if case let .shared(settings) = sequencing { return settings.hubID }
        return ""
    }

    /// This hub's id for the console (docs/ADMIN.md): its `--hub-id` in a
    /// cluster, `hub` on its own.
    var hubID: String { isShared ? sharedHubID : "hub" }

    /// How this hub's entries start (`KindRoom.entryJSON`); hub ids are plain ASCII, nothing to escape.
    var sharedEntryPrefix: [UInt8] { Array("{\"h\":\"\(sharedHubID)\",\"n\":".utf8) }

    var sharedFoldEvery: UInt64 {
        if case let .shared(settings) = sequencing { return max(1, settings.foldEvery) }
        return .max
    }

    private var sharedTimeout: UInt64 {
        if case let .shared(settings) = sequencing { return settings.timeoutNanos }
        return 0
    }

    /// Queues `entry` for `room`'s log; `waiting` is answered when the entry
    /// is confirmed and applied (or `unavailable` at its deadline).
    /// `logKey`: the key the log deduplicates by (a client's key is `k:KEY`).
    /// `body`: the entry's JSON for the proposal number it is given.
    mutating func propose(_ body: (UInt64) -> String, in room: BoardRoom, owner: (replica: ReplicaID, sub: String)? = nil,
                          logKey: String? = nil, waiting: PendingProposal) {
        nextProposal += 1
        let body = body(nextProposal)
        var waiting = waiting
        waiting.deadline = now &+ sharedTimeout
        waiting.body = body
        waiting.logKey = logKey ?? waiting.key.map { "k:" + $0 }
        waiting.owner = owner
        room.shared.proposals[nextProposal] = waiting
        proposalBoards.insert(room.name)
        outboxProposals.append(SharedProposal(board: room.name, logName: room.logName, number: nextProposal, body: body,
                                              key: waiting.logKey, owner: owner, deadline: waiting.deadline, seen: room.shared.seen))
        counters.proposals += 1
    }

    /// Appends `proposal` again (its entry was folded before this hub
    /// applied it): a keyed one learns its answer from the log (`dup`).
    mutating func resubmit(_ number: UInt64, _ proposal: PendingProposal, in room: BoardRoom) {
        var proposal = proposal
        proposal.deadline = now &+ sharedTimeout
        proposal.awaitsKey = false
        proposal.confirmed = false
        proposal.offset = nil
        proposal.retryAt = nil
        room.shared.proposals[number] = proposal
        proposalBoards.insert(room.name)
        outboxProposals.append(SharedProposal(board: room.name, logName: room.logName, number: number, body: proposal.body,
                                              key: proposal.logKey, owner: proposal.owner, deadline: proposal.deadline,
                                              seen: room.shared.seen))
    }

    /// R15: proposes `number` again once the fence or the write-back is
    /// over (its deadline stays: past it, it is answered `unavailable`).
    private mutating func retry(_ number: UInt64, _ proposal: PendingProposal, in room: BoardRoom) {
        var proposal = proposal
        proposal.retryAt = nil
        room.shared.proposals[number] = proposal
        outboxProposals.append(SharedProposal(board: room.name, logName: room.logName, number: number, body: proposal.body,
                                              key: proposal.logKey, owner: proposal.owner, deadline: proposal.deadline,
                                              seen: room.shared.seen))
    }

    mutating func fold(_ fold: SharedFold) {
        outboxFolds.append(fold)
    }

    /// The log's answer to one of this hub's proposals.
    mutating func appended(board: String, number: UInt64, result: SharedAppendResult, actions: inout [HubAction]) {
        guard let room = boards[board], var proposal = room.shared.proposals[number] else { return }
        switch result {
        case .appended, .fenced, .lost: break
        default:
            // Not in the log from here: later intents are checked without it.
            room.speculation.settle(number, of: proposal.connection)
        }
        switch result {
        case let .appended(offset, epoch):
            if !room.shared.epoch.isEmpty, room.shared.epoch != epoch {
                // The log lost the history this hub applied (its server
                // restarted without it): offsets start again.
                counters.sharedHistoryLost += 1
                drop(room, code: 1012, reason: "the board's shared log lost its history; reconnect", actions: &actions)
                return
            }
            if room.shared.epoch.isEmpty { room.shared.epoch = epoch }
            if var reply = proposal.reply {
                room.shared.proposals[number] = nil
                if let outcome = proposal.replicaAnswer, let own = proposal.replica {
                    reply = outcome.frame(ref: proposal.ref, have: room.durableSeq(of: own))
                }
                if !proposal.isOpening { actions.append(.send(connection: proposal.connection, frame: reply)) }
            } else {
                proposal.confirmed = true
                proposal.offset = offset
                room.shared.proposals[number] = proposal
            }
        case let .duplicate(seen):
            room.shared.proposals[number] = nil
            if proposal.isOpening {
                // Another hub made the opening: it arrives through the log.
                return
            }
            guard let key = proposal.key else { return }
            counters.keyedResends += 1
            let offset = seen.hasPrefix("@") ? UInt64(seen.dropFirst()) : nil
            if case let .answered(answer)? = room.keys[key] {
                actions.append(.send(connection: proposal.connection, frame: answer.frame(ref: proposal.ref)))
            } else if let answer = KeyedAnswerText.decode(seen) {
                for waiter in room.keys.answer(key, with: answer) {
                    actions.append(.send(connection: waiter.connection, frame: answer.frame(ref: waiter.ref)))
                }
                actions.append(.send(connection: proposal.connection, frame: answer.frame(ref: proposal.ref)))
            } else if let offset, offset > room.shared.applied {
                // Its first use is in the log ahead of this hub: answered when applied.
                proposal.awaitsKey = true
                room.shared.proposals[number] = proposal
            } else {
                unavailable(proposal, in: room, actions: &actions)
            }
        case .notOwner:
            room.shared.proposals[number] = nil
            actions.append(.send(connection: proposal.connection, frame: HubMessage.error(ProtocolError(
                "not_your_replica", "this replica id belongs to someone else on this board; pick a fresh random id"),
                ref: proposal.ref, have: proposal.replica.map { room.durableSeq(of: $0) })))
        case .failed:
            room.shared.proposals[number] = nil
            unavailable(proposal, in: room, actions: &actions)
        case let .fenced(milliseconds):
            // R15: the server came back moments ago; the hubs that hold its
            // boards write back what it lost first. Proposed again after.
            proposal.retryAt = now &+ milliseconds * 1_000_000
            room.shared.proposals[number] = proposal
        case let .lost(head):
            // R15: the log no longer holds what this hub applied: written
            // back first, then proposed again on top of it.
            proposal.retryAt = .max
            room.shared.proposals[number] = proposal
            if head.top >= room.shared.applied {
                // It holds as much or more, and not what this hub applied
                // (another entry there, another epoch): another history.
                noteLoss(room)
                cannotWriteBack(room, because: "the log holds another history at or past offset \(room.shared.applied)",
                                actions: &actions)
            } else {
                historyLost(room, head: head, actions: &actions)
            }
        }
        if room.shared.proposals.isEmpty { proposalBoards.remove(board) }
    }

    /// Entries of a board's log, in order, as the log hands them over.
    mutating func sequenced(board: String, entries: [SharedLogEntry], actions: inout [HubAction]) {
        guard let room = boards[board] else { return }
        if let next = entries.first(where: { $0.offset > room.shared.applied }), next.offset == room.shared.applied + 1,
           let prev = next.prev, prev != room.shared.link {
            // R15: what follows this hub's last entry in the log is not what
            // it applied: the log went back and was written on by a hub that
            // never saw the lost part. Nothing of it is applied here.
            noteLoss(room)
            cannotWriteBack(room, because: "the log went back past offset \(room.shared.applied) and holds other entries after it",
                            actions: &actions)
            return
        }
        if !room.applyShared(entries, core: &self, actions: &actions) {
            // A fold trimmed the log past this hub: the shell reads the board
            // again (`takeReloads`, `.reloaded`); its thin clients stay and see
            // the newer state, its replica clients reconnect for a fresh sync
            // (their relays would miss what was folded).
            catchUp(board, actions: &actions)
        }
    }

    /// What the follower saw of a board's log (each second, and at once
    /// when its server is reached again): a log that went below what this
    /// hub applied, or has another epoch, lost history (R15).
    mutating func logHead(board: String, head: SharedLogHead, lost: Bool, actions: inout [HubAction]) {
        guard let room = boards[board] else { return }
        if room.shared.epoch.isEmpty, !head.epoch.isEmpty, !lost { room.shared.epoch = head.epoch }
        let gone = head.epoch.isEmpty ? room.shared.applied > 0 : (!room.shared.epoch.isEmpty && head.epoch != room.shared.epoch)
        if lost || gone {
            historyLost(room, head: head, actions: &actions)
            return
        }
        // A snapshot past this hub that nothing brings it to (another hub
        // wrote the board back and the stream went, R15): read it, when a
        // second went by without this hub applying anything.
        let stuck = room.shared.headSeenAt == room.shared.applied
        room.shared.headSeenAt = room.shared.applied
        if stuck, head.snap > room.shared.applied, head.top > room.shared.applied, loads[board] == nil {
            catchUp(board, actions: &actions)
        }
    }

    /// R15: a server came back: every key this hub remembers of its boards
    /// there goes to their logs (each only where the log has none), since a
    /// log written back by another hub holds only that hub's keys; then the
    /// follower hears that this hub's part is asked for.
    mutating func serverReached(_ server: String, boards keys: [String], actions: inout [HubAction]) {
        for key in keys {
            guard let room = boards[key] else { continue }
            let answers = room.rememberedAnswers()
            if !answers.isEmpty { actions.append(.store(.keepKeys(logName: room.logName, answers: answers))) }
        }
        actions.append(.store(.serverChecked(server: server)))
    }

    /// R15: the log of `room`'s board lost entries this hub applied. When
    /// what it holds now is a part of this hub's history (it went back and
    /// nothing else was written on it), the board is written back whole at
    /// the offset this hub applied: versions go on above the highest shown,
    /// and every hub behind reads it from there. Otherwise it cannot be,
    /// and the board is dropped (logged).
    private mutating func historyLost(_ room: BoardRoom, head: SharedLogHead, actions: inout [HubAction]) {
        guard !room.shared.writingBack, now >= room.shared.writeBackAfter else { return }
        noteLoss(room)
        writeBack(room, over: head, actions: &actions)
    }

    /// Counts a loss once, however many answers and heads say it again.
    private mutating func noteLoss(_ room: BoardRoom) {
        guard !room.shared.lossNoticed else { return }
        room.shared.lossNoticed = true
        counters.sharedHistoryLost += 1
    }

    private mutating func writeBack(_ room: BoardRoom, over head: SharedLogHead, actions: inout [HubAction]) {
        let shared = room.shared
        let sameHistory = head.epoch.isEmpty || shared.epoch.isEmpty || head.epoch == shared.epoch
        guard head.top < shared.applied else {
            if sameHistory, head.top > shared.applied || head.last == shared.link {
                // The log is at or past this hub (another hub wrote back
                // more, or it moved on): nothing of its own to write but the
                // keys it remembers, which the writing hub may not (it
                // restarted since); the next read or append says whether
                // the log follows what was applied.
                if room.shared.lossNoticed {
                    let answers = room.rememberedAnswers()
                    if !answers.isEmpty { actions.append(.store(.keepKeys(logName: room.logName, answers: answers))) }
                }
                room.shared.lossNoticed = false
                resumeProposals(room, actions: &actions)
            } else {
                cannotWriteBack(room, because: "the log holds another history at offset \(head.top) (epoch \(head.epoch))",
                                actions: &actions)
            }
            return
        }
        let isPart = head.top == 0 ? head.epoch.isEmpty || head.last == 0 : shared.links.link(at: head.top) == head.last
        guard sameHistory, isPart else {
            cannotWriteBack(room, because: head.top == 0 || !sameHistory
                                ? "the log holds another history (epoch \(head.epoch), this hub applied \(shared.epoch))"
                                : "the log holds an entry at offset \(head.top) this hub did not apply, or one older than it remembers",
                            actions: &actions)
            return
        }
        room.shared.writingBack = true
        actions.append(.report(HubReport(level: .error,
                                         message: "redis lost entries \(head.top + 1)...\(shared.applied) of the board's log "
                                             + "(it went back); writing back the board as this hub holds it", board: room.name)))
        actions.append(.store(.restore(room.writeBack(over: head))))
    }

    /// R15: what this hub applied cannot be written back: the board is
    /// dropped (its clients reconnect and read it as the log holds it).
    private mutating func cannotWriteBack(_ room: BoardRoom, because reason: String, actions: inout [HubAction]) {
        counters.sharedNotWrittenBack += 1
        actions.append(.report(HubReport(level: .error, message: "redis lost entries of the board's log that this hub cannot write back: "
                                             + reason + "; the board is read again as Redis holds it", board: room.name)))
        drop(room, code: 1012, reason: "the board's shared log lost its history; reconnect", actions: &actions)
    }

    /// The log's answer to a write-back (`writeBack`).
    mutating func restored(board: String, result: SharedRestoreResult, actions: inout [HubAction]) {
        guard let room = boards[board], room.shared.writingBack else { return }
        room.shared.writingBack = false
        switch result {
        case .restored:
            counters.sharedWrittenBack += 1
            room.shared.lossNoticed = false
            // The snapshot written holds every answer this hub kept.
            room.shared.foldOffered = room.shared.applied
            room.shared.answersSinceFold.removeAll()
            // A fold queued before it is answered 'behind' (the write-back's snapshot): not another hub's.
            room.shared.foldsElsewhere = false
            actions.append(.report(HubReport(level: .notice, message: "wrote the board back into redis up to offset \(room.shared.applied)",
                                             board: room.name)))
            resumeProposals(room, actions: &actions)
        case let .moved(head):
            // Another hub wrote back first, or the log moved on: look again.
            writeBack(room, over: head, actions: &actions)
        case .failed:
            // Tried again when the follower next sees the log's head, not at
            // once (each try writes the whole board); held proposals keep
            // waiting, within their deadlines.
            room.shared.writeBackAfter = now &+ 1_000_000_000
        }
    }

    /// Proposals held for a write-back go again.
    private mutating func resumeProposals(_ room: BoardRoom, actions: inout [HubAction]) {
        for (number, proposal) in room.shared.proposals.sorted(by: { $0.key < $1.key }) where proposal.retryAt == .max {
            retry(number, proposal, in: room)
        }
    }

    /// A board read again after this hub fell behind its log (`catchUp`).
    mutating func reloaded(board: String, from log: SharedBoard, actions: inout [HubAction]) {
        guard let room = boards[board] else { return }
        if log.snapshot != nil {
            // Relays skipped what the snapshot folded: replica clients sync again.
            for connection in room.replicaMembers {
                actions.append(.close(connection: connection, code: 1012, reason: "this hub fell behind the board's shared log; reconnect"))
            }
        }
        if !room.reloadShared(log, core: &self, actions: &actions) {
            drop(room, code: 1012, reason: "this hub fell behind the board's shared log; reconnect", actions: &actions)
        }
    }

    /// Who is on a board on the other hubs (R4).
    mutating func presence(board: String, clients: Int, names: [String]) {
        guard let room = boards[board], room.shared.remoteClients != clients || room.shared.remoteNames != names else { return }
        room.shared.remoteClients = clients
        room.shared.remoteNames = names
        markForPublish(room)
    }

    /// Answers `unavailable` to proposals the log has not confirmed in time
    /// (R8): not known, so a keyed resend learns the truth later.
    mutating func expireProposals(actions: inout [HubAction]) {
        guard !proposalBoards.isEmpty else { return }
        for board in proposalBoards {
            guard let room = boards[board] else { proposalBoards.remove(board); continue }
            // In proposal order: a connection's changes go to the log in the
            // order it sent them, also when they are proposed again.
            for (number, proposal) in room.shared.proposals.sorted(by: { $0.key < $1.key }) {
                if now >= proposal.deadline {
                    room.shared.proposals[number] = nil
                    room.speculation.settle(number, of: proposal.connection)
                    counters.proposalsTimedOut += 1
                    unavailable(proposal, in: room, actions: &actions)
                } else if let at = proposal.retryAt, at <= now {
                    // R15: its server's fence is over.
                    retry(number, proposal, in: room)
                }
            }
            if room.shared.proposals.isEmpty { proposalBoards.remove(board) }
        }
    }

    /// Answers `proposal` `unavailable` (not known); the caller removed it.
    mutating func answerUnavailable(_ proposal: PendingProposal, in room: BoardRoom, actions: inout [HubAction]) {
        unavailable(proposal, in: room, actions: &actions)
    }

    private mutating func unavailable(_ proposal: PendingProposal, in room: BoardRoom, actions: inout [HubAction]) {
        counters.answeredUnavailable += 1
        // A freeze not known to be in the log: refuse as the log says so far.
        if proposal.freeze != nil { room.frozen = room.durableFrozen }
        if proposal.isOpening {
            room.openingInFlight = false
            markForPublish(room)
            return
        }
        let message = "the hub cannot reach its store; try again"
        if let own = proposal.replica {
            actions.append(.send(connection: proposal.connection, frame: HubMessage.error(
                ProtocolError("unavailable", message), ref: proposal.ref, have: room.durableSeq(of: own))))
            return
        }
        let frame = { (ref: String?) in HubMessage.rejected(ref: ref, code: "unavailable", message: message) }
        actions.append(.send(connection: proposal.connection, frame: frame(proposal.ref)))
        if let key = proposal.key {
            for waiter in room.keys.abandon(key) { actions.append(.send(connection: waiter.connection, frame: frame(waiter.ref))) }
        }
    }

    /// Closes every connection of `room` and forgets it: it is loaded again
    /// from the log on the next join.
    mutating func drop(_ room: BoardRoom, code: UInt16, reason: String, actions: inout [HubAction]) {
        // Proposals in flight are "not known": said before the close, so a
        // client resends them (keyed ones take effect at most once).
        for proposal in room.shared.proposals.values { unavailable(proposal, in: room, actions: &actions) }
        room.shared.proposals.removeAll()
        for connection in room.members.keys {
            actions.append(.close(connection: connection, code: code, reason: reason))
            boardOf[connection] = nil
        }
        forget(room, actions: &actions)
    }
}
