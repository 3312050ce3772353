import Foundation
import Logging

/// Writes folds' snapshots for one shard on a thread of its own at the
/// lowest CPU priority (SCHED_IDLE): a fold is work for later, so the threads
/// that deliver changes (the server's, the appender, the follower) take the
/// cores first and a fold costs no one a wait (issue 33). Only the newest
/// fold of a board waits here: a newer one replaces the one not yet
/// written (its snapshot would be older), so a starved encoder holds at
/// most one board image per board.
final class FoldEncoder: @unchecked Sendable {
    // Sendable: `waiting` and `order` are guarded by `condition`.
    private let condition = NSCondition()
    private var waiting: [String: SharedFold] = [:]
    private var order: [String] = []
    private var stopping = false
    private let logger: Logger
    /// The encoder thread's own: the operations' JSON of the boards folded
    /// last (`OperationTexts`), so a fold writes only what came since the
    /// board's previous one. At most `boardsRemembered` boards (the ones
    /// folded most recently: the busiest), about 300 KB each at the default
    /// window.
    private var texts: [String: OperationTexts] = [:]
    private var remembered: [String] = []
    static let boardsRemembered = 16

    init(logger: Logger) {
        self.logger = logger
    }

    /// `written` hands a written snapshot on (the shard's appender queue).
    func start(written: @escaping @Sendable (SharedFold, [UInt8]) -> Void) {
        let thread = Thread { [self] in run(written) }
        thread.name = "redis-fold-encoder"
        thread.start()
    }

    /// The folds not written yet are dropped (a fold is never owed).
    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
    }

    func submit(_ fold: SharedFold) {
        condition.lock()
        if waiting.updateValue(fold, forKey: fold.logName) == nil { order.append(fold.logName) }
        condition.signal()
        condition.unlock()
    }

    private func run(_ written: @Sendable (SharedFold, [UInt8]) -> Void) {
        lowerPriority()
        while true {
            condition.lock()
            while order.isEmpty, !stopping { condition.wait() }
            if stopping {
                condition.unlock()
                return
            }
            let logName = order.removeFirst()
            let fold = waiting.removeValue(forKey: logName)
            condition.unlock()
            guard let fold else { continue }
            do {
                var known = texts.removeValue(forKey: logName) ?? [:]
                remembered.removeAll { $0 == logName }
                let snapshot = try fold.encode(&known)
                texts[logName] = known
                remembered.append(logName)
                if remembered.count > Self.boardsRemembered { texts[remembered.removeFirst()] = nil }
                written(fold, try PackedSnapshot.pack(snapshot))
            } catch {
                // Nothing is trimmed without a snapshot; the next fold tries again.
                logger.error("cannot encode a board's snapshot", metadata: ["board": "\(fold.logName)", "error": "\(error)"])
            }
        }
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
