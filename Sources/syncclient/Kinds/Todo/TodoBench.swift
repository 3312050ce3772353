import BoardCRDT
import SyncWire
import WebSocketLoop

/// One reminder as a todo bench client reads it from a `state` frame.
struct TodoItemView: Equatable {
    var id: String
    var title: String
    var done: Bool
}

/// What a todo bench client reads from a `state` frame (docs/rules/todo.md,
/// "Frames"): where the kind's members begin, and on demand the items.
/// Scanned by hand: the bench reads every state frame of 50 clients.
enum TodoView {
    /// Where `"items":[` begins, or nil: equal tails with equal versions are equal lists.
    static func itemsAt(_ bytes: UnsafeRawBufferPointer) -> Int? {
        BenchFrame.after("\"items\":[", in: bytes, from: 0).map { $0 - 9 }
    }

    /// The items of a tail that begins with `"items":[` (as the hub writes
    /// them: id, title, memo, done, in that order). Empty if it does not parse.
    static func items(_ tail: [UInt8]) -> [TodoItemView] {
        var items: [TodoItemView] = []
        var at = 9
        while at < tail.count, tail[at] == UInt8(ascii: "{") {
            guard let (id, afterID) = string(tail, after: "{\"id\":", at: at),
                  let (title, afterTitle) = string(tail, after: ",\"title\":", at: afterID),
                  let (_, afterMemo) = string(tail, after: ",\"memo\":", at: afterTitle),
                  afterMemo + 8 < tail.count else { return [] }
            let done = tail[afterMemo + 8] == UInt8(ascii: "t") // ,"done":t
            items.append(TodoItemView(id: id, title: title, done: done))
            at = afterMemo + 8
            while at < tail.count, tail[at] != UInt8(ascii: "}") { at += 1 }
            at += 1
            if at < tail.count, tail[at] == UInt8(ascii: ",") { at += 1 }
        }
        return items
    }

    /// The JSON string that follows `prefix` at `at`, unescaped, and the index after it.
    private static func string(_ bytes: [UInt8], after prefix: StaticString, at: Int) -> (String, Int)? {
        let count = prefix.utf8CodeUnitCount
        guard at + count < bytes.count else { return nil }
        for offset in 0..<count where bytes[at + offset] != prefix.utf8Start[offset] { return nil }
        var index = at + count
        guard bytes[index] == UInt8(ascii: "\"") else { return nil }
        index += 1
        var text: [UInt8] = []
        while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
            if bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count {
                index += 1
                // The bench writes plain ASCII titles; an escape keeps its character (\n, \u are rare here).
            }
            text.append(bytes[index])
            index += 1
        }
        return (String(decoding: text, as: UTF8.self), index + 1)
    }

    /// Whether a frame is a `notice` (e.g. `overwritten`, TC2).
    static func isNotice(_ bytes: UnsafeRawBufferPointer) -> Bool {
        BenchFrame.after("\"type\":\"notice\"", in: bytes, from: 0) != nil
    }
}

/// One worker's todo figures and the ids its clients add.
struct TodoTally: BenchKeeping {
    /// Intents sent in the measured window, by type.
    var sentInWindow: [String: Int] = [:]
    /// `notice` frames (an edit of someone's was overwritten) received in the window.
    var notices = 0
    /// Added ids: `RUN-WORKER-N`, the run tag keeping reruns on one hub apart (T2: `duplicate_id`).
    let runTag = String(UInt32.random(in: 0...UInt32.max), radix: 36)
    var added = 0

    /// Edits of a title are most of the work, then `done`; adds and deletes
    /// (15 %) keep the list near `target` items.
    static let editPercent = 70
    static let donePercent = 15

    mutating func newID(worker: Int) -> String {
        added += 1
        return "\(runTag)-\(worker)-\(added)"
    }

    static func title(using random: inout some RandomNumberGenerator) -> String {
        "Reminder \(Int.random(in: 0..<1_000_000, using: &random))"
    }

    /// The next intent from a client's view of the list, and its type's name.
    mutating func next(_ items: [TodoItemView], target: Int, worker: Int,
                       using random: inout some RandomNumberGenerator) -> (TodoList.Intent, String) {
        let roll = Int.random(in: 0..<100, using: &random)
        if let item = items.randomElement(using: &random) {
            if roll < Self.editPercent {
                var title = Self.title(using: &random)
                if title == item.title { title += "!" }
                return (.edit(id: item.id, title: .init(title, base: item.title), memo: nil), "edit")
            }
            if roll < Self.editPercent + Self.donePercent {
                return (.done(id: item.id, done: !item.done), "done")
            }
            if items.count >= target { return (.delete(id: item.id), "delete") }
        }
        // One add in 10 goes to the top; the others after a random item.
        let after = Int.random(in: 0..<10, using: &random) == 0 ? nil : items.randomElement(using: &random)?.id
        return (.add(id: newID(worker: worker), after: after, title: Self.title(using: &random), memo: ""), "add")
    }
}

/// The todo part of a `--kind todo` report.
struct TodoSummary: Codable {
    /// The size each list is kept near, and each list's items at the end (as its first client saw them).
    var target: Int
    var finalItems: [String: Int]
    /// `overwritten` notices received in the window (TC2: concurrent edits of one title).
    var notices: Int
}

extension BenchWorker where Driver == TodoBench {
    /// A todo client's next intent, from the latest list it was shown.
    func sendTodoIntent(from peer: Peer, at now: UInt64, inWindow: Bool) -> Bool {
        guard let connection = peer.connection, connection.isOpen, !peer.stateTail.isEmpty else { return false }
        var random = SystemRandomNumberGenerator()
        let (intent, type) = tally.next(TodoView.items(peer.stateTail), target: plan.todoItems, worker: index, using: &random)
        if inWindow { tally.sentInWindow[type, default: 0] += 1 }
        sendTodo(intent, from: peer, on: connection, at: now)
        return true
    }

    /// Fills a list up to its target size at the start (the board's first
    /// client, before the warm-up ends): adds, each after the previous one.
    func prefillTodo(_ peer: Peer, at now: UInt64) {
        guard let connection = peer.connection, connection.isOpen else { return }
        let items = TodoView.items(peer.stateTail)
        var after = items.last?.id
        var random = SystemRandomNumberGenerator()
        for _ in items.count..<max(items.count, plan.todoItems) {
            let id = tally.newID(worker: index)
            sendTodo(.add(id: id, after: after, title: TodoTally.title(using: &random), memo: ""), from: peer, on: connection, at: now)
            after = id
        }
    }

    private func sendTodo(_ intent: TodoList.Intent, from peer: Peer, on connection: ClientConnection, at now: UInt64) {
        let ref = track(from: peer, at: now)
        client.send(ClientMessage<TodoList>.thinFrame(intent, ref: String(ref)), on: connection)
    }

    /// Every state frame: the list from `"items"` on (what convergence compares and intents are chosen from).
    func readTodo(_ bytes: UnsafeRawBufferPointer, of peer: Peer) {
        guard let at = TodoView.itemsAt(bytes) else { return }
        peer.stateTail = Array(UnsafeRawBufferPointer(rebasing: bytes[at...]))
    }
}

extension BenchReport {
    /// Fills the `--kind todo` figures in, after the run (the loops are quiet).
    mutating func addTodo(_ workers: [BenchWorker<TodoBench>], plan: BenchPlan, seconds: Double) {
        countAnswers(workers, plan: plan, seconds: seconds, sent: workers.map(\.tally.sentInWindow))
        var finalItems: [String: Int] = [:]
        for peer in workers.flatMap(\.peers) where finalItems[plan.boardNames[peer.board]] == nil && !peer.stateTail.isEmpty {
            finalItems[plan.boardNames[peer.board]] = TodoView.items(peer.stateTail).count
        }
        todo = TodoSummary(target: plan.todoItems, finalItems: finalItems,
                           notices: workers.reduce(0) { $0 + $1.tally.notices })
    }

    /// The summary of a `--kind todo` run: clients editing shared lists.
    func todoText(_ p: (Percentiles) -> String) -> String {
        var lines = [
            "lists \(boards) x clients \(clientsPerBoard) (\(sendersPerBoard) editing), " +
            "\(mode)\(targetRate > 0 ? " \(Int(targetRate)) intents/s" : ""), \(String(format: "%.1f", seconds)) s measured",
            "connected      \(connected) (failures \(connectFailures)); connect \(p(connectMillis))",
            "answers        \(Int(answersPerSecond ?? 0))/s: acknowledged \(operationsAcknowledged) (\(Int(acknowledgedPerSecond))/s), " +
            "refused \(Int(refusalsPerSecond ?? 0))/s, list changes \(Int(changesPerSecond))/s",
            "sent           \(Self.counts(intentsSent))",
            "refusals       \(Self.counts(refusals))",
            "notices        \(todo?.notices ?? 0) overwritten",
            "items          target \(todo?.target ?? 0), at the end \(Self.counts(todo?.finalItems))",
            "errors         \(errors) error frames, \(disconnects) connections lost during the run",
            "delivered      \(Int(statesDeliveredPerSecond)) states/s, \(Int(framesDeliveredPerSecond)) frames/s",
            "visibility     \(p(visibilityMillis))",
            "at every client \(p(visibilityAtEveryClientMillis))",
            "ack latency    \(p(ackMillis))",
        ]
        lines.insert(contentsOf: hubSplitLines(p), at: lines.count - 1)
        if let usage = hubUsageLine() { lines.append(usage) }
        if let benchCPUPercent { lines.append("bench itself   CPU \(Int(benchCPUPercent))%") }
        lines.append(converged ? "converged      yes: every client of every list shows the same items"
                               : "converged      NO: \(divergentBoards.joined(separator: ", "))")
        if unseen > 0 { lines.append("unseen         \(unseen) (operation, client) pairs never saw the change") }
        return lines.joined(separator: "\n")
    }
}

/// Clients of reminder lists editing, ticking, adding and deleting items.
enum TodoBench: BenchDriver {
    typealias Kind = TodoList
    typealias Tally = TodoTally

    static let optionHelp = "reminders edited"
    static var discussion: String {
        """
        reminder lists (/\(Kind.pathSegment)/PREFIX-N): each client joins as pN; the \
        first client of each list fills it to --items items at the start; then the senders send, from the \
        latest list they were shown, 70 % title edits of a random item with its shown title as base, \
        15 % done flips and 15 % adds (below --items) or deletes (at or above it); the summary adds \
        answers and refusals a second (no_such_item when an item was deleted meanwhile), overwritten \
        notices and each list's final size, and at the end every client must show the same items.
        """
    }
    static let refillsOnState = true

    static func begin(_ worker: BenchWorker<Self>, board peer: BenchWorker<Self>.Peer, at start: UInt64) {
        worker.prefillTodo(peer, at: start)
    }
    static func send(_ worker: BenchWorker<Self>, from peer: BenchWorker<Self>.Peer, at now: UInt64, inWindow: Bool) -> Bool {
        worker.sendTodoIntent(from: peer, at: now, inWindow: inWindow)
    }
    static func read(_ worker: BenchWorker<Self>, state: UnsafeRawBufferPointer, version: UInt64, of peer: BenchWorker<Self>.Peer,
                     inWindow: Bool) {
        worker.readTodo(state, of: peer)
    }
    static func other(_ worker: BenchWorker<Self>, frame: UnsafeRawBufferPointer, inWindow: Bool) {
        if inWindow, TodoView.isNotice(frame) { worker.tally.notices += 1 }
    }
    static func report(_ report: inout BenchReport, workers: [BenchWorker<Self>], plan: BenchPlan, seconds: Double) {
        report.addTodo(workers, plan: plan, seconds: seconds)
    }
    static func text(_ report: BenchReport, _ p: (BenchReport.Percentiles) -> String) -> String? { report.todoText(p) }
}
