import Foundation
import Logging

/// Writes folds' snapshots for one shard on a thread of its own at the
/// lowest CPU priority (SCHED_IDLE): a fold is work for later, so the threads
/// that deliver changes (the server's, the appender, the follower) take the
/// cores first and a fold costs no one a wait (issue 33). Only the newest
/// fold of a board waits here: a newer one replaces the one not yet
/// written (its snapshot would be older), so a starved encoder holds at
/// most one board image per board.
///
/// No thread that delivers changes waits for the encoder: it holds
/// `handOff` only to take the whole queue (a swap) or to put a snapshot out,
/// and a submitter that finds it held keeps its folds in `held` and hands
/// them over at its next submit. An idle-priority thread preempted inside a
/// lock would otherwise stall the server's thread for as long as the cores
/// stay busy. For the same reason the encoder takes no other lock (it does
/// not log or count): the shard's folder thread takes what it wrote
/// (`takeWritten`) and sends the folds on a Redis connection of its own, so
/// a fold's script never sits in the appender's pipeline beside proposals.
final class FoldEncoder: @unchecked Sendable {
    // Sendable: `waiting`, `order`, `written` and `stopping` are guarded by
    // `handOff`; `held` by `submitters`, which the encoder thread never takes.
    private let handOff = NSLock()
    private var waiting: [String: SharedFold] = [:]
    private var order: [String] = []
    private var stopping = false
    private let submitters = NSLock()
    private var held: [SharedFold] = []
    private let wake = DispatchSemaphore(value: 0)
    /// What the encoder wrote, for the folder thread.
    enum Written: Sendable {
        case snapshot(SharedFold, [UInt8])
        case failed(SharedFold, reason: String)
    }
    private var written: [Written] = []
    private let writtenWake = DispatchSemaphore(value: 0)
    private let logger: Logger
    /// The encoder thread's own: the parts each board's snapshot was packed
    /// in last (`PackedWindow`), so a fold packs only the operations that
    /// came since the board's previous one. At most `boardsRemembered`
    /// boards (the ones folded most recently: the busiest), 10-30 KB each.
    private var windows: [String: PackedWindow] = [:]
    private var remembered: [String] = []
    static let boardsRemembered = 256
    private var started = false

    init(logger: Logger) {
        self.logger = logger
    }

    func start() {
        handOff.lock()
        defer { handOff.unlock() }
        guard !started else { return }
        started = true
        let thread = Thread { [self] in run() }
        thread.name = "redis-fold-encoder"
        thread.start()
    }

    /// The folds not written or not sent yet are dropped (a fold is never owed).
    func stop() {
        handOff.lock()
        stopping = true
        handOff.unlock()
        wake.signal()
        writtenWake.signal()
    }

    /// What the encoder wrote since the last call; waits for some. Nil once stopped.
    func takeWritten() -> [Written]? {
        while true {
            writtenWake.wait()
            handOff.lock()
            defer { handOff.unlock() }
            if stopping { return nil }
            if !written.isEmpty {
                defer { written.removeAll(keepingCapacity: true) }
                // A folder slowed down (Redis timing out) sends only a board's newest snapshot.
                var newest: [String: Int] = [:]
                for (index, item) in written.enumerated() {
                    if case let .snapshot(fold, _) = item { newest[fold.logName] = index }
                }
                return written.enumerated().compactMap { index, item in
                    if case let .snapshot(fold, _) = item, newest[fold.logName] != index { return nil }
                    return item
                }
            }
        }
    }

    func submit(_ folds: [SharedFold]) {
        submitters.lock()
        defer { submitters.unlock() }
        held += folds
        guard !held.isEmpty, handOff.try() else { return }
        for fold in held where waiting.updateValue(fold, forKey: fold.logName) == nil { order.append(fold.logName) }
        handOff.unlock()
        held.removeAll(keepingCapacity: true)
        wake.signal()
    }

    private func run() {
        lowerPriority()
        let deflater = Deflater()
        while true {
            wake.wait()
            handOff.lock()
            if stopping {
                handOff.unlock()
                return
            }
            let (batch, names) = (waiting, order)
            waiting = [:]
            order = []
            handOff.unlock()
            for name in names {
                guard let fold = batch[name] else { continue }
                let out: Written
                do {
                    out = .snapshot(fold, try pack(fold, with: deflater))
                } catch {
                    out = .failed(fold, reason: "\(error)")
                }
                handOff.lock()
                written.append(out)
                handOff.unlock()
                writtenWake.signal()
            }
        }
    }

    /// The fold's snapshot packed, with the runs of the board's last fold
    /// when that fold was of the same history (the same room, never read
    /// again since): an operation id names one operation only there.
    private func pack(_ fold: SharedFold, with deflater: Deflater) throws -> [UInt8] {
        var window = windows.removeValue(forKey: fold.logName).flatMap { $0.history == fold.history ? $0 : nil }
            ?? PackedWindow(history: fold.history)
        remembered.removeAll { $0 == fold.logName }
        let packed = try window.pack(fold.encode(), with: deflater)
        windows[fold.logName] = window
        remembered.append(fold.logName)
        if remembered.count > Self.boardsRemembered { windows[remembered.removeFirst()] = nil }
        return packed
    }

    /// SCHED_IDLE for this thread only (on Linux a thread is scheduled on
    /// its own, and pid 0 is the calling thread): it runs when a core has
    /// nothing else to do, and any other thread that wakes takes the core
    /// at once. nice 19 was not enough: the scheduler let the encoder finish
    /// its slice (up to milliseconds) before a waking thread ran, which set
    /// the p99 of delivery (BENCHMARKS.md, "Cluster mode").
    private func lowerPriority() {
        #if os(Linux)
        var parameters = sched_param(sched_priority: 0)
        let idle: Int32 = 5  // SCHED_IDLE (glibc defines it only with _GNU_SOURCE)
        if sched_setscheduler(0, idle, &parameters) != 0 {
            logger.warning("cannot run the fold encoder at idle priority", metadata: ["errno": "\(errno)"])
        }
        #endif
    }
}
