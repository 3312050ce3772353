import BoardCRDT
import Foundation
import SyncWire

/// Cluster mode (`Sequencing.shared`): the board's order is its shared log.
/// The hub prepares a thin intent against the state it shows (drawing any
/// randomness there), proposes the resulting change, and answers once the
/// log has confirmed it and the hub has applied it at its place; every hub
/// applies every entry the same way, so all show one state per version.
extension KindRoom {
    typealias Entry = SharedEntry<Kind.Change>

    /// A thin client's intent on a shared board.
    func proposeIntent(_ intent: Kind.Intent, ref: String?, key: String?, by connection: UInt64,
                       core: inout HubCore, actions: inout [HubAction]) {
        if let key, answeredAlready(key, ref: ref, connection: connection, core: &core, actions: &actions) { return }
        let author = members[connection]?.actingName ?? ""
        var entry = Entry(hub: core.sharedHubID, number: 0, author: author, key: key)
        entry.sub = members[connection]?.grant?.sub
        do {
            // Checked against what this hub's clients will see once their
            // changes in flight are applied: a client's second intent builds
            // on its first (select, then move what it selected), as on a
            // single hub. The log's order still decides (apply at its place).
            if let change = try Kind.prepare(intent, by: author, in: speculativeState(of: connection)) {
                entry.change = change
                speculate(change, by: author, number: core.nextProposal + 1, of: connection)
            } else if let change = try Kind.prepare(intent, by: author, in: replica.state) {
                // Nothing to change only because of this hub's own changes in
                // flight: whether those take effect is the log's to say, so
                // this change goes too and is applied (or found unchanged)
                // at its place.
                entry.change = change
                speculate(change, by: author, number: core.nextProposal + 1, of: connection)
            } else if key == nil {
                // Nothing to change on the state shown at `durableVersion`:
                // acknowledged with that version, under which it holds.
                actions.append(.send(connection: connection, frame: HubMessage.ack(ref: ref, version: durableVersion,
                                                                                    members: Kind.ackMembers(for: nil))))
                return
            } else {
                // The same, recorded in the log so a resend anywhere gets it.
                entry.noop = true
                entry.basedOn = durableVersion
            }
        } catch {
            core.counters.operationsRefused += 1
            guard key != nil else {
                noteRefused(intent, code: error.code, by: members[connection], core: core)
                actions.append(.send(connection: connection, frame: HubMessage.rejected(ref: ref, code: error.code, message: error.message,
                                                                                         members: Kind.refusalMembers(error))))
                return
            }
            let members = Kind.refusalMembers(error)
            entry.refusal = [error.code, error.message] + (members.isEmpty ? [] : [members])
        }
        var waiting = PendingProposal(connection: connection, ref: ref, deadline: 0, key: key)
        waiting.entry = entry
        core.propose({ Self.entryJSON(entry, number: $0) }, in: self, waiting: waiting)
    }

    /// A replica client's operations on a shared board: checked here (its
    /// own, under its name), proposed, answered with `have` once applied.
    func proposeOperations(_ operations: [Op], ref: String?, from connection: UInt64, core: inout HubCore, actions: inout [HubAction]) {
        guard let (member, own) = ownReplica(for: operations, ref: ref, from: connection, actions: &actions) else { return }
        var entry = Entry(hub: core.sharedHubID, number: 0, operations: operations, replica: own)
        entry.sub = member.grant?.sub
        // Its next frames see them (an `editing` of the item it just added), as a thin client's do.
        for operation in operations { speculate(operation.change, by: operation.author, number: core.nextProposal + 1, of: connection) }
        var waiting = PendingProposal(connection: connection, ref: ref, deadline: 0, replica: own)
        waiting.entry = entry
        core.propose({ Self.entryJSON(entry, number: $0) }, in: self, owner: member.grant.map { (own, $0.sub) }, waiting: waiting)
    }

    /// The kind's opening (a first deal) on a shared board: proposed once
    /// per board across the cluster (a fixed key), shown once applied.
    func proposeOpening(core: inout HubCore) {
        guard isUnplayed, shared.applied == 0, let opening = Kind.opening else { return }
        guard let change = try? Kind.prepare(opening, by: "", in: replica.state) else { return }
        openingInFlight = true
        let entry = Entry(hub: core.sharedHubID, number: 0, author: "", change: change)
        core.propose({ Self.entryJSON(entry, number: $0) }, in: self, logKey: "opening",
                     waiting: PendingProposal(connection: 0, ref: nil, deadline: 0, isOpening: true))
    }

    /// The applied state with `connection`'s own thin changes still in
    /// flight applied on top, in the order they were proposed.
    func speculativeState(of connection: UInt64) -> Kind.State {
        guard let pending = speculation.changes[connection] else { return replica.state }
        var state = replica.state
        var index: UInt64 = 0
        for proposed in pending where shared.proposals[proposed.number] != nil {
            guard let change = proposed.change as? Kind.Change else { continue }
            index += 1
            _ = Kind.apply(Op(id: OperationID(replica: replica.id, seq: replica.nextSeq + index - 1), lamport: replica.clock + index,
                              author: proposed.author, change: change), to: &state)
        }
        return state
    }

    /// A thin change `connection` proposed just now: its next intents are checked with it applied.
    private func speculate(_ change: Kind.Change, by author: String, number: UInt64, of connection: UInt64) {
        speculation.changes[connection, default: []].append((number, author, change))
    }

    /// The proposal number of an entry this hub wrote (`{"h":"HUB","n":N`
    /// is how `entryJSON` starts), or nil for another hub's.
    static func ownNumber(in body: [UInt8], prefix: [UInt8]) -> UInt64? {
        guard body.count > prefix.count, body.starts(with: prefix) else { return nil }
        var number: UInt64 = 0
        var index = prefix.count
        while index < body.count, body[index] >= 48, body[index] <= 57 {
            let (times, overflow) = number.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            number = times + UInt64(body[index] - 48)
            index += 1
        }
        guard index > prefix.count, index < body.count, body[index] == 44 || body[index] == 125 else { return nil }
        return number
    }

    /// An entry another hub wrote (`entryJSON`) read by hand, its change by
    /// the kind's `scanChange` when it has one: every hub reads every other
    /// hub's entries, and `JSONDecoder` was a fifth of a busy hub's time.
    /// Nil when something in it is not what `entryJSON` writes: then
    /// `JSONDecoder` reads it (or refuses it) as before.
    static func readEntry(_ body: [UInt8], decoder: JSONDecoder) -> Entry? {
        body.withUnsafeBytes { bytes -> Entry? in
            guard let fields = JSONFields(bytes) else { return nil }
            var hub: String?, number: UInt64?
            var entry = Entry(hub: "", number: 0)
            for (key, range) in fields.members {
                switch key {
                case "h": hub = fields.string(range)
                case "n": number = fields.unsigned(range)
                case "a": guard let author = fields.string(range) else { return nil }; entry.author = author
                case "k": guard let key = fields.string(range) else { return nil }; entry.key = key
                case "c":
                    let slice = fields.slice(range)
                    if let nested = JSONFields(slice), let change = Kind.scanChange(nested) {
                        entry.change = change
                    } else {
                        guard let change = try? decoder.decode(Kind.Change.self, from: Data(slice)) else { return nil }
                        entry.change = change
                    }
                case "ops":
                    guard let operations = try? decoder.decode([Op].self, from: Data(fields.slice(range))) else { return nil }
                    entry.operations = operations
                case "r": guard let replica = fields.unsigned(range) else { return nil }; entry.replica = ReplicaID(replica)
                case "x": guard let refusal = fields.strings(range) else { return nil }; entry.refusal = refusal
                case "z": guard let noop = fields.bool(range) else { return nil }; entry.noop = noop
                case "b": guard let basedOn = fields.unsigned(range) else { return nil }; entry.basedOn = basedOn
                case "f": guard let frozen = fields.bool(range) else { return nil }; entry.frozen = frozen
                default: return nil
                }
            }
            guard let hub, let number else { return nil }
            entry.hub = hub
            entry.number = number
            return entry
        }
    }

    /// `entry` as the log keeps it (`SharedEntry`'s keys), written by hand
    /// with the kind's own change and operation JSON: this runs once per
    /// change on the service thread.
    static func entryJSON(_ entry: Entry, number: UInt64) -> String {
        var out = "{\"h\":"
        HubMessage.appendJSONString(entry.hub, to: &out)
        out += ",\"n\":\(number)"
        if let author = entry.author {
            out += ",\"a\":"
            HubMessage.appendJSONString(author, to: &out)
        }
        if let sub = entry.sub {
            out += ",\"s\":"
            HubMessage.appendJSONString(sub, to: &out)
        }
        if let key = entry.key {
            out += ",\"k\":"
            HubMessage.appendJSONString(key, to: &out)
        }
        if let change = entry.change { out += ",\"c\":" + Kind.changeJSON(change) }
        if let operations = entry.operations {
            out += ",\"ops\":["
            for (index, operation) in operations.enumerated() {
                if index > 0 { out += "," }
                out += Kind.operationJSON(operation)
            }
            out += "]"
        }
        if let replica = entry.replica { out += ",\"r\":\(replica.rawValue)" }
        if let refusal = entry.refusal {
            out += ",\"x\":["
            for (index, text) in refusal.enumerated() {
                if index > 0 { out += "," }
                HubMessage.appendJSONString(text, to: &out)
            }
            out += "]"
        }
        if entry.noop == true { out += ",\"z\":true" }
        if let basedOn = entry.basedOn { out += ",\"b\":\(basedOn)" }
        if let frozen = entry.frozen { out += ",\"f\":\(frozen)" }
        return out + "}"
    }

    /// Applies the log's entries in order. Returns false when they do not
    /// follow what this hub applied (the log was trimmed past it, or lost):
    /// the board must be loaded again.
    func applySharedEntries(_ entries: [SharedLogEntry], core: inout HubCore, actions: inout [HubAction]) -> Bool {
        let decoder = JSONDecoder()
        let ownPrefix = core.sharedEntryPrefix
        var changed = false
        var proposedHere = false
        for logEntry in entries where logEntry.offset > shared.applied {
            guard logEntry.offset == shared.applied + 1 else { return false }
            shared.note(offset: logEntry.offset, link: logEntry.link)
            changed = true
            var entry: Entry
            do {
                // This hub's own entries (most of them on a busy hub) are
                // known already: read only the number their JSON starts with.
                if let number = Self.ownNumber(in: logEntry.body, prefix: ownPrefix),
                   let proposed = shared.proposals[number]?.entry as? Entry {
                    entry = proposed
                    entry.number = number
                } else if let read = Self.readEntry(logEntry.body, decoder: decoder) {
                    entry = read
                } else {
                    entry = try decoder.decode(Entry.self, from: Data(logEntry.body))
                }
            } catch {
                // Every hub skips it alike. Its proposer cannot know which
                // (the hub and number are in it): its deadline answers it.
                core.counters.sharedEntriesUnreadable += 1
                continue
            }
            let mine = entry.hub == core.sharedHubID ? entry.number : nil
            if mine != nil { proposedHere = true }
            if let mine, let connection = shared.proposals[mine]?.connection { speculation.settle(mine, of: connection) }
            // What this entry makes the hub say, in order: relays of its
            // operations, then answers, then notices, then a checkpoint (a
            // replica client sees versions only grow, and an answer after
            // the operations it is about).
            var relays: [HubAction] = []
            var notices: [HubAction] = []
            var answer: KeyedAnswer?
            var reply: String?
            var outcome: MergeOutcome?
            if let change = entry.change {
                let author = entry.author ?? ""
                let upcoming = Op(id: OperationID(replica: replica.id, seq: replica.nextSeq), lamport: replica.clock + 1,
                                  author: author, change: change)
                for notice in Kind.notices(of: upcoming, in: replica.state) { tell(notice, actions: &notices) }
                let operation = replica.record(change, by: author)
                switch replica.outcome(of: operation.id) {
                case let .refused(refusal)?:
                    core.counters.operationsRefused += 1
                    answer = .rejected(code: refusal.code, message: refusal.message, members: Kind.refusalMembers(refusal))
                case .applied?:
                    core.counters.operationsApplied += 1
                    version += 1
                    answer = .ack(version: version, members: Kind.ackMembers(for: operation))
                    if let mine, let proposal = shared.proposals[mine] {
                        noteRef(proposal.ref, about: Kind.noticeSubjects(of: change), from: proposal.connection)
                    }
                case .unchanged?, nil:
                    answer = .ack(version: version, members: Kind.ackMembers(for: operation))
                }
                if !replicaMembers.isEmpty {
                    relays.append(.relay(frame: HubMessage.operations([operation], of: Kind.self, board: address.name, version: version),
                                         to: Array(replicaMembers)))
                }
                openingInFlight = false
            } else if let operations = entry.operations, let own = entry.replica {
                let report = replica.receive(operations)
                core.counters.operationsApplied += UInt64(report.integratedOperations.count)
                core.counters.operationsRestamped += UInt64(report.restamped.count)
                if report.changedState { version += 1 }
                outcome = mergeOutcome(report, core: &core)
                reply = outcome?.frame(ref: nil, have: replica.versions[own])
                if !report.integratedOperations.isEmpty, !replicaMembers.isEmpty {
                    // The author gets its operations back only when one was re-stamped.
                    let author = mine.flatMap { shared.proposals[$0]?.connection }
                    let to = report.restamped.isEmpty ? replicaMembers.filter { $0 != author } : Array(replicaMembers)
                    if !to.isEmpty {
                        relays.append(.relay(frame: HubMessage.operations(report.integratedOperations, of: Kind.self, board: address.name,
                                                                          version: version), to: to))
                    }
                }
            } else if let freeze = entry.frozen {
                // O7: every hub freezes (or thaws) the board at this place in the log.
                // Judged on what the log said so far, alike on every hub.
                if durableFrozen != freeze { version += 1 }
                frozen = freeze
                durableFrozen = freeze
                answer = .ack(version: version)
            } else if let refusal = entry.refusal, (2...3).contains(refusal.count) {
                answer = .rejected(code: refusal[0], message: refusal[1], members: refusal.count == 3 ? refusal[2] : "")
            } else if entry.noop == true {
                // Nothing to change on the proposing hub's state at version
                // `basedOn`: acknowledged with that version, under which it holds.
                answer = .ack(version: entry.basedOn ?? version, members: Kind.ackMembers(for: nil))
            }
            // For the console (O4): every hub notes every entry alike.
            let proposer = mine.flatMap { shared.proposals[$0]?.connection }.flatMap { members[$0] }
            if let change = entry.change, let answer {
                noteChange(change, by: proposer, sub: entry.sub, hub: entry.hub, name: entry.author ?? "", answer: answer, core: core)
            } else if let operations = entry.operations, !operations.isEmpty {
                activity.note(BoardActivity.Change(at: core.now, sub: proposer?.grant?.sub ?? entry.sub, name: proposer?.actingName ?? "",
                                                   hub: entry.hub, operations: operations.count, answer: "ack", version: version))
            } else if case let .rejected(code, _, _)? = answer {
                // A keyed intent refused where it was prepared: its frame stayed there.
                activity.note(BoardActivity.Change(at: core.now, sub: proposer?.grant?.sub ?? entry.sub, name: entry.author ?? "",
                                                   hub: entry.hub, answer: code, version: version))
            }
            var replies: [HubAction] = []
            if let key = entry.key, let answer {
                for waiter in keys.answer(key, with: answer) {
                    replies.append(.send(connection: waiter.connection, frame: answer.frame(ref: waiter.ref)))
                }
                for (number, proposal) in shared.proposals where proposal.awaitsKey && proposal.key == key {
                    shared.proposals[number] = nil
                    replies.append(.send(connection: proposal.connection, frame: answer.frame(ref: proposal.ref)))
                }
                // Kept until a stored snapshot covers them (`folded`), so a
                // fold that fails or loses its lease drops none of them.
                shared.answersSinceFold.append((logEntry.offset, key, answer))
                if shared.answersSinceFold.count > SharedProgress.maxAnswersKept {
                    shared.answersSinceFold.removeFirst(shared.answersSinceFold.count - SharedProgress.maxAnswersKept)
                }
            }
            if let mine, var proposal = shared.proposals[mine] {
                let frame = reply.map { Self.withRef($0, proposal.ref) } ?? answer?.frame(ref: proposal.ref)
                if proposal.confirmed || frame == nil {
                    shared.proposals[mine] = nil
                    if let frame, !proposal.isOpening { replies.append(.send(connection: proposal.connection, frame: frame)) }
                } else {
                    proposal.reply = frame
                    // An answer to operations (ack or error) sent later says
                    // `have` as it is then: answers of later entries, sent at
                    // once, may have told the client more meanwhile.
                    if proposal.replica != nil { proposal.replicaAnswer = outcome }
                    shared.proposals[mine] = proposal
                }
            }
            actions += relays
            actions += replies
            actions += notices
            if replica.checkpoint.frontier != shared.frontier {
                // The engine compacted, alike on every hub: forget idle
                // replicas alike too (nothing local decides), and hand replica
                // clients the checkpoint.
                shared.frontier = replica.checkpoint.frontier
                core.counters.replicasForgotten += UInt64(replica.forgetReplicas(beyond: core.limits.maxReplicasPerBoard, keeping: []))
                durableCheckpoint = replica.checkpoint
                if !replicaMembers.isEmpty,
                   let frame = try? HubMessage.checkpoint(replica.checkpoint, board: address.name, version: version) {
                    actions.append(.relay(frame: frame, to: Array(replicaMembers)))
                }
            }
        }
        guard changed else { return true }
        durableState = replica.state
        durableCheckpoint = replica.checkpoint
        durableVersion = version
        core.markForPublish(self)
        // The hub whose own entries brought the board to a fold offers it
        // (one hub writes the snapshot, not every hub); the others only
        // when three folds' worth went by without one from here, in case
        // the proposing hub stopped (the lease decides between offers). A
        // hub that found another folding (its lease) waits as the others
        // do: where every hub proposes, the lease holder folds and the rest
        // do not write snapshots the lease would refuse.
        let sinceFold = shared.applied - min(shared.applied, shared.foldOffered)
        let mine = proposedHere && !shared.foldsElsewhere
        if sinceFold >= core.sharedFoldEvery, mine || sinceFold >= 3 * core.sharedFoldEvery { offerFold(fallback: !mine, core: &core) }
        return true
    }

    /// Offers the log a snapshot at the offset applied now (R9); the log
    /// takes one hub's at a time and drops the entries before it.
    private func offerFold(fallback: Bool, core: inout HubCore) {
        shared.foldOffered = shared.applied
        let (offset, version, image, frozen) = (shared.applied, version, replica.image, durableFrozen)
        let answers = shared.answersSinceFold.map { (key: "k:" + $0.key, answer: KeyedAnswerText.encode($0.answer)) }
        core.fold(SharedFold(board: name, logName: logName, offset: offset, encode: {
            try Self.snapshotText(offset: offset, version: version, image: image, frozen: frozen)
        }, history: shared.history, answers: answers, fallback: fallback, epoch: shared.epoch, link: shared.link))
    }

    /// R15: the board as this hub holds it, to write back into a log that
    /// went back to `expected` (a part of what this hub applied).
    func writeBackRequest(over expected: SharedLogHead) -> SharedRestore {
        let (offset, version, image, frozen) = (shared.applied, version, replica.image, durableFrozen)
        return SharedRestore(board: name, logName: logName, seen: shared.seen, expected: expected, encode: {
            try Self.snapshotText(offset: offset, version: version, image: image, frozen: frozen).whole
        }, answers: writeBackAnswers())
    }

    /// R15: the first answers of every key this hub remembers (the ones
    /// since its last fold with their offsets, the older ones it still
    /// holds in memory at the write-back's offset): a resend of any of them
    /// after the write-back gets its first answer, never a second effect.
    func writeBackAnswers() -> [(key: String, answer: String, offset: UInt64)] {
        var out = shared.answersSinceFold.map { (key: "k:" + $0.key, answer: KeyedAnswerText.encode($0.answer), offset: $0.offset) }
        let recent = Set(shared.answersSinceFold.map(\.key))
        for (key, answer) in keys.answered where !recent.contains(key) {
            out.append((key: "k:" + key, answer: KeyedAnswerText.encode(answer), offset: shared.applied))
        }
        return out
    }

    /// A `SharedSnapshot` written off the service thread: the operations
    /// (most of it) with the kind's own JSON, the rest with `JSONEncoder`.
    static func snapshotText(offset: UInt64, version: UInt64, image: ReplicaImage<Kind>, frozen: Bool = false) throws -> SnapshotText {
        let encoder = JSONEncoder()
        func json(_ value: some Encodable) throws -> String { String(decoding: try encoder.encode(value), as: UTF8.self) }
        var head = "{\"offset\":\(offset),\"version\":\(version),\"replica\":{\"id\":\(image.id.rawValue),\"clock\":\(image.clock)"
        head += ",\"checkpoint\":" + (try json(image.checkpoint)) + ",\"log\":["
        var tail = "],\"versions\":" + (try json(image.versions)) + ",\"pending\":["
        for (index, operation) in image.pending.enumerated() {
            if index > 0 { tail += "," }
            tail += Kind.operationJSON(operation)
        }
        tail += "],\"lastLamport\":" + (try json(image.lastLamport)) + ",\"retired\":" + (try json(image.retired)) + "}"
        tail += frozen ? ",\"frozen\":true}" : "}"
        let log = image.log
        return SnapshotText(head: head, operations: log.map(\.id), operation: { Kind.operationJSON(log[$0]) }, tail: tail)
    }

    /// The board read again after this hub fell behind a fold: the replica,
    /// version and bookkeeping from the snapshot, then the entries after it.
    /// Members, keys and proposals stay (a proposal whose entry was folded
    /// meanwhile is answered `unavailable` at its deadline; a keyed resend
    /// then finds the answer the fold wrote down).
    func reloadSharedBoard(_ log: SharedBoard, core: inout HubCore, actions: inout [HubAction]) -> Bool {
        guard log.snapshotOffset >= shared.applied || log.snapshot == nil,
              let (fresh, freshVersion, freshFrozen) = try? Self.sharedReplica(log, logName: logName, limits: core.limits) else {
            return false
        }
        // A snapshot below the version shown is of another history (R15):
        // never shown under a version a client saw; the board is read again.
        if log.snapshot != nil, freshVersion < version { return false }
        if log.snapshot != nil {
            replica = fresh
            version = freshVersion
            frozen = freshFrozen
            durableFrozen = freshFrozen
            shared.restart(at: log.snapshotOffset, link: log.snapshotLink)
            shared.foldOffered = log.snapshotOffset
            shared.frontier = fresh.checkpoint.frontier
            shared.answersSinceFold.removeAll { $0.offset <= log.snapshotOffset }
            speculation = Speculation()
            durableState = replica.state
            durableCheckpoint = replica.checkpoint
            durableVersion = version
            core.markForPublish(self)
            // Proposals whose entries the snapshot folded: a keyed one asks
            // the log again (the fold wrote its answer down), an unkeyed one
            // is not known any more.
            for (number, proposal) in shared.proposals {
                guard let offset = proposal.offset, offset <= log.snapshotOffset else { continue }
                if proposal.key != nil, !proposal.isOpening {
                    core.resubmit(number, proposal, in: self)
                } else {
                    shared.proposals[number] = nil
                    core.answerUnavailable(proposal, in: self, actions: &actions)
                }
            }
        }
        return applySharedEntries(log.entries, core: &core, actions: &actions)
    }

    /// Puts the proposal's `ref` into a reply made before it was known.
    static func withRef(_ frame: String, _ ref: String?) -> String {
        guard let ref, frame.hasPrefix("{") else { return frame }
        var out = "{\"ref\":"
        HubMessage.appendJSONString(ref, to: &out)
        return out + "," + frame.dropFirst()
    }

    /// O7 in a cluster: freezing is an entry of the board's log, applied
    /// by every hub at its place; the console's request is answered then.
    func proposeFreezeEntry(_ freeze: Bool, answerTo: UInt64, core: inout HubCore) {
        var entry = Entry(hub: core.sharedHubID, number: 0, author: "")
        entry.frozen = freeze
        frozen = freeze   // refused from now on here; every hub once applied
        var waiting = PendingProposal(connection: answerTo, ref: nil, deadline: 0)
        waiting.freeze = freeze
        core.propose({ Self.entryJSON(entry, number: $0) }, in: self, waiting: waiting)
    }

    /// Loads a shared board: its snapshot (if the log was ever folded);
    /// the entries after it are applied by the caller.
    static func sharedReplica(_ board: SharedBoard, logName: String, limits: HubLimits)
        throws -> (Replica<Kind>, version: UInt64, frozen: Bool) {
        let replicaLimits = ReplicaLimits(keptOperations: limits.keptOperations, maxPending: 0, sealsOrder: true)
        guard let text = board.snapshot else {
            return (Replica<Kind>(id: sharedBoardReplica(logName: logName), limits: replicaLimits), 0, false)
        }
        let snapshot = try JSONDecoder().decode(SharedSnapshot<Kind>.self, from: Data(text.utf8))
        guard snapshot.offset == board.snapshotOffset, let replica = Replica<Kind>(image: snapshot.replica, limits: replicaLimits) else {
            throw StoreError(description: "the snapshot of \(logName) in the shared log is inconsistent (offset \(snapshot.offset), " +
                                          "log says \(board.snapshotOffset))")
        }
        return (replica, snapshot.version, snapshot.frozen ?? false)
    }
}
