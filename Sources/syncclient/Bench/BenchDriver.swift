import BoardCRDT
import SyncWire

/// What a kind of board adds to `syncclient bench --kind`: its intents, what
/// it reads from a state frame, how it counts answers and what its report
/// says. `BenchWorker` and `BenchRunner` run every kind through this; a kind
/// brings its driver in its own folder (`Kinds/Stock/StockBench.swift`, ...)
/// and names it in its `WatchedKind` conformance (`typealias Bench`).
protocol BenchDriver: SendableMetatype {
    /// The kind it drives (its path segment, its name for `--kind`, its frames).
    associatedtype Kind: WireKind
    /// What each client keeps of the board it was shown (a plan of cards, a stock).
    associatedtype Record: BenchKeeping = NothingKept
    /// What each worker counts for the report (intents in flight, what acks moved).
    associatedtype Tally: BenchKeeping = NothingKept
    /// What the kind's boards are and what its clients do, for `--kind`'s
    /// help: "players choosing cards" (it adds "on /SEGMENT/NAME").
    static var optionHelp: String { get }
    /// What a run of this kind does, for `bench --help`: it follows
    /// "With --kind NAME the boards are".
    static var discussion: String { get }
    /// Whether clients `join` under a name (`p0`, `p1`, ...) once connected.
    static var joins: Bool { get }
    /// Whether the worker reads a state's `order` (the letter board's, which the convergence check compares).
    static var readsOrder: Bool { get }
    /// Whether refusals of intents sent in the window are counted by code (the report's `refusals`).
    static var countsRefusals: Bool { get }
    /// Whether it can drive a plain broadcaster (`--raw`).
    static var drivesBroadcaster: Bool { get }
    /// Whether a saturated run refills a client when a state arrives (kinds
    /// whose next intent depends on what was shown), not only on answers.
    static var refillsOnState: Bool { get }
    /// Each board's first client, when sending begins (letters select six
    /// letters to move, a list is filled to `--items`).
    static func begin(_ worker: BenchWorker<Self>, board peer: BenchWorker<Self>.Peer, at start: UInt64)
    /// Sends `peer`'s next intent; false when it has nothing to send now.
    static func send(_ worker: BenchWorker<Self>, from peer: BenchWorker<Self>.Peer, at now: UInt64, inWindow: Bool) -> Bool
    /// A state frame `peer` received.
    static func read(_ worker: BenchWorker<Self>, state: UnsafeRawBufferPointer, version: UInt64, of peer: BenchWorker<Self>.Peer,
                     inWindow: Bool)
    /// An answer to intent `ref` of `peer`.
    static func answered(_ worker: BenchWorker<Self>, ref: Int, of peer: BenchWorker<Self>.Peer, acked: Bool, version: UInt64,
                         sentInWindow: Bool)
    /// A frame that is neither a state nor an answer (a notice).
    static func other(_ worker: BenchWorker<Self>, frame: UnsafeRawBufferPointer, inWindow: Bool)
    /// The kind's figures, once the run is over.
    static func report(_ report: inout BenchReport, workers: [BenchWorker<Self>], plan: BenchPlan, seconds: Double)
    /// The kind's summary, or nil for the letters' own.
    static func text(_ report: BenchReport, _ p: (BenchReport.Percentiles) -> String) -> String?
    /// Whether the kind's own checks held (a stock never below zero, conserved); false: the run exits 1.
    static func held(_ report: BenchReport) -> Bool
}

extension BenchDriver {
    static var joins: Bool { true }
    static var readsOrder: Bool { false }
    static var countsRefusals: Bool { true }
    static var drivesBroadcaster: Bool { false }
    static var refillsOnState: Bool { false }
    static func begin(_ worker: BenchWorker<Self>, board peer: BenchWorker<Self>.Peer, at start: UInt64) {}
    static func read(_ worker: BenchWorker<Self>, state: UnsafeRawBufferPointer, version: UInt64, of peer: BenchWorker<Self>.Peer,
                     inWindow: Bool) {}
    static func answered(_ worker: BenchWorker<Self>, ref: Int, of peer: BenchWorker<Self>.Peer, acked: Bool, version: UInt64,
                         sentInWindow: Bool) {}
    static func other(_ worker: BenchWorker<Self>, frame: UnsafeRawBufferPointer, inWindow: Bool) {}
    static func report(_ report: inout BenchReport, workers: [BenchWorker<Self>], plan: BenchPlan, seconds: Double) {}
    static func text(_ report: BenchReport, _ p: (BenchReport.Percentiles) -> String) -> String? { nil }
    static func held(_ report: BenchReport) -> Bool { true }
}

/// Where a driver keeps what it counts (per worker) or remembers (per
/// client): empty at the start of a run.
protocol BenchKeeping {
    init()
}

/// A driver's keeping when it has nothing to keep.
struct NothingKept: BenchKeeping {}
