import Testing
@testable import BoardCRDT

/// What the todo schedules exercised (`BOARDCRDT_TODO_STATS=1` prints it).
struct TodoFuzzStatistics: CustomStringConvertible {
    var schedules = 0, steps = 0, operations = 0, hubIntents = 0, restamped = 0, duplicates = 0, buffered = 0
    var compactions = 0, checkpointsAdopted = 0, syncs = 0, lateStarts = 0
    /// Own operations whose outcome changed on their author once the hub's order came back.
    var outcomesTakenBack = 0
    /// TC2 on the hub: edits merged with a concurrent one, and overwrites (notices sent).
    var merges = 0, notices = 0
    /// TC5 on the hub: adds and moves placed after a tombstone.
    var afterTombstone = 0
    var appliedByHub: [String: Int] = [:]
    var refusedLocally: [String: Int] = [:]
    var refusedByHub: [String: Int] = [:]
    var largestList = 0

    mutating func add(_ other: TodoFuzzStatistics) {
        schedules += other.schedules; steps += other.steps; operations += other.operations; hubIntents += other.hubIntents
        restamped += other.restamped; duplicates += other.duplicates; buffered += other.buffered
        compactions += other.compactions; checkpointsAdopted += other.checkpointsAdopted; syncs += other.syncs
        lateStarts += other.lateStarts; outcomesTakenBack += other.outcomesTakenBack
        merges += other.merges; notices += other.notices; afterTombstone += other.afterTombstone
        appliedByHub.merge(other.appliedByHub, uniquingKeysWith: +)
        refusedLocally.merge(other.refusedLocally, uniquingKeysWith: +)
        refusedByHub.merge(other.refusedByHub, uniquingKeysWith: +)
        largestList = max(largestList, other.largestList)
    }

    var description: String {
        func sorted(_ counts: [String: Int]) -> String { "\(counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" })" }
        return "\(schedules) schedules, \(steps) steps, \(operations) client operations, \(hubIntents) thin intents on the hub, "
            + "\(restamped) re-stamped, \(duplicates) duplicates, \(buffered) buffered, \(compactions) hub compactions, "
            + "\(checkpointsAdopted) checkpoints adopted by clients (\(syncs) syncs), \(lateStarts) schedules from a used list, "
            + "\(outcomesTakenBack) own outcomes changed on their author, \(merges) TC2 merges, \(notices) TC2 notices, "
            + "\(afterTombstone) adds/moves after a tombstone (TC5), largest list \(largestList); applied by the hub \(sorted(appliedByHub)); "
            + "refused locally \(sorted(refusedLocally)), by the hub \(sorted(refusedByHub))"
    }
}

struct TodoFuzzFailure: Error, CustomStringConvertible {
    var seed: UInt64
    var gaps: Bool
    var step: Int
    var problems: [String]
    var trace: [String]
    var description: String {
        "Todo convergence failure, reproduce with BOARDCRDT_TODO_SEED=\(seed) BOARDCRDT_TODO_GAPS=\(gaps ? 1 : 0) BOARDCRDT_TODO_SCHEDULES=1 BOARDCRDT_TODO_TRACE=1 swift test --filter TodoConvergence\n"
            + "step \(step): " + problems.joined(separator: "\n  ")
            + (trace.isEmpty ? "" : "\ntrace:\n" + trace.joined(separator: "\n"))
    }
}

/// One random schedule of SyncHub's shape for the reminders list, modelled
/// on `StockFuzzSchedule`: 2 to 4 client replicas
/// (`ReplicaLimits(compacts: false, hubSealsOrder: true)`) under names
/// (sometimes two under one name) adding (ids of their own, made-up ids,
/// ids another may pick too; after a live item, a deleted one, the top or
/// an unknown id), editing titles and memos (with the base they see, a
/// stale base, or none; emoji and combining marks), ticking, moving and
/// deleting what they show; and a hub replica that seals its order and
/// compacts with a tiny `keptOperations`, which also takes thin intents.
/// Clients send in random batches, reordered, with resends and gaps; the
/// hub relays, pushes checkpoints and `sync`s; inboxes deliver in random
/// order, some messages twice.
///
/// After every step, on every touched replica: the engine's and the kind's
/// invariants, and `TodoModel.problems` (every id once; the items shown are
/// the checkpoint's plus the applied adds less the applied deletes: nothing
/// lost that was not deleted). Every local intent does what `TodoModel`
/// says. On the hub: an outcome never changes once integrated (an ack is
/// final) nor does its stamp; its state is its integrated operations
/// replayed in that order, and equals `TodoModel` replaying them (outcome by
/// outcome, entry by entry, byte for byte); its notices are the model's; the
/// ids it shows are exactly the applied adds less the applied deletes
/// (a plain set, kept apart from both). At the end, after full delivery,
/// every client equals the hub.
struct TodoFuzzSchedule {
    enum Message {
        case ops([ReminderOp])
        case checkpoint(Checkpoint<TodoList>)
        case sync(Delta<TodoList>)
    }

    let seed: UInt64
    var rng: SplitMix64
    var hub: Reminders
    var clients: [Reminders] = []
    var names: [String] = []
    var unsent: [[ReminderOp]] = []
    var sent: [[ReminderOp]] = []
    var inbox: [[Message]] = []
    /// The outcome and stamp of each operation when the hub integrated it (its ack).
    var acked: [OperationID: Outcome<TodoRefusal>] = [:]
    var finalStamp: [OperationID: Stamp] = [:]
    /// The hub's integrated operations replayed in the order it integrated them.
    var mirror: TodoList.State
    /// The same, through the independent model.
    var model: TodoModel
    /// The ids on the hub's list: applied adds less applied deletes.
    var live: Set<String>
    var hubFrontier: Stamp = .origin
    let tracing: Bool
    let trace = Trace()
    var step = 0
    var touched: Set<Int> = []
    var statistics = TodoFuzzStatistics()
    static let hubIndex = -1
    static let pool = ["ana", "bo", "cy", "dee"]
    let gaps: Bool

    init(seed: UInt64, tracing: Bool, gaps: Bool = true) {
        self.seed = seed
        self.tracing = tracing
        self.gaps = gaps
        rng = SplitMix64(seed: seed)
        var ids: Set<UInt64> = []
        func freshID(_ rng: inout SplitMix64) -> ReplicaID {
            while true {
                let raw = UInt64(rng.inRange(1...1_000))
                if ids.insert(raw).inserted { return ReplicaID(raw) }
            }
        }
        // Often from a used list: items, some done, and tombstones.
        var start = TodoList.initialState
        if rng.percent(60) {
            statistics.lateStarts = 1
            for index in 0..<rng.inRange(1...12) {
                let top = rng.percent(30) // drawn apart: `||` would capture self before `hub` is set
                let after = start.entries.isEmpty || top ? nil : start.entries[rng.below(start.entries.count)].id
                _ = TodoList.apply(.add(id: "s\(index)", after: after, title: Self.text(&rng, title: true), memo: rng.percent(30) ? Self.text(&rng, title: false) : ""),
                                   by: Self.pool[rng.below(4)], to: &start)
                if rng.percent(25) { _ = TodoList.apply(.done(id: "s\(index)", done: true), by: "ana", to: &start) }
            }
            for entry in start.entries where rng.percent(25) { _ = TodoList.apply(.delete(id: entry.id), by: Self.pool[rng.below(4)], to: &start) }
        }
        let checkpoint = Checkpoint<TodoList>(state: start, frontier: .origin, versions: VersionVector())
        let kept = rng.inRange(1...6)
        hub = Reminders(id: freshID(&rng), checkpoint: checkpoint, limits: ReplicaLimits(keptOperations: kept, sealsOrder: true))
        mirror = start
        model = TodoModel(start)
        live = Set(start.items.map(\.id))
        let count = rng.inRange(2...4)
        for _ in 0..<count {
            clients.append(Reminders(id: freshID(&rng), checkpoint: checkpoint, limits: ReplicaLimits(compacts: false, hubSealsOrder: true)))
            names.append(Self.pool[rng.below(Self.pool.count)])
            unsent.append([])
            sent.append([])
            inbox.append([])
        }
        note("seed \(seed): gaps \(gaps), start \(idsText(start)), hub \(hub.id) keeps \(kept), clients \(zip(clients.map(\.id), names).map { "\($0)=\($1)" })")
    }

    func note(_ line: @autoclosure () -> String) {
        if tracing { trace.lines.append("[\(step)] " + line()) }
    }

    func fail(_ problems: [String]) -> TodoFuzzFailure {
        TodoFuzzFailure(seed: seed, gaps: gaps, step: step, problems: problems, trace: trace.lines)
    }

    mutating func run() throws(TodoFuzzFailure) {
        statistics.schedules = 1
        let steps = rng.inRange(40...140)
        statistics.steps = steps
        for index in 0..<steps {
            step = index
            switch rng.below(100) {
            case 0..<44: try localIntent()
            case 44..<48: try hubIntent()
            case 48..<68: try send(from: rng.below(clients.count), everything: false)
            case 68..<95: try deliver(to: rng.below(clients.count), everything: false)
            default: catchUp(rng.below(clients.count))
            }
            try check()
            statistics.largestList = max(statistics.largestList, hub.state.entries.count)
        }
        step = steps
        try finalSync()
    }

    // MARK: Intents

    /// Short texts from a small alphabet (so edits collide), with emoji,
    /// combining marks and, rarely, what T1 refuses.
    static func text(_ rng: inout SplitMix64, title: Bool) -> String {
        let pieces = ["Buy", " ", "milk", "oat", "!", "é", "e\u{301}", "🍵", "👍🏽", "🇫🇷", "x", "2"]
        let roll = rng.below(100)
        if roll < 2 { return String(repeating: "y", count: 1001) }
        if roll < 4 { return "two\nlines" }
        if roll < 8 { return "" }
        return (0..<rng.inRange(1...5)).map { _ in pieces[rng.below(pieces.count)] }.joined()
    }

    /// `text` changed in one place (insert, delete or replace a piece), or
    /// sometimes replaced outright.
    static func edited(_ text: String, _ rng: inout SplitMix64, title: Bool) -> String {
        var characters = Array(text)
        if characters.isEmpty || rng.percent(10) { return Self.text(&rng, title: title) }
        let at = rng.below(characters.count + 1)
        let insert = Array(Self.text(&rng, title: title).prefix(3))
        switch rng.below(3) {
        case 0: characters.insert(contentsOf: insert, at: at)
        case 1: characters.removeSubrange(at..<min(characters.count, at + rng.inRange(1...3)))
        default: characters.replaceSubrange(at..<min(characters.count, at + 1), with: insert)
        }
        return String(characters)
    }

    /// An id a person might name: a shown item, a tombstone, a stranger, or none.
    static func someID(_ rng: inout SplitMix64, in state: TodoList.State, allowNil: Bool) -> String? {
        let roll = rng.below(100)
        if allowNil, roll < 12 { return nil }
        if roll < 18 { return ["zz", "q9", "s0", "n1", "bad id"][rng.below(5)] }
        let entries = state.entries
        guard !entries.isEmpty else { return allowNil ? nil : "zz" }
        let shown = entries.filter { !$0.isDeleted }
        if roll < 26 || shown.isEmpty { return entries[rng.below(entries.count)].id } // tombstones included
        return shown[rng.below(shown.count)].id
    }

    static func randomIntent(_ rng: inout SplitMix64, in state: TodoList.State) -> TodoList.Intent {
        let roll = rng.below(100)
        if roll < 28 || state.items.isEmpty {
            // Ids from a small shared pool collide (duplicate_id); nil is made up.
            let id: String? = rng.percent(30) ? nil : rng.percent(50) ? "n\(rng.below(12))" : "k\(rng.below(1_000_000))"
            return .add(id: id, after: someID(&rng, in: state, allowNil: true), title: text(&rng, title: true),
                        memo: rng.percent(25) ? text(&rng, title: false) : "")
        }
        let id = someID(&rng, in: state, allowNil: false) ?? "zz"
        let item = state.item(id)
        if roll < 55 {
            func edit(_ current: String?, title: Bool) -> TodoList.TextEdit {
                let current = current ?? ""
                let base: String? = rng.percent(15) ? nil : rng.percent(90) ? current : edited(current, &rng, title: title)
                return TodoList.TextEdit(edited(current, &rng, title: title), base: base)
            }
            switch rng.below(10) {
            case 0..<6: return .edit(id: id, title: edit(item?.title, title: true), memo: nil)
            case 6..<9: return .edit(id: id, title: nil, memo: edit(item?.memo, title: false))
            default: return .edit(id: id, title: edit(item?.title, title: true), memo: edit(item?.memo, title: false))
            }
        }
        if roll < 68 { return .done(id: id, done: rng.percent(80) ? !(item?.done ?? false) : item?.done ?? true) }
        if roll < 84 { return .move(id: id, after: rng.percent(5) ? id : someID(&rng, in: state, allowNil: true)) }
        return .delete(id: id)
    }

    /// A change as a peer could send it (made-up ids settled).
    static func randomChange(_ rng: inout SplitMix64, in state: TodoList.State) -> TodoList.Change {
        switch randomIntent(&rng, in: state) {
        case let .add(id, after, title, memo): .add(id: id ?? "m\(rng.below(50))", after: after, title: title, memo: memo)
        case let .edit(id, title, memo): .edit(id: id, title: title, memo: memo)
        case let .done(id, done): .done(id: id, done: done)
        case let .move(id, after): .move(id: id, after: after)
        case let .delete(id): .delete(id: id)
        }
    }

    /// Performs `intent` on `replica` and checks it against `TodoModel`.
    mutating func perform(_ intent: TodoList.Intent, by name: String, on replica: inout Reminders) throws(TodoFuzzFailure) -> ReminderOp? {
        let before = replica
        let result = Result { () throws(TodoRefusal) in try replica.perform(intent, by: name) }
        // A made-up id is only known once the change is made: settle it as the replica did.
        let change: TodoList.Change
        switch (intent, result) {
        case let (.add(nil, after, title, memo), .success(op?)):
            guard case let .add(id, _, _, _) = op.change, TodoModel.validID(id), id.count == 8, before.state.index(of: id) == nil else {
                throw fail(["a made-up id is not 8 fresh characters of A-Z a-z 0-9: \(op.change)"])
            }
            change = .add(id: id, after: after, title: title, memo: memo)
        case let (.add(id, after, title, memo), _): change = .add(id: id ?? "m", after: after, title: title, memo: memo)
        case let (.edit(id, title, memo), _): change = .edit(id: id, title: title, memo: memo)
        case let (.done(id, done), _): change = .done(id: id, done: done)
        case let (.move(id, after), _): change = .move(id: id, after: after)
        case let (.delete(id), _): change = .delete(id: id)
        }
        var expected = TodoModel(before.state)
        let outcome = expected.apply(change, by: name)
        switch result {
        case let .success(op?):
            note("\(name)@\(before.id) \(change) -> \(op.id)@\(op.lamport) [\(idsText(replica))]")
            let recorded = replica.outcome(of: op.id)
            if outcome != .applied || (recorded != nil && recorded != .applied) || op.change != change {
                throw fail(["\(intent) by \(name) on [\(idsText(before.state))] recorded \(op.change) \(String(describing: recorded)), the model says \(outcome)"])
            }
            if !expected.matches(replica.state) { throw fail(["\(intent) on [\(idsText(before.state))] gave [\(idsText(replica.state))], the model [\(expected.visibleIDs)]"]) }
            return op
        case .success(nil):
            note("\(name)@\(before.id) \(intent) changes nothing")
            if outcome != .unchanged { throw fail(["\(intent) by \(name) recorded nothing, the model says \(outcome)"]) }
            if replica.state != before.state || replica.versions != before.versions { throw fail(["a no-op \(intent) changed the replica"]) }
            return nil
        case let .failure(refusal):
            note("\(name)@\(before.id) \(intent) refused \(refusal.code): \(refusal.message)")
            statistics.refusedLocally[refusal.code, default: 0] += 1
            if outcome != .refused(refusal) {
                throw fail(["\(intent) on [\(idsText(before.state))] refused \(refusal), the model says \(outcome)"])
            }
            if replica.state != before.state || replica.versions != before.versions { throw fail(["refused \(intent) changed the replica"]) }
            return nil
        }
    }

    mutating func localIntent() throws(TodoFuzzFailure) {
        let index = rng.below(clients.count)
        let intent = Self.randomIntent(&rng, in: clients[index].state)
        touched.insert(index)
        var replica = clients[index]
        let op = try perform(intent, by: names[index], on: &replica)
        clients[index] = replica
        if let op {
            statistics.operations += 1
            unsent[index].append(op)
        }
    }

    /// A thin client's intent, prepared on the hub's own state; relayed to every client.
    mutating func hubIntent() throws(TodoFuzzFailure) {
        let intent = Self.randomIntent(&rng, in: hub.state)
        touched.insert(Self.hubIndex)
        var replica = hub
        let name = rng.percent(50) ? "guest-1" : names[rng.below(names.count)]
        // The hub's ledger sees the state before the operation (for notices).
        let op = try perform(intent, by: name, on: &replica)
        hub = replica
        guard let op else { return }
        statistics.hubIntents += 1
        try integrated([op])
        for index in clients.indices { inbox[index].append(.ops([op])) }
    }

    // MARK: Delivery (as in StockFuzzSchedule)

    mutating func send(from index: Int, everything: Bool) throws(TodoFuzzFailure) {
        var ops: [ReminderOp] = []
        var kept: [ReminderOp] = []
        let whole = everything || rng.percent(40)
        if !gaps {
            let count = whole ? unsent[index].count : rng.inRange(0...unsent[index].count)
            ops = Array(unsent[index].prefix(count))
            kept = Array(unsent[index].dropFirst(count))
        } else {
            for op in unsent[index] {
                if whole || rng.percent(60) { ops.append(op) } else { kept.append(op) }
            }
        }
        sent[index] += ops
        unsent[index] = kept
        if !everything {
            for op in sent[index] where rng.percent(8) { ops.append(op) }
            if rng.percent(60) { rng.shuffle(&ops) }
        }
        guard !ops.isEmpty else { return }
        touched.insert(Self.hubIndex)
        let report = hub.receive(ops)
        note("\(clients[index].id) sends \(ops.map { "\($0.id)@\($0.lamport)" }) -> integrated \(report.integratedOperations.map { "\($0.id)@\($0.lamport)" }) restamped \(report.restamped)")
        if !report.refused.isEmpty { throw fail(["the hub refused honest operations: \(report.refused)"]) }
        if !report.changedOutcomes.isEmpty { throw fail(["the hub's own operations changed outcome: \(report.changedOutcomes)"]) }
        statistics.restamped += report.restamped.count
        statistics.duplicates += report.duplicates
        statistics.buffered += report.buffered
        try integrated(report.integratedOperations)
        guard !report.integratedOperations.isEmpty else { return }
        for other in clients.indices where other != index || !report.restamped.isEmpty {
            inbox[other].append(.ops(report.integratedOperations))
        }
    }

    mutating func catchUp(_ index: Int) {
        if rng.percent(50) {
            inbox[index].append(.checkpoint(hub.checkpoint))
            note("hub pushes its checkpoint at \(hub.checkpoint.frontier) to \(clients[index].id)")
        } else {
            let frontier = clients[index].checkpoint.frontier
            let delta = Delta(checkpoint: frontier < hub.checkpoint.frontier ? hub.checkpoint : nil, operations: hub.log)
            inbox[index].append(.sync(delta))
            note("hub syncs \(clients[index].id): checkpoint \(delta.checkpoint.map { "\($0.frontier)" } ?? "-") and \(delta.operations.count) operations")
        }
    }

    mutating func deliver(to index: Int, everything: Bool) throws(TodoFuzzFailure) {
        guard !inbox[index].isEmpty else { return }
        touched.insert(index)
        let count = everything ? inbox[index].count : rng.inRange(1...min(3, inbox[index].count))
        for _ in 0..<count {
            let pick = rng.below(inbox[index].count)
            let message = everything || !rng.percent(10) ? inbox[index].remove(at: pick) : inbox[index][pick]
            try receive(message, at: index)
        }
    }

    mutating func receive(_ message: Message, at index: Int) throws(TodoFuzzFailure) {
        let id = clients[index].id
        let fresh = { ReplicaID(1_000_000) }
        switch message {
        case let .ops(ops):
            var ops = ops
            if rng.percent(30) { rng.shuffle(&ops) }
            let report = clients[index].receive(ops)
            note("relay to \(id): \(ops.map { "\($0.id)@\($0.lamport)" }) moved \(report.restamped) changed \(report.changedOutcomes.map { "\($0.0) \($0.1)" }) -> [\(idsText(clients[index]))]")
            try merged(report, at: index)
        case let .checkpoint(checkpoint):
            let result = Result { () throws(CheckpointRefusal) in try clients[index].adopt(checkpoint, freshID: fresh) }
            switch result {
            case let .failure(refusal):
                throw fail(["\(id) refused the hub's checkpoint at \(checkpoint.frontier): \(refusal)"])
            case let .success(report):
                note("\(id) adopts checkpoint at \(checkpoint.frontier): \(report.adopted) -> [\(idsText(clients[index]))]")
                if report.adopted { statistics.checkpointsAdopted += 1 }
                if !report.rebased.isEmpty || clients[index].id != id { throw fail(["\(id) rebased on a sealing hub's checkpoint: \(report.rebased)"]) }
            }
        case let .sync(delta):
            let (adopt, merge) = clients[index].apply(delta, freshID: fresh)
            note("\(id) syncs: checkpoint \(delta.checkpoint.map { "\($0.frontier)" } ?? "-") adopted \(adopt.adopted) changed \(merge.changedOutcomes.map { "\($0.0) \($0.1)" }) -> [\(idsText(clients[index]))]")
            statistics.syncs += 1
            if adopt.adopted { statistics.checkpointsAdopted += 1 }
            if let refusal = adopt.refusal { throw fail(["\(id) refused the hub's checkpoint: \(refusal)"]) }
            if !adopt.rebased.isEmpty || clients[index].id != id { throw fail(["\(id) rebased on a sealing hub's sync: \(adopt.rebased)"]) }
            try merged(merge, at: index)
        }
    }

    mutating func merged(_ report: MergeReport<TodoList>, at index: Int) throws(TodoFuzzFailure) {
        if !report.refused.isEmpty { throw fail(["\(clients[index].id) refused the hub's operations: \(report.refused)"]) }
        for (id, _) in report.changedOutcomes {
            if id.replica != clients[index].id { throw fail(["\(clients[index].id) reports a changed outcome of \(id), not its own"]) }
            statistics.outcomesTakenBack += 1
        }
    }

    // MARK: The hub's ledger

    /// Records what the hub integrated, in order: replays it on the mirror
    /// and the model, compares outcomes, notices and the list, and books
    /// adds and deletes in the plain set of ids.
    mutating func integrated(_ ops: [ReminderOp]) throws(TodoFuzzFailure) {
        var problems: [String] = []
        for op in ops {
            if acked[op.id] != nil { problems.append("the hub integrated \(op.id) twice") }
            let notices = TodoList.notices(of: op, in: mirror)
            let expectedNotices = model.notices(of: op.change, by: op.author)
            if notices.map({ "\($0.to) \($0.field ?? "-") \($0.text ?? "-") \($0.item ?? "-")" })
                != expectedNotices.map({ "\($0.to) \($0.field.rawValue) \($0.text) \(op.change.itemID)" }) {
                problems.append("\(op.id) \(op.change) by \(op.author): notices \(notices), the model says \(expectedNotices)")
            }
            if notices.contains(where: { $0.code != "overwritten" || $0.to == op.author }) { problems.append("odd notices \(notices)") }
            statistics.notices += notices.count
            if case let .edit(id, title, memo) = op.change, let entry = mirror.item(id) {
                for (edit, current) in [(title, entry.title), (memo, entry.memo)] {
                    if let edit, let base = edit.base, base != current, edit.text != base, edit.text != current,
                       case (_, false) = TodoModel.merge(edit, over: current) { statistics.merges += 1 }
                }
            }
            switch op.change {
            case let .add(_, after?, _, _), let .move(_, after?):
                if mirror.deleter(of: after) != nil { statistics.afterTombstone += 1 }
            default: break
            }
            let outcome = TodoList.apply(op, to: &mirror)
            let modelled = model.apply(op.change, by: op.author)
            if let onHub = hub.outcome(of: op.id), onHub != outcome {
                problems.append("\(op.id) \(op.change) is \(onHub) on the hub, \(outcome) replayed in the order it was integrated")
            }
            if modelled != outcome { problems.append("\(op.id) \(op.change) by \(op.author) was \(outcome), the model says \(modelled)") }
            if !model.matches(mirror) { problems.append("after \(op.id) \(op.change): the list is [\(idsText(mirror))], the model's [\(model.visibleIDs.joined(separator: " "))]") }
            acked[op.id] = outcome
            finalStamp[op.id] = op.stamp
            switch (op.change, outcome) {
            case let (.add(id, _, _, _), .applied):
                if !live.insert(id).inserted { problems.append("\(id) was added while on the list") }
            case let (.delete(id), .applied):
                if live.remove(id) == nil { problems.append("\(id) was deleted while not on the list") }
            default: break
            }
            switch outcome {
            case .applied:
                let name: String = switch op.change {
                case .add: "add"
                case .edit: "edit"
                case .done: "done"
                case .move: "move"
                case .delete: "delete"
                }
                statistics.appliedByHub[name, default: 0] += 1
            case let .refused(refusal): statistics.refusedByHub[refusal.code, default: 0] += 1
            case .unchanged: break
            }
            note("hub integrates \(op.id)@\(op.lamport) \(op.change) by \(op.author): \(outcome) [\(idsText(mirror))]")
        }
        if !problems.isEmpty { throw fail(problems) }
    }

    // MARK: Checks

    mutating func check() throws(TodoFuzzFailure) {
        var problems: [String] = []
        defer { touched = [] }
        for index in touched {
            let replica = index == Self.hubIndex ? hub : clients[index]
            problems += (replica.checkInvariants() + TodoModel.problems(of: replica)).map { "\(replica.id): \($0)" }
        }
        // An ack is final: the hub's outcome of what it integrated never changes.
        for (op, outcome) in zip(hub.log, hub.outcomes) {
            guard let ack = acked[op.id] else {
                problems.append("the hub holds \(op.id), which it never reported integrated")
                continue
            }
            if ack != outcome { problems.append("\(op.id) \(op.change) by \(op.author) was acked \(ack) but is now \(outcome)") }
            if finalStamp[op.id] != op.stamp { problems.append("\(op.id) was integrated at \(String(describing: finalStamp[op.id])), is now at \(op.stamp)") }
        }
        if hub.checkpoint.frontier != hubFrontier {
            statistics.compactions += 1
            hubFrontier = hub.checkpoint.frontier
        }
        // The hub only appends: its state is what it integrated, in that order.
        if hub.state != mirror { problems.append("the hub shows [\(idsText(hub))], its integrated operations in order give [\(idsText(mirror))]") }
        // Nothing lost that was not deleted; nothing twice.
        let shown = hub.state.items.map(\.id)
        if Set(shown) != live || shown.count != live.count {
            problems.append("the hub shows \(shown.sorted()), the applied adds less the applied deletes are \(live.sorted())")
        }
        for index in touched where index != Self.hubIndex {
            let client = clients[index]
            if client.versions == hub.versions, client.log.allSatisfy({ finalStamp[$0.id] == $0.stamp }), client.state != hub.state {
                problems.append("\(client.id) holds every operation at the hub's stamps but shows [\(idsText(client))], the hub [\(idsText(hub))]")
            }
        }
        if !problems.isEmpty { throw fail(problems) }
    }

    mutating func finalSync() throws(TodoFuzzFailure) {
        note("final delivery")
        for index in clients.indices { try send(from: index, everything: true) }
        touched.insert(Self.hubIndex)
        try check()
        if hub.pendingCount != 0 { throw fail(["the hub still buffers \(hub.pendingCount) operations after everything was sent"]) }
        for index in clients.indices { try deliver(to: index, everything: true) }
        touched = Set(clients.indices).union([Self.hubIndex])
        try check()
        var problems: [String] = []
        for client in clients {
            if client.versions != hub.versions { problems.append("\(client.id) versions \(client.versions.entries), the hub's \(hub.versions.entries)") }
            if client.state != hub.state { problems.append("\(client.id) shows [\(idsText(client))], the hub [\(idsText(hub))]") }
            for op in client.log where finalStamp[op.id] != op.stamp {
                problems.append("\(client.id) holds \(op.id) at \(op.stamp), the hub's stamp is \(String(describing: finalStamp[op.id]))")
            }
            if client.pendingCount != 0 { problems.append("\(client.id) still buffers \(client.pendingCount) operations") }
        }
        if !problems.isEmpty { throw fail(problems) }
        for index in clients.indices {
            inbox[index] = []
            let delta = Delta(checkpoint: clients[index].checkpoint.frontier < hub.checkpoint.frontier ? hub.checkpoint : nil, operations: hub.log)
            try receive(.sync(delta), at: index)
        }
        touched = Set(clients.indices)
        try check()
        for client in clients {
            if client.checkpoint != hub.checkpoint { problems.append("\(client.id) checkpoint at \(client.checkpoint.frontier), the hub's at \(hub.checkpoint.frontier)") }
            if client.log.map(\.stamp) != hub.log.map(\.stamp) { problems.append("\(client.id) orders its log unlike the hub") }
            if client.state != hub.state { problems.append("\(client.id) shows [\(idsText(client))] after the last sync") }
            for (op, outcome) in zip(client.log, client.outcomes) where acked[op.id] != outcome {
                problems.append("\(client.id): \(op.id) \(op.change) by \(op.author) is \(outcome), acked \(String(describing: acked[op.id]))")
            }
        }
        if !problems.isEmpty { throw fail(problems) }
    }
}
