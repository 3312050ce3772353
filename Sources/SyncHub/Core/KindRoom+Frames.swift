import BoardCRDT
import Foundation
import SyncWire

/// The kind-specific half of the hub's protocol: thin intents, `join`, and
/// the replica protocol (`hello`, `ops`), for boards of kind `Kind`.
extension KindRoom {
    typealias Message = ClientMessage<Kind>

    func parseFrame(_ bytes: UnsafeRawBufferPointer) -> ParsedFrame {
        do throws(ProtocolError) {
            let message = try Message.parse(bytes)
            // One pass over the message (each read of it copies its strings), then boxed once.
            var key: String?, ref: String?
            var isOperations = false, isHello = false, isChange = false, needsAdmin = false
            switch message {
            case let .intent(intent, intentRef, intentKey):
                (ref, key, isChange, needsAdmin) = (intentRef, intentKey, true, Kind.needsAdmin(intent))
            case let .operations(operations, operationsRef):
                (ref, isOperations, isChange) = (operationsRef, true, true)
                needsAdmin = operations.contains { Kind.needsAdmin(change: $0.change) }
            case let .editing(_, editingRef):
                (ref, isChange) = (editingRef, true)
            case .hello:
                isHello = true
            case let .join(_, other), let .auth(_, other), let .subscribe(_, other), let .query(_, other):
                ref = other
            }
            return ParsedFrame(key: key, ref: ref, isOperations: isOperations, isHello: isHello,
                               message: message, error: nil, isChange: isChange, needsAdmin: needsAdmin)
        } catch {
            return ParsedFrame(key: nil, ref: WireDecoding.ref(inUnreadable: Data(bytes)), isOperations: false, isHello: false,
                               message: 0, error: error, isChange: false)
        }
    }

    func receiveFrame(_ frame: ParsedFrame, from connection: UInt64, core: inout HubCore, actions: inout [HubAction]) {
        guard let message = frame.message as? Message else {
            // Parsed and handled in one call on the service thread, so this
            // cannot happen; if it ever does, the client is told, not the hub killed.
            core.counters.errorsSent += 1
            actions.append(.send(connection: connection, frame: HubMessage.error(
                ProtocolError("internal", "the frame was read for another kind of board; send it again"), ref: frame.ref)))
            return
        }
        switch message {
        case let .intent(intent, ref, _) where refusesFrozen(connection):
            core.counters.operationsRefused += 1
            noteRefused(intent, code: "frozen", by: members[connection], core: core)
            actions.append(.send(connection: connection, frame: HubMessage.rejected(ref: ref, code: "frozen", message: Self.frozenMessage)))
        case let .operations(operations, ref) where refusesFrozen(connection):
            core.counters.operationsRefused += 1
            let own = operations.first?.id.replica
            actions.append(.send(connection: connection, frame: HubMessage.error(ProtocolError("frozen", Self.frozenMessage), ref: ref,
                                                                                 have: own.map { durableSeq(of: $0) })))
        case let .intent(intent, ref, key):
            if core.isShared {
                proposeIntent(intent, ref: ref, key: key, by: connection, core: &core, actions: &actions)
            } else {
                perform(intent, ref: ref, key: key, by: connection, core: &core, actions: &actions)
            }
        case let .join(name, ref):
            join(name, ref: ref, connection: connection, core: &core, actions: &actions)
        case let .hello(hello):
            greet(hello, from: connection, core: &core, actions: &actions)
        case let .operations(operations, ref):
            if core.isShared {
                proposeOperations(operations, ref: ref, from: connection, core: &core, actions: &actions)
            } else {
                merge(operations, ref: ref, from: connection, core: &core, actions: &actions)
            }
        case let .editing(item, ref):
            announceEditing(item, ref: ref, connection: connection, core: &core, actions: &actions)
        case let .auth(token, ref):
            core.refresh(connection, token: token, ref: ref, actions: &actions)
        case let .subscribe(format, _):
            subscribe(connection, to: format, core: &core)
        case let .query(query, ref):
            // Answered from what is durable, to this connection alone (the shop's `my_orders`, P7).
            let answer = Kind.answer(query: query, by: members[connection]?.actingName ?? "", in: durableState)
            actions.append(.send(connection: connection, frame: HubMessage.ack(ref: ref, version: durableVersion, members: answer)))
        }
    }

    /// Presence: which item this person edits now. Checked against the
    /// hub's newest state (an item just added is editable before it is
    /// durable), answered at once (nothing to store), never a `version`.
    private func announceEditing(_ item: String?, ref: String?, connection: UInt64, core: inout HubCore, actions: inout [HubAction]) {
        if let item, let problem = Kind.editingProblem(item, in: core.isShared ? speculativeState(of: connection) : replica.state) {
            actions.append(.send(connection: connection,
                                 frame: HubMessage.rejected(ref: ref, code: problem.code, message: problem.message)))
            return
        }
        if setEditing(item, for: connection) { core.markForPublish(self) }
        actions.append(.send(connection: connection, frame: HubMessage.ack(ref: ref, version: durableVersion)))
    }

    /// A board nobody has played yet: the kind's opening (the Set table
    /// deals a first game), made by the hub and stored like any change.
    func performOpening(core: inout HubCore) {
        guard isUnplayed, let opening = Kind.opening else { return }
        do {
            guard let operation = try replica.perform(opening) else { return }
            version += 1
            core.counters.operationsApplied += 1
            openingInFlight = true
            core.record(makeRecord([operation], replies: [], author: nil), in: self)
        } catch {
            // An opening is never refused on an empty board; if a kind's
            // rules say otherwise the board simply starts unplayed.
            core.counters.operationsRefused += 1
        }
    }

    /// Who acts on this connection from now on (K10, docs/rules/README.md).
    private func join(_ name: String, ref: String?, connection: UInt64, core: inout HubCore, actions: inout [HubAction]) {
        if let grant = members[connection]?.grant {
            // A11: with tokens, the name is the token's.
            if name == grant.displayName {
                actions.append(.send(connection: connection, frame: HubMessage.ack(ref: ref, version: durableVersion)))
            } else {
                actions.append(.send(connection: connection, frame: HubMessage.rejected(
                    ref: ref, code: "name_from_token",
                    message: "your name here is \"\(grant.displayName)\", from your token; it cannot be changed")))
            }
            return
        }
        if members[connection]?.replica != nil, members[connection]?.name != name {
            // A replica's operations carry its name; it changes it by a new hello.
            actions.append(.send(connection: connection, frame: HubMessage.rejected(
                ref: ref, code: "name_in_use_by_replica", message: "a replica client takes its name from hello; reconnect to change it")))
            return
        }
        if members[connection]?.name != name {
            members[connection]?.name = name
            setName(name, for: connection)
            core.markForPublish(self)
        }
        actions.append(.send(connection: connection, frame: HubMessage.ack(ref: ref, version: durableVersion)))
    }

    /// A thin client's intent: merged into the hub's replica at once, so the
    /// next intent is checked against it; the reply waits for durability.
    /// A keyed intent already merged is not merged again: its first answer
    /// goes back (at once when durable, else once it is).
    func perform(_ intent: Kind.Intent, ref: String?, key: String?, by connection: UInt64, core: inout HubCore,
                 actions: inout [HubAction]) {
        if let key, answeredAlready(key, ref: ref, connection: connection, core: &core, actions: &actions) { return }
        let answer: KeyedAnswer
        var operations: [Op] = []
        do {
            let operation = try replica.perform(intent, by: members[connection]?.actingName ?? "")
            if let operation { operations.append(operation) }
            switch operation.flatMap({ replica.outcome(of: $0.id) }) {
            case let .refused(refusal)?:
                // Prepared, then refused by the rules where it landed (the
                // Set table's SC2, told once): stored, since what it changed
                // behind the scenes must replay, and answered as refused.
                core.counters.operationsRefused += 1
                answer = .rejected(code: refusal.code, message: refusal.message, members: Kind.refusalMembers(refusal))
            case .applied?:
                core.counters.operationsApplied += 1
                version += 1
                answer = .ack(version: version, members: Kind.ackMembers(for: operation))
                // A later notice about what this change set carries this ref (K9).
                if let operation { noteRef(ref, about: Kind.noticeSubjects(of: operation.change), from: connection) }
            case .unchanged?, nil:
                answer = .ack(version: version, members: Kind.ackMembers(for: operation))
            }
        } catch {
            core.counters.operationsRefused += 1
            answer = .rejected(code: error.code, message: error.message, members: Kind.refusalMembers(error))
        }
        // A no-op changed nothing: not one of the board's changes (O4).
        if let change = operations.first?.change {
            noteChange(change, by: members[connection], answer: answer, core: core)
        } else if case let .rejected(code, _, _) = answer {
            noteRefused(intent, code: code, by: members[connection], core: core)
        }
        core.record(makeRecord(operations, replies: [(connection, answer.frame(ref: ref))], author: connection,
                               keyed: key.map { ($0, answer) }), in: self)
    }

    /// A keyed intent whose key this board has seen: its first answer goes
    /// back (at once, or once known). Otherwise the key is begun and false
    /// returned: the intent is new.
    func answeredAlready(_ key: String, ref: String?, connection: UInt64, core: inout HubCore, actions: inout [HubAction]) -> Bool {
        switch keys[key] {
        case let .answered(answer)?:
            core.counters.keyedResends += 1
            actions.append(.send(connection: connection, frame: answer.frame(ref: ref)))
            return true
        case .pending?:
            core.counters.keyedResends += 1
            keys.wait(key, connection: connection, ref: ref)
            return true
        case nil:
            keys.begin(key)
            return false
        }
    }

    /// The replica a client's `ops` frame may carry operations of: its own,
    /// made under its hello's name. Nil, with the client told why, otherwise.
    func ownReplica(for operations: [Op], ref: String?, from connection: UInt64,
                    actions: inout [HubAction]) -> (member: Member, own: ReplicaID)? {
        guard let member = members[connection], let own = member.replica else {
            actions.append(.send(connection: connection, frame: HubMessage.error(
                ProtocolError("hello_first", "send hello with your replica id before operations"), ref: ref)))
            return nil
        }
        if let foreign = operations.first(where: { $0.id.replica != own }) {
            actions.append(.send(connection: connection, frame: HubMessage.error(
                ProtocolError("not_your_operation", "operation \(foreign.id) belongs to another replica; send only your own"), ref: ref)))
            return nil
        }
        if let impostor = operations.first(where: { $0.author != member.replicaName }) {
            actions.append(.send(connection: connection, frame: HubMessage.error(
                ProtocolError("not_your_name",
                              "operation \(impostor.id) is made by \"\(impostor.author.prefix(32))\"; this replica's hello named " +
                              "\"\(member.replicaName)\""),
                ref: ref, have: durableSeq(of: own))))
            return nil
        }
        return (member, own)
    }

    /// The answer to a replica's `ops` after `report`: an ack, or the first
    /// refusal's code; either says up to which sequence number the hub holds
    /// the replica's operations (`have`).
    func mergeAnswer(_ report: MergeReport<Kind>, own: ReplicaID, ref: String?, core: inout HubCore) -> String {
        mergeOutcome(report, core: &core).frame(ref: ref, have: replica.versions[own])
    }

    /// What a replica's `ops` is answered after `report`, without `have`
    /// (cluster mode adds it when the answer is sent).
    func mergeOutcome(_ report: MergeReport<Kind>, core: inout HubCore) -> MergeOutcome {
        guard let refusal = report.refused.first else { return .ack(version: version) }
        core.counters.operationsRefused += UInt64(report.refused.count)
        let code: String
        switch refusal {
        case .stale: code = "stale_operation"
        case .malformed, .clockWentBack: code = "bad_operation"
        case .pendingFull: code = "too_far_ahead"
        }
        return .error(ProtocolError(code, refusal.description))
    }

    /// A replica client says who it is and which checkpoint it holds: send
    /// what it may lack. A replica the board has no record of, that says it
    /// sent operations before, must start again under a new id: whatever it
    /// sent was forgotten or never became durable, and accepting its next
    /// sequence numbers would leave a gap nothing can fill.
    func greet(_ hello: ReplicaHello, from connection: UInt64, core: inout HubCore, actions: inout [HubAction]) {
        guard Kind.takesReplicaClients else {
            // A replica holds every operation and checkpoint, and so would
            // hold what the kind shows only to its owner (a shop's orders, P7).
            actions.append(.send(connection: connection, frame: HubMessage.error(ProtocolError(
                "thin_only",
                "a \(Kind.name) board is followed by its state frames only (what it keeps private would reach a replica); send " +
                "intents, not hello"),
                replica: hello.replica)))
            return
        }
        guard hello.replica != replica.id else {
            // The board's own id (public: thin intents' operations carry it)
            // is never a client's: taking it would let one rewrite the hub's history.
            actions.append(.send(connection: connection, frame: HubMessage.error(ProtocolError(
                "bad_replica", "replica id \(hello.replica) is this board's own; pick a fresh random id"), replica: hello.replica)))
            return
        }
        if let grant = members[connection]?.grant {
            guard hello.name == grant.displayName else {
                // A11: a replica's operations carry its token's name, no other.
                actions.append(.send(connection: connection, frame: HubMessage.error(ProtocolError(
                    "not_your_name", "your token names you \"\(grant.displayName)\"; say hello with that name"), replica: hello.replica)))
                return
            }
            // A replica id is its holder's: another token's holder taking it
            // could make the hub skip the owner's operations as already held.
            let owner = replicaOwners[hello.replica]
                ?? replica.log.last(where: { $0.id.replica == hello.replica && !$0.author.isEmpty }).map { "name:" + $0.author }
            guard owner == nil || owner == grant.sub || owner == "name:" + grant.displayName else {
                actions.append(.send(connection: connection, frame: HubMessage.error(ProtocolError(
                    "not_your_replica", "replica \(hello.replica) belongs to someone else on this board; pick a fresh random id"),
                    replica: hello.replica)))
                return
            }
            if replicaOwners.count >= 4 * 4096 { replicaOwners = replicaOwners.filter { replica.knows($0.key) } }
            replicaOwners[hello.replica] = grant.sub
        }
        if let name = hello.name, members[connection]?.name != name {
            members[connection]?.name = name
            setName(name, for: connection)
            core.markForPublish(self)
        }
        guard hello.sent == 0 || replica.knows(hello.replica) else {
            members[connection]?.replica = nil
            if members[connection]?.presenceOnly == true {
                members[connection]?.presenceOnly = false
                audienceChanged()
                wholeStateDue.insert(connection)
                core.markForPublish(self)
            }
            replicaMembers.remove(connection)
            actions.append(.send(connection: connection, frame: HubMessage.error(ProtocolError(
                "unknown_replica",
                "this board has no record of replica \(hello.replica)'s operations (forgotten after long inactivity, or never stored); " +
                "start again under a new replica id"),
                replica: hello.replica)))
            return
        }
        members[connection]?.replica = hello.replica
        members[connection]?.replicaName = hello.name ?? ""
        replicaMembers.insert(connection)
        if hello.presenceOnly || members[connection]?.presenceOnly == true {
            // From now on presence in place of states: sent at once. Either
            // way the state it holds is not the last published one: a whole
            // state when it takes states again.
            members[connection]?.presenceOnly = hello.presenceOnly
            audienceChanged()
            lastPresence = nil
            wholeStateDue.insert(connection)
            core.markForPublish(self)
        }
        awaitingSync.removeAll { $0.connection == connection }
        if compactionInFlight {
            // Relays of what commits meanwhile still reach it; the sync goes
            // once the checkpoint is durable (`committed`).
            awaitingSync.append((connection, hello.frontier))
            return
        }
        sendSync(to: connection, replica: hello.replica, frontier: hello.frontier, core: &core, actions: &actions)
    }

    /// A replica client's own operations: merged, stored, then answered and
    /// relayed to the board's other replica clients. Everything the merge
    /// integrated is stored and relayed, including operations an earlier
    /// gap held back; the answer (ack or error, once durable) says up to
    /// which sequence number the hub holds the sender's operations. An
    /// operation that would land before integrated ones is re-stamped after
    /// them (an ack is final) and its author gets the hub's version back.
    func merge(_ operations: [Op], ref: String?, from connection: UInt64, core: inout HubCore, actions: inout [HubAction]) {
        guard let (_, own) = ownReplica(for: operations, ref: ref, from: connection, actions: &actions) else { return }
        let report = replica.receive(operations)
        core.counters.operationsApplied += UInt64(report.integratedOperations.count)
        if report.changedState { version += 1 }
        // Every operation of this replica up to `have` is in this record or an earlier one.
        let reply = mergeAnswer(report, own: own, ref: ref, core: &core)
        core.counters.operationsRestamped += UInt64(report.restamped.count)
        if !report.integratedOperations.isEmpty {
            let member = members[connection]
            activity.note(BoardActivity.Change(at: core.now, sub: member?.grant?.sub, name: member?.actingName ?? "", hub: core.hubID,
                                               operations: report.integratedOperations.count, answer: "ack", version: version))
        }
        core.record(makeRecord(report.integratedOperations, replies: [(connection, reply)], author: connection,
                               restamped: !report.restamped.isEmpty), in: self)
    }

    /// A thin change as its hub answered it, for the console (O4).
    func noteChange(_ change: Kind.Change?, by member: Member?, sub: String? = nil, hub: String? = nil, name: String? = nil,
                    answer: KeyedAnswer, core: HubCore) {
        let said: String
        switch answer {
        case .ack: said = "ack"
        case let .rejected(code, _, _): said = code
        }
        activity.note(BoardActivity.Change(at: core.now, sub: member?.grant?.sub ?? sub, name: name ?? member?.actingName ?? "",
                                           hub: hub ?? core.hubID, change: change, answer: said, version: version))
    }

    /// An intent refused before it became a change, for the console (O4).
    func noteRefused(_ intent: Kind.Intent, code: String, by member: Member?, core: HubCore) {
        activity.note(BoardActivity.Change(at: core.now, sub: member?.grant?.sub, name: member?.actingName ?? "", hub: core.hubID,
                                           change: RefusedIntent(members: Kind.intentMembers(intent)), answer: code, version: version))
    }

    static var frozenMessage: String { "an operator froze this board: nothing can be changed until it is thawed" }

    /// O7: on a frozen board only an admin changes anything (a request the
    /// shell made for an admin, such as a shop's image, passes too).
    func refusesFrozen(_ connection: UInt64) -> Bool {
        guard frozen, HubCore.exchange(ofAnswerID: connection) == nil else { return false }
        return members[connection]?.role != .admin
    }
}
