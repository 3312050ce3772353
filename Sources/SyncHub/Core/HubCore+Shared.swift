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
                                              key: waiting.logKey, owner: owner, deadline: waiting.deadline))
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
        room.shared.proposals[number] = proposal
        proposalBoards.insert(room.name)
        outboxProposals.append(SharedProposal(board: room.name, logName: room.logName, number: number, body: proposal.body,
                                              key: proposal.logKey, owner: proposal.owner, deadline: proposal.deadline))
    }

    mutating func fold(_ fold: SharedFold) {
        outboxFolds.append(fold)
    }

    /// The log's answer to one of this hub's proposals.
    mutating func appended(board: String, number: UInt64, result: SharedAppendResult, actions: inout [HubAction]) {
        guard let room = boards[board], var proposal = room.shared.proposals[number] else { return }
        if case .appended = result {} else {
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
        }
        if room.shared.proposals.isEmpty { proposalBoards.remove(board) }
    }

    /// Entries of a board's log, in order, as the log hands them over.
    mutating func sequenced(board: String, entries: [SharedLogEntry], actions: inout [HubAction]) {
        guard let room = boards[board] else { return }
        if !room.applyShared(entries, core: &self, actions: &actions) {
            // A fold trimmed the log past this hub: the shell reads the board
            // again (`takeReloads`, `.reloaded`); its thin clients stay and see
            // the newer state, its replica clients reconnect for a fresh sync
            // (their relays would miss what was folded).
            catchUp(board, actions: &actions)
        }
    }

    /// What the follower saw of a board's log each second: a new epoch, or a
    /// last offset below what it read (a failover to a replica that was
    /// behind, a flush), means the history this hub applied is gone.
    mutating func logHead(board: String, epoch: String, lost: Bool, actions: inout [HubAction]) {
        guard let room = boards[board] else { return }
        if room.shared.epoch.isEmpty, !epoch.isEmpty, !lost { room.shared.epoch = epoch }
        guard lost || (!room.shared.epoch.isEmpty && !epoch.isEmpty && epoch != room.shared.epoch) else { return }
        counters.sharedHistoryLost += 1
        drop(room, code: 1012, reason: "the board's shared log lost its history; reconnect", actions: &actions)
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
            for (number, proposal) in room.shared.proposals where now >= proposal.deadline {
                room.shared.proposals[number] = nil
                room.speculation.settle(number, of: proposal.connection)
                counters.proposalsTimedOut += 1
                unavailable(proposal, in: room, actions: &actions)
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
