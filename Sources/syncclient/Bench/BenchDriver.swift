import BoardCRDT
import SyncWire

/// What a kind of board adds to `syncclient bench --kind`: its intents, what
/// it reads from a state frame, how it counts answers and what its report
/// says. `BenchWorker` and `BenchRunner` run every kind through this; a kind
/// brings its driver in a file of its own (`StockBench.swift`, ...) and one
/// line in `BenchKind.driver`.
protocol BenchDriver {
    /// Whether clients `join` under a name (`p0`, `p1`, ...) once connected.
    static var joins: Bool { get }
    /// Whether a saturated run refills a client when a state arrives (kinds
    /// whose next intent depends on what was shown), not only on answers.
    static var refillsOnState: Bool { get }
    /// Each board's first client, when sending begins (letters select six
    /// letters to move, a list is filled to `--items`).
    static func begin(_ worker: BenchWorker, board peer: BenchWorker.Peer, at start: UInt64)
    /// Sends `peer`'s next intent; false when it has nothing to send now.
    static func send(_ worker: BenchWorker, from peer: BenchWorker.Peer, at now: UInt64, inWindow: Bool) -> Bool
    /// A state frame `peer` received.
    static func read(_ worker: BenchWorker, state: UnsafeRawBufferPointer, version: UInt64, of peer: BenchWorker.Peer, inWindow: Bool)
    /// An answer to intent `ref` of `peer`.
    static func answered(_ worker: BenchWorker, ref: Int, of peer: BenchWorker.Peer, acked: Bool, version: UInt64, sentInWindow: Bool)
    /// A frame that is neither a state nor an answer (a notice).
    static func other(_ worker: BenchWorker, frame: UnsafeRawBufferPointer, inWindow: Bool)
    /// The kind's figures, once the run is over.
    static func report(_ report: inout BenchReport, workers: [BenchWorker], plan: BenchPlan, seconds: Double)
    /// The kind's summary, or nil for the letters' own.
    static func text(_ report: BenchReport, _ p: (BenchReport.Percentiles) -> String) -> String?
}

extension BenchDriver {
    static var joins: Bool { true }
    static var refillsOnState: Bool { false }
    static func begin(_ worker: BenchWorker, board peer: BenchWorker.Peer, at start: UInt64) {}
    static func read(_ worker: BenchWorker, state: UnsafeRawBufferPointer, version: UInt64, of peer: BenchWorker.Peer, inWindow: Bool) {}
    static func answered(_ worker: BenchWorker, ref: Int, of peer: BenchWorker.Peer, acked: Bool, version: UInt64, sentInWindow: Bool) {}
    static func other(_ worker: BenchWorker, frame: UnsafeRawBufferPointer, inWindow: Bool) {}
    static func report(_ report: inout BenchReport, workers: [BenchWorker], plan: BenchPlan, seconds: Double) {}
    static func text(_ report: BenchReport, _ p: (BenchReport.Percentiles) -> String) -> String? { nil }
}

extension BenchKind {
    /// The one table of kinds the bench drives.
    var driver: any BenchDriver.Type {
        switch self {
        case .letters: LettersBench.self
        case .set: SetBench.self
        case .stock: StockBench.self
        case .todo: TodoBench.self
        case .shop: ShopBench.self
        }
    }
}

/// The letter board: six letters selected by each board's first client, then moved about.
enum LettersBench: BenchDriver {
    static let joins = false

    static func begin(_ worker: BenchWorker, board peer: BenchWorker.Peer, at start: UInt64) {
        guard !worker.plan.raw else { return }
        for letter in ["A", "B", "C", "D", "E", "F"] { worker.send(.select(Letter(letter)!), from: peer, at: start) }
    }

    static func send(_ worker: BenchWorker, from peer: BenchWorker.Peer, at now: UInt64, inWindow: Bool) -> Bool {
        // A closed connection sends nothing (and must not keep `refill` looping).
        guard peer.connection?.isOpen == true else { return false }
        let letter = Letter(index: Int.random(in: 0..<6))!
        worker.send(.move(letter, to: Int.random(in: 1...6)), from: peer, at: now)
        return true
    }
}

enum StockBench: BenchDriver {
    static func send(_ worker: BenchWorker, from peer: BenchWorker.Peer, at now: UInt64, inWindow: Bool) -> Bool {
        worker.sendStockIntent(from: peer, at: now, inWindow: inWindow)
    }
    static func read(_ worker: BenchWorker, state: UnsafeRawBufferPointer, version: UInt64, of peer: BenchWorker.Peer, inWindow: Bool) {
        worker.readStock(state, version: version, of: peer)
    }
    static func answered(_ worker: BenchWorker, ref: Int, of peer: BenchWorker.Peer, acked: Bool, version: UInt64, sentInWindow: Bool) {
        worker.stockTally.answered(ref: ref, board: peer.board, acked: acked, version: version, sentInWindow: sentInWindow)
    }
    static func report(_ report: inout BenchReport, workers: [BenchWorker], plan: BenchPlan, seconds: Double) {
        report.addStock(workers, plan: plan, seconds: seconds)
    }
    static func text(_ report: BenchReport, _ p: (BenchReport.Percentiles) -> String) -> String? { report.stockText(p) }
}

enum ShopBench: BenchDriver {
    static let refillsOnState = true
    static func send(_ worker: BenchWorker, from peer: BenchWorker.Peer, at now: UInt64, inWindow: Bool) -> Bool {
        worker.sendShopIntent(from: peer, at: now, inWindow: inWindow)
    }
    static func read(_ worker: BenchWorker, state: UnsafeRawBufferPointer, version: UInt64, of peer: BenchWorker.Peer, inWindow: Bool) {
        worker.readShop(state, version: version, of: peer)
    }
    static func answered(_ worker: BenchWorker, ref: Int, of peer: BenchWorker.Peer, acked: Bool, version: UInt64, sentInWindow: Bool) {
        worker.shopTally.answered(ref: ref, board: peer.board, acked: acked, version: version, sentInWindow: sentInWindow)
    }
    static func report(_ report: inout BenchReport, workers: [BenchWorker], plan: BenchPlan, seconds: Double) {
        report.addShop(workers, plan: plan, seconds: seconds)
    }
    static func text(_ report: BenchReport, _ p: (BenchReport.Percentiles) -> String) -> String? { report.shopText(p) }
}

enum TodoBench: BenchDriver {
    static let refillsOnState = true
    static func begin(_ worker: BenchWorker, board peer: BenchWorker.Peer, at start: UInt64) { worker.prefillTodo(peer, at: start) }
    static func send(_ worker: BenchWorker, from peer: BenchWorker.Peer, at now: UInt64, inWindow: Bool) -> Bool {
        worker.sendTodoIntent(from: peer, at: now, inWindow: inWindow)
    }
    static func read(_ worker: BenchWorker, state: UnsafeRawBufferPointer, version: UInt64, of peer: BenchWorker.Peer, inWindow: Bool) {
        worker.readTodo(state, of: peer)
    }
    static func other(_ worker: BenchWorker, frame: UnsafeRawBufferPointer, inWindow: Bool) {
        if inWindow, TodoView.isNotice(frame) { worker.todoTally.notices += 1 }
    }
    static func report(_ report: inout BenchReport, workers: [BenchWorker], plan: BenchPlan, seconds: Double) {
        report.addTodo(workers, plan: plan, seconds: seconds)
    }
    static func text(_ report: BenchReport, _ p: (BenchReport.Percentiles) -> String) -> String? { report.todoText(p) }
}

enum SetBench: BenchDriver {
    static let refillsOnState = true
    static func send(_ worker: BenchWorker, from peer: BenchWorker.Peer, at now: UInt64, inWindow: Bool) -> Bool {
        worker.sendSetIntent(from: peer, at: now, inWindow: inWindow)
    }
    static func read(_ worker: BenchWorker, state: UnsafeRawBufferPointer, version: UInt64, of peer: BenchWorker.Peer, inWindow: Bool) {
        worker.readSet(state, of: peer, inWindow: inWindow)
    }
    static func report(_ report: inout BenchReport, workers: [BenchWorker], plan: BenchPlan, seconds: Double) {
        report.countAnswers(workers, plan: plan, seconds: seconds, sent: workers.map(\.intentsSent))
        report.matches = workers.reduce(0) { $0 + $1.matches }
        report.mismatches = workers.reduce(0) { $0 + $1.mismatches }
    }
    static func text(_ report: BenchReport, _ p: (BenchReport.Percentiles) -> String) -> String? { report.setText(p) }
}
