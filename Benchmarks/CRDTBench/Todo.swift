// crdt-bench, "Shared reminders (issue 11)" (BENCHMARKS.md): the reminders
// list's engine next to the letter board, same run, interleaved.
// `crdt-bench todo` runs only this part.
//
// The list starts with `items` items (a checkpoint, as a hub loads it from
// its store). Its intents come from a seeded script made in a dry run
// (only the engine is timed, not the choice of intents), replayed on a
// fresh replica: a mix of add (after a random live item or at the top, the
// client naming the id, so that the script replays identically), edit of
// the title (with the base the person started from, or without), done,
// move and delete, in proportions that keep the list near its size.
// - local apply: one replica with the hub's settings (compaction on)
//   performs 10,000 operations;
// - client merge: two client replicas (compaction off) each record 10,000
//   operations on the same list without seeing each other (same Lamport
//   times: the histories interleave completely); timed: one's `receive` of
//   the other's 10,000 (a replay of 20,000);
// - hub merge: a replica with the hub's settings (`sealsOrder: true`) that
//   integrated one person's 10,000 receives the other's 10,000 (re-stamped
//   after what it holds, nothing replayed), as one batch;
// - memory: a board of 10,000 items (titles "Reminder 1234", memo empty,
//   made by 10,000 adds at random places): the size of its checkpoint state
//   as JSON (what the store keeps), the bytes its storage takes (the
//   entries' buffer and out-of-line strings, counted), and the resident set
//   size before and after building it.
// The letter board's figures (`measureKind`, Kinds.swift) are measured in
// the same repetitions, alternating, for the ratios.
import BoardCRDT
import Foundation

/// Seeded people acting on a reminders list.
struct TodoPeople {
    var generator: Generator
    /// Ids of new items: `prefix` + a counter (unique per script).
    var prefix: String
    var added = 0

    init(seed: UInt64, prefix: String) {
        generator = Generator(state: seed)
        self.prefix = prefix
    }

    /// A random live item's id (the list is never empty in these scripts).
    mutating func liveItem(_ state: TodoList.State) -> String? {
        let entries = state.entries
        guard !entries.isEmpty else { return nil }
        for _ in 0..<64 {
            let entry = entries[generator.below(entries.count)]
            if !entry.isDeleted { return entry.id }
        }
        return entries.first { !$0.isDeleted }?.id
    }

    mutating func next(_ state: TodoList.State, targetSize: Int) -> TodoList.Intent {
        let roll = generator.below(100)
        guard let id = liveItem(state) else { return add(after: nil) }
        let live = state.entries.count - state.entries.reduce(0) { $0 + ($1.isDeleted ? 1 : 0) }
        // Adds and deletes balance around the target size.
        let addShare = live < targetSize ? 25 : 15
        if roll < addShare { return add(after: generator.below(10) == 0 ? nil : liveItem(state)) }
        if roll < 40 { return .delete(id: id) }
        if roll < 70 {
            let current = state.item(id)?.title ?? ""
            let text = current.count < 60 ? current + " \(generator.below(100))" : "Reminder \(generator.below(100_000))"
            return .edit(id: id, title: TodoList.TextEdit(text, base: generator.below(4) == 0 ? nil : current), memo: nil)
        }
        if roll < 85 { return .done(id: id, done: !(state.item(id)?.done ?? false)) }
        var after = generator.below(10) == 0 ? nil : liveItem(state)
        if after == id { after = nil }
        return .move(id: id, after: after)
    }

    mutating func add(after: String?) -> TodoList.Intent {
        added += 1
        return .add(id: "\(prefix)\(added)", after: after, title: "Reminder \(added)", memo: added % 4 == 0 ? "memo \(added)" : "")
    }
}

enum TodoBench {
    /// A list of `count` items made by adds at random places, as a checkpoint.
    static func list(items count: Int, seed: UInt64) -> Checkpoint<TodoList> {
        var replica = Replica<TodoList>(id: ReplicaID(90), limits: ReplicaLimits(compacts: false))
        var generator = Generator(state: seed)
        var ids: [String] = []
        for index in 0..<count {
            let after = ids.isEmpty || generator.below(20) == 0 ? nil : ids[generator.below(ids.count)]
            let id = "i\(index)"
            precondition((try? replica.perform(.add(id: id, after: after, title: "Reminder \(index)", memo: ""), by: "p")) != nil)
            ids.append(id)
        }
        return Checkpoint(state: replica.state, frontier: .origin, versions: VersionVector())
    }

    /// `count` intents that a replica starting at `checkpoint` records one by one.
    static func script(count: Int, seed: UInt64, prefix: String, from checkpoint: Checkpoint<TodoList>) -> [(TodoList.Intent, String)] {
        var replica = Replica<TodoList>(id: ReplicaID(99), checkpoint: checkpoint, limits: ReplicaLimits(compacts: false))
        let size = checkpoint.state.items.count
        var people = TodoPeople(seed: seed, prefix: prefix)
        var script: [(TodoList.Intent, String)] = []
        var attempts = 0
        while script.count < count {
            attempts += 1
            precondition(attempts < count * 10, "the todo script is stuck")
            let intent = people.next(replica.state, targetSize: size)
            let author = "\(prefix)\(people.generator.below(4))"
            if (try? replica.perform(intent, by: author)) != nil { script.append((intent, author)) }
        }
        return script
    }

    static func measure(operations: Int, items: Int, round: UInt64, into figures: inout KindFigures) {
        let start = list(items: items, seed: 500 + round)
        // Local apply, hub settings.
        let localScript = script(count: operations, seed: 1000 + round, prefix: "p", from: start)
        var local = Replica<TodoList>(id: ReplicaID(1), checkpoint: start)
        let began = now()
        let recorded = perform(localScript, on: &local)
        let elapsed = now() - began
        precondition(recorded == operations, "todo: replayed script recorded \(recorded) of \(operations)")
        figures.localOpsPerSecond.append(Double(recorded) / elapsed)
        sink &+= local.log.count

        // Two people on the same list, concurrently.
        let clients = ReplicaLimits(compacts: false)
        var a = Replica<TodoList>(id: ReplicaID(1), checkpoint: start, limits: clients)
        var b = Replica<TodoList>(id: ReplicaID(2), checkpoint: start, limits: clients)
        let scriptA = script(count: operations, seed: 2000 + round, prefix: "a", from: start)
        let scriptB = script(count: operations, seed: 3000 + round, prefix: "b", from: start)
        precondition(perform(scriptA, on: &a) == operations && perform(scriptB, on: &b) == operations, "todo: concurrent scripts")
        let fromA = a.log, fromB = b.log

        var client = b
        let mergeStart = now()
        let report = client.receive(fromA)
        let mergeElapsed = now() - mergeStart
        precondition(report.integrated.count == operations, "todo: client merge integrated \(report.integrated.count)")
        figures.clientMergeMillis.append(mergeElapsed * 1000)
        figures.refusedAfterMerge = client.outcomes.filter(\.isRefused).count
        figures.refusedCodes = [:]
        for case let .refused(refusal) in client.outcomes { figures.refusedCodes[refusal.code, default: 0] += 1 }
        sink &+= client.log.count

        var hub = Replica<TodoList>(id: ReplicaID(3), checkpoint: start, limits: ReplicaLimits(sealsOrder: true))
        var index = 0
        while index < fromB.count {
            hub.receive(Array(fromB[index..<min(index + 256, fromB.count)]))
            index += 256
        }
        let hubStart = now()
        let hubReport = hub.receive(fromA)
        let hubElapsed = now() - hubStart
        precondition(hubReport.integrated.count == operations, "todo: hub merge integrated \(hubReport.integrated.count)")
        figures.hubMergeMillis.append(hubElapsed * 1000)
        figures.restampedAtHub = hubReport.restamped.count
        sink &+= hub.log.count
    }

    /// The bytes the state's storage takes: the entries' array buffer
    /// (capacity x stride of `Entry`), plus each string too long to be
    /// stored inline (Swift keeps up to 15 UTF-8 bytes inside the string
    /// itself; longer ones get a heap buffer: their bytes + a 32-byte header).
    static func stateBytes(_ state: TodoList.State) -> Int {
        var bytes = state.entries.capacity * MemoryLayout<TodoList.Entry>.stride
        for entry in state.entries {
            for text in [entry.id, entry.title, entry.memo, entry.titleBy, entry.memoBy, entry.deletedBy ?? ""] where text.utf8.count > 15 {
                bytes += 32 + text.utf8.count
            }
        }
        return bytes
    }

    /// The memory of a board of `items` items: JSON size of its state, the
    /// bytes of its storage, and RSS growth while the replica holding it was
    /// built (small when earlier runs left freed memory to reuse).
    static func memory(items: Int) -> (json: Int, storage: Int, rss: Int, tombstoneJSON: Int) {
        let rssBefore = residentKilobytes()
        let checkpoint = list(items: items, seed: 77)
        let replica = Replica<TodoList>(id: ReplicaID(1), checkpoint: checkpoint)
        let rssAfter = residentKilobytes()
        let json = (try? JSONEncoder().encode(replica.state).count) ?? 0
        // The same board after 1,000 deletes (the tombstones it keeps).
        var withTombstones = replica
        for index in stride(from: 0, to: 2 * TodoList.tombstonesKept, by: 2) {
            _ = try? withTombstones.perform(.delete(id: "i\(index)"), by: "p")
        }
        let tombstoneJSON = (try? JSONEncoder().encode(withTombstones.state).count) ?? 0
        sink &+= replica.state.entries.count &+ withTombstones.state.entries.count
        return (json, stateBytes(replica.state), (rssAfter - rssBefore) * 1024, tombstoneJSON)
    }

    /// Local apply alone on lists of several sizes: how the cost grows with the list.
    static func scaling(operations: Int) -> [(items: Int, opsPerSecond: Double)] {
        [100, 1_000, 10_000].map { items in
            let start = list(items: items, seed: 11)
            let script = script(count: operations, seed: 12, prefix: "s", from: start)
            var replica = Replica<TodoList>(id: ReplicaID(1), checkpoint: start)
            let began = now()
            let recorded = perform(script, on: &replica)
            let elapsed = now() - began
            sink &+= replica.log.count
            return (items, Double(recorded) / elapsed)
        }
    }
}

/// Prints the todo table; letters and todo alternate within each repetition.
func runTodo(repetitions: Int, operations: Int, items: Int) {
    // Memory first, in a fresh process, so RSS growth is not hidden by memory earlier runs freed.
    let memory = TodoBench.memory(items: 10_000)
    var letters = KindFigures(), todo = KindFigures(), warm = KindFigures()
    measureKind(LetterBoard.self, operations: 2_000, round: 999, into: &warm)
    TodoBench.measure(operations: 2_000, items: items, round: 999, into: &warm)
    for round in 0..<repetitions {
        if round % 2 == 0 {
            measureKind(LetterBoard.self, operations: operations, round: UInt64(round), into: &letters)
            TodoBench.measure(operations: operations, items: items, round: UInt64(round), into: &todo)
        } else {
            TodoBench.measure(operations: operations, items: items, round: UInt64(round), into: &todo)
            measureKind(LetterBoard.self, operations: operations, round: UInt64(round), into: &letters)
        }
    }
    func spread(_ values: [Double], _ scale: Double = 1) -> String {
        let sorted = values.sorted()
        return "\(format(sorted.first! * scale))-\(format(sorted.last! * scale))"
    }
    let n = operations.formatted
    print("")
    print("Shared reminders: todo on a list of \(items.formatted) items and letters, same run, alternating "
        + "(median of \(repetitions); \(n) operations per person)")
    print(pad("measure", 44) + pad("letters", 22) + pad("todo", 22) + "todo / letters")
    let ll = median(letters.localOpsPerSecond), tl = median(todo.localOpsPerSecond)
    print(pad("local apply \(n) ops (compaction on)", 44) + pad("\(format(ll / 1e3, 1)) k ops/s", 22)
        + pad("\(format(tl / 1e3, 2)) k ops/s", 22) + "\(format(tl / ll, 4))x the rate")
    for (label, l, t) in [("merge \(n) + \(n), client replicas", median(letters.clientMergeMillis), median(todo.clientMergeMillis)),
                          ("merge \(n) + \(n), hub (sealsOrder)", median(letters.hubMergeMillis), median(todo.hubMergeMillis))] {
        print(pad(label, 44) + pad("\(format(l, 3)) ms", 22) + pad("\(format(t, 3)) ms", 22) + "\(format(t / l, 3))x the time")
    }
    func codes(_ counts: [String: Int]) -> String {
        counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }
    print(pad("refused in the merged log (client merge)", 44) + pad("\(letters.refusedAfterMerge) of \(2 * operations)", 22)
        + pad("\(todo.refusedAfterMerge) of \(2 * operations)", 22))
    print(pad("  by code", 44) + pad(codes(letters.refusedCodes), 22) + codes(todo.refusedCodes))
    print(pad("re-stamped at the hub", 44) + pad("\(letters.restampedAtHub)", 22) + pad("\(todo.restampedAtHub)", 22))
    print("spread: local letters \(spread(letters.localOpsPerSecond, 1e-3)) todo \(spread(todo.localOpsPerSecond, 1e-3)) k ops/s;"
        + " client merge letters \(spread(letters.clientMergeMillis)) todo \(spread(todo.clientMergeMillis)) ms;"
        + " hub merge letters \(spread(letters.hubMergeMillis)) todo \(spread(todo.hubMergeMillis)) ms")
    let scaling = TodoBench.scaling(operations: operations)
    let bySize = scaling.map { "\($0.items.formatted) items \(format($0.opsPerSecond / 1e3, 1)) k ops/s" }
    print("todo local apply by list size: " + bySize.joined(separator: "; "))
    print("board of 10,000 items: state as JSON \(memory.json.formatted) bytes (\(format(Double(memory.json) / 10_000, 1)) per item); "
        + "storage \(memory.storage.formatted) bytes (\(format(Double(memory.storage) / 10_000, 1)) per item, "
        + "entries buffer + out-of-line strings, stride of Entry \(MemoryLayout<TodoList.Entry>.stride)); "
        + "RSS +\(memory.rss.formatted) bytes; with \(TodoList.tombstonesKept.formatted) tombstones: "
        + "JSON \(memory.tombstoneJSON.formatted) bytes")
}
