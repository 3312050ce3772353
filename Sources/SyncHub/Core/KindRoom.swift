import BoardCRDT
import Foundation
import SyncWire

/// A board of kind `Kind` held by the hub: its replica (which seals the
/// order: an acknowledged operation is final), what of it is durable, and
/// the kind-specific half of the protocol (`KindRoom+Frames.swift`).
///
/// Not final only for its kind's room (`HostedKind.Room`, in
/// `Kinds/NAME/`): a `final` subclass overriding the hot entry points left
/// overridable here (`parse`, `receive`, `committed`, `stateShape`,
/// `durableSeq`, `applyShared`), each calling `super`. A super call names
/// a concrete kind, so the optimiser compiles that entry point and all it
/// calls for the kind (BENCHMARKS.md, "the seam"). Everything else is
/// `final`, `private` or in an extension: never dispatched dynamically.
class KindRoom<Kind: HostedKind>: BoardRoom {
    typealias Op = BoardCRDT.Operation<Kind.Change>

    final var replica: Replica<Kind>
    /// The state after every durable operation: what `state` frames show.
    /// The hub's log only grows at its end (`ReplicaLimits.sealsOrder`), so
    /// applying committed operations in commit order gives exactly it.
    final var durableState: Kind.State
    /// The newest checkpoint the store holds: what a `sync` may send.
    final var durableCheckpoint: Checkpoint<Kind>
    /// The checkpoint frontier last sent to the store.
    private var storedFrontier: Stamp
    /// Per record in flight (oldest first): its operations and checkpoint.
    /// `toAuthor`: the hub re-stamped an operation of the author's, which
    /// gets the record's operations back to move its copy.
    private var inFlight: [(operations: [Op], checkpoint: Checkpoint<Kind>?, toAuthor: Bool)] = []
    private var inFlightHead = 0

    /// Whether the board compacted in memory and the store does not hold
    /// that checkpoint yet: the operations it folded are in neither the
    /// durable checkpoint nor the log, so a `sync` now would miss them.
    final var compactionInFlight: Bool { replica.checkpoint.frontier != durableCheckpoint.frontier }

    required init(address: BoardAddress, hubReplica: ReplicaID, stored: StoredBoard?, limits: HubLimits) throws {
        if let shared = stored?.shared {
            let (replica, version, frozen) = try Self.sharedReplica(shared, logName: address.logName, limits: limits)
            self.replica = replica
            durableState = replica.state
            durableCheckpoint = replica.checkpoint
            storedFrontier = replica.checkpoint.frontier
            super.init(address: address, version: version, limits: limits, hasKeys: false)
            self.shared.restart(at: shared.snapshotOffset, link: shared.snapshotLink)
            self.frozen = frozen
            durableFrozen = frozen
            self.shared.foldOffered = shared.snapshotOffset
            self.shared.epoch = shared.epoch
            self.shared.frontier = replica.checkpoint.frontier
            return
        }
        let replicaLimits = ReplicaLimits(keptOperations: limits.keptOperations, sealsOrder: true)
        let decoder = JSONDecoder()
        var checkpoint = Checkpoint<Kind>.empty
        if let text = stored?.checkpoint, !text.isEmpty {
            checkpoint = try decoder.decode(Checkpoint<Kind>.self, from: Data(text.utf8))
        }
        var replica = Replica<Kind>(id: stored?.hubReplica ?? hubReplica, checkpoint: checkpoint, limits: replicaLimits)
        if let texts = stored?.operations, !texts.isEmpty {
            let operations = try texts.map { try decoder.decode(Op.self, from: Data($0.utf8)) }
            // Stored stamps are final and in order: nothing is re-stamped.
            let report = replica.receive(operations.sorted { $0.stamp < $1.stamp })
            guard report.refused.isEmpty, report.restamped.isEmpty else {
                throw StoreError(description: "board \(address) holds operations that do not replay: " +
                                              "\(report.refused.first.map { "\($0)" } ?? "re-stamped")")
            }
        }
        self.replica = replica
        durableState = replica.state
        // Everything loaded is durable, so a compaction while loading (a
        // smaller --kept-operations than before) gives a durable checkpoint;
        // it is stored with the next record (the frontiers differ).
        durableCheckpoint = replica.checkpoint
        storedFrontier = checkpoint.frontier
        super.init(address: address, version: stored?.version ?? 0, limits: limits, hasKeys: stored?.hasKeys ?? false)
        frozen = stored?.frozen ?? false
        durableFrozen = frozen
    }

    override func parse(_ bytes: UnsafeRawBufferPointer) -> ParsedFrame { parseFrame(bytes) }

    override func receive(_ frame: ParsedFrame, from connection: UInt64, core: inout HubCore, actions: inout [HubAction]) {
        receiveFrame(frame, from: connection, core: &core, actions: &actions)
    }

    override func applyShared(_ entries: [SharedLogEntry], core: inout HubCore, actions: inout [HubAction]) -> Bool {
        applySharedEntries(entries, core: &core, actions: &actions)
    }

    final override func reloadShared(_ log: SharedBoard, core: inout HubCore, actions: inout [HubAction]) -> Bool {
        reloadSharedBoard(log, core: &core, actions: &actions)
    }

    final override func writeBack(over expected: SharedLogHead) -> SharedRestore { writeBackRequest(over: expected) }

    final override func rememberedAnswers() -> [(key: String, answer: String, offset: UInt64)] { writeBackAnswers() }

    final override func proposeFreeze(_ freeze: Bool, answerTo: UInt64, core: inout HubCore) {
        proposeFreezeEntry(freeze, answerTo: answerTo, core: &core)
    }

    final override func freezeRecord(_ frozen: Bool, reply: (connection: UInt64, frame: String)) -> DurableRecord {
        var record = makeRecord([], replies: [reply], author: nil)
        record.frozen = frozen
        return record
    }

    final override var adminOnlyMessage: String { Kind.adminOnlyMessage }

    final override func changeJSON(_ change: any Sendable) -> String? {
        (change as? Kind.Change).map { Kind.changeJSON($0) }
    }

    final override func open(core: inout HubCore) {
        if core.isShared { proposeOpening(core: &core) } else { performOpening(core: &core) }
    }

    /// Whether nobody has played this board yet (no operation, no checkpoint).
    final var isUnplayed: Bool { replica.log.isEmpty && replica.checkpoint.frontier == .origin && version == 0 }

    override func durableSeq(of replica: ReplicaID) -> UInt64 {
        self.replica.versions[replica] - (operationsInFlight[replica] ?? 0)
    }

    /// What a replica client that holds a checkpoint at `frontier` needs:
    /// the durable checkpoint when its own is older, and every durable
    /// operation after the hub's checkpoint (it ignores those it has).
    /// Only while no compaction is in flight (`compactionInFlight`).
    final func catchUp(from frontier: Stamp) -> Delta<Kind> {
        let operations = replica.log.filter { $0.id.seq <= durableSeq(of: $0.id.replica) }
        return Delta(checkpoint: frontier < durableCheckpoint.frontier ? durableCheckpoint : nil, operations: operations)
    }

    override func stateShape() -> StateShape {
        let own = Kind.stateShape(durableState)
        var members = stateHead(room: own.count + 1)  // one allocation, `editing` included
        members += own
        if let editing = editingShape() { members.append(ShapeMember("editing", editing)) }
        return .object(members)
    }

    final override func image(named name: String) -> (type: String, digest: String)? {
        Kind.image(named: name, in: durableState)
    }

    final override func read(_ path: [Substring]) -> (status: UInt32, json: String)? {
        Kind.read(path: path, in: durableState, version: durableVersion)
    }

    final override func editingShape() -> StateShape? {
        guard Kind.tracksEditing else { return nil }
        // An item still on its way to the store may be edited already: shown once durable.
        return .value(editingValue { Kind.editingProblem($0, in: durableState) == nil })
    }

    /// The record of `operations` (integrated just now, in order) for the store.
    final func makeRecord(_ operations: [Op], replies: [(connection: UInt64, frame: String)], author: UInt64?,
                    keyed: (key: String, answer: KeyedAnswer)? = nil, restamped: Bool = false) -> DurableRecord {
        // The JSON is written by the store's thread, when it writes the row.
        let stored = operations.map { op in StoredOperation(id: op.id, lamport: op.lamport) { Kind.operationJSON(op) } }
        inFlight.append((operations, nil, restamped))
        return DurableRecord(board: name, kind: Kind.name, hubReplica: replica.id, operations: stored, version: version,
                             replies: replies, author: author, checkpoint: nil, keyed: keyed)
    }

    final override func checkpointToStore(forgettingBeyond limit: Int, counters: inout HubCounters) -> StoredCheckpoint? {
        guard replica.checkpoint.frontier != storedFrontier else { return nil }
        // The board compacted: forget the least recent replicas beyond the
        // limit before the checkpoint is stored, so neither memory nor the
        // checkpoint grows with every replica ever seen.
        // (The set of replicas to keep is made only when there may be some
        // to forget: not on every change.)
        if replica.versions.entries.count > limit {
            var keep = Set(members.values.compactMap(\.replica))
            keep.formUnion(replicasInFlight)
            counters.replicasForgotten += UInt64(replica.forgetReplicas(beyond: limit, keeping: keep))
        }
        let checkpoint = replica.checkpoint
        storedFrontier = checkpoint.frontier
        inFlight[inFlight.count - 1].checkpoint = checkpoint
        return StoredCheckpoint(frontier: checkpoint.frontier) {
            String(decoding: try JSONEncoder().encode(checkpoint), as: UTF8.self)
        }
    }

    override func committed(_ record: DurableRecord, core: inout HubCore, actions: inout [HubAction],
                            afterReplies: inout [HubAction]) {
        guard inFlightHead < inFlight.count else { return }
        let (operations, checkpoint, toAuthor) = inFlight[inFlightHead]
        inFlightHead += 1
        if inFlightHead == inFlight.count {
            // Not `removeAll(keepingCapacity:)`: that stays generic here
            // (element by element through the type's metadata), `popLast` is specialised.
            while inFlight.popLast() != nil {}
            inFlightHead = 0
        }
        for operation in operations {
            // K9: someone's acknowledged change this one overwrites (TC2):
            // told now that the winner is final.
            for notice in Kind.notices(of: operation, in: durableState) { tell(notice, actions: &afterReplies) }
            _ = Kind.apply(operation, to: &durableState)
        }
        openingInFlight = false
        if record.version > durableVersion || !operations.isEmpty {
            durableVersion = max(durableVersion, record.version)
            core.markForPublish(self)
        }
        if !operations.isEmpty, !replicaMembers.isEmpty {
            // The author gets its own operations back only when the hub
            // re-stamped one: it moves its copy to the final place.
            let to = toAuthor ? Array(replicaMembers) : replicaMembers.filter { $0 != record.author }
            if !to.isEmpty {
                actions.append(.relay(frame: HubMessage.operations(operations, of: Kind.self, board: address.name,
                                                                   version: record.version), to: to))
            }
        }
        if let checkpoint {
            durableCheckpoint = checkpoint
            if !compactionInFlight, !awaitingSync.isEmpty {
                let waiting = awaitingSync
                awaitingSync = []
                for (id, frontier) in waiting {
                    guard replicaMembers.contains(id), let replica = members[id]?.replica else { continue }
                    sendSync(to: id, replica: replica, frontier: frontier, core: &core, actions: &afterReplies)
                }
            }
            let replicas = Array(replicaMembers)
            if !replicas.isEmpty {
                do {
                    afterReplies.append(.relay(frame: try HubMessage.checkpoint(checkpoint, board: address.name, version: record.version),
                                               to: replicas))
                } catch {
                    // Never an empty or partial frame: these replicas
                    // reconnect and catch up through `sync`.
                    core.counters.encodingFailures += 1
                    for id in replicas {
                        afterReplies.append(.close(connection: id, code: 1011, reason: "checkpoint could not be encoded"))
                    }
                }
            }
        }
    }

    /// Sends `notice` to every connection acting as its author on this board.
    final func tell(_ notice: KindNotice, actions: inout [HubAction]) {
        let to = members.filter { $0.value.actingName == notice.to || (!$0.value.replicaName.isEmpty && $0.value.replicaName == notice.to) }
        guard !to.isEmpty else { return }
        // The connection whose intent made the overwritten change gets its ref.
        let subject = notice.item.map { $0 + "/" + (notice.field ?? "") }
        var plain: [UInt64] = []
        for id in to.keys {
            if let subject, let ref = noticeRefs[id]?[subject] {
                actions.append(.send(connection: id, frame: HubMessage.notice(ref: ref, code: notice.code, message: notice.message,
                                                                              item: notice.item, field: notice.field, text: notice.text)))
            } else {
                plain.append(id)
            }
        }
        guard !plain.isEmpty else { return }
        let frame = HubMessage.notice(ref: nil, code: notice.code, message: notice.message, item: notice.item, field: notice.field,
                                      text: notice.text)
        actions.append(.relay(frame: frame, to: plain))
    }

    /// The `sync` answering a replica client's `hello`.
    final func sendSync(to connection: UInt64, replica id: ReplicaID, frontier: Stamp, core: inout HubCore, actions: inout [HubAction]) {
        do {
            let frame = try HubMessage.sync(catchUp(from: frontier), board: address.name, version: durableVersion,
                                            replica: id, have: durableSeq(of: id), name: members[connection]?.replicaName ?? "")
            actions.append(.send(connection: connection, frame: frame))
        } catch {
            core.counters.encodingFailures += 1
            actions.append(.close(connection: connection, code: 1011, reason: "sync could not be encoded"))
        }
    }
}
