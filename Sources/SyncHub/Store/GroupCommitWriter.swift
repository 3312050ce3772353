import Foundation
import WebSocketLoop

/// The store's own thread: takes every record queued since its last commit
/// and writes them in one transaction, so one fsync covers many changes and
/// durability does not cap throughput. Hands committed records back through
/// `onCommitted`, which the hub posts to its service thread.
///
/// The first failed commit ends the writer: nothing is committed or handed
/// back after it, so no record queued behind a failure is ever acknowledged
/// (the hub stops on `onFailure` rather than ack what it might not keep).
final class GroupCommitWriter: @unchecked Sendable {
    // Sendable: `store` is confined to the writer thread, checked by `owner` (debug builds); the rest is guarded by `condition`.
    private let store: BoardStore
    /// The writer thread, while it runs: the only one that uses `store`.
    let owner = ThreadOwner("store-writer")
    private let condition = NSCondition()
    private var queue: [DurableRecord] = []
    private var stopping = false
    private var finished = false
    private var failure: StoreError?
    private var committedHandler: @Sendable ([DurableRecord]) -> Void = { _ in }
    private var failureHandler: @Sendable (StoreError) -> Void = { _ in }
    /// Set before `start()`: called on the writer thread after each commit.
    var onCommitted: @Sendable ([DurableRecord]) -> Void {
        get { condition.lock(); defer { condition.unlock() }; return committedHandler }
        set { condition.lock(); committedHandler = newValue; condition.unlock() }
    }
    /// Set before `start()`: called once, on the writer thread, with the
    /// commit failure that ended the writer.
    var onFailure: @Sendable (StoreError) -> Void {
        get { condition.lock(); defer { condition.unlock() }; return failureHandler }
        set { condition.lock(); failureHandler = newValue; condition.unlock() }
    }

    init(store: BoardStore) {
        self.store = store
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "store-writer"
        thread.start()
    }

    /// Queues `records` for the next commit; after a failure they are
    /// dropped, never committed nor acknowledged.
    func submit(_ records: [DurableRecord]) {
        guard !records.isEmpty else { return }
        condition.lock()
        if failure == nil {
            queue.append(contentsOf: records)
            condition.signal()
        }
        condition.unlock()
    }

    /// Commits what is queued (unless a commit has failed), then returns
    /// once the thread has finished.
    func stopAndFlush() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }

    /// The failure that ended the writer, if one did. Read it after
    /// `stopAndFlush()` to learn of a failure in the final flush, which
    /// `onFailure` reports too late for a loop that has already stopped.
    var failed: StoreError? {
        condition.lock()
        defer { condition.unlock() }
        return failure
    }

    private func run() {
        owner.claim()
        while true {
            condition.lock()
            while queue.isEmpty && !stopping { condition.wait() }
            let batch = queue
            queue.removeAll(keepingCapacity: true)
            let done = stopping && batch.isEmpty
            let committed = committedHandler
            condition.unlock()
            if done { break }
            do {
                owner.check()
                try store.commit(batch)
            } catch {
                let failure = error as? StoreError ?? StoreError(description: "store: \(error)")
                condition.lock()
                self.failure = failure
                queue.removeAll()
                let failed = failureHandler
                condition.unlock()
                failed(failure)
                break
            }
            committed(batch)
        }
        owner.release()
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }
}
