import Foundation

/// The store's own thread: takes every record queued since its last commit
/// and writes them in one transaction, so one fsync covers many changes and
/// durability does not cap throughput. Hands committed records back through
/// `committed`, which the hub posts to its service thread.
final class GroupCommitWriter: @unchecked Sendable {
    // Sendable: `queue` is guarded by `condition`; `store` is used only on the writer thread.
    private let store: BoardStore
    private let condition = NSCondition()
    private var queue: [DurableRecord] = []
    private var stopping = false
    private var finished = false
    /// Set before `start()`: called on the writer thread after each commit.
    var onCommitted: @Sendable ([DurableRecord]) -> Void = { _ in }
    var onFailure: @Sendable (StoreError) -> Void = { _ in }

    init(store: BoardStore) {
        self.store = store
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "store-writer"
        thread.start()
    }

    func submit(_ records: [DurableRecord]) {
        guard !records.isEmpty else { return }
        condition.lock()
        queue.append(contentsOf: records)
        condition.signal()
        condition.unlock()
    }

    /// Commits what is queued, then returns once the thread has finished.
    func stopAndFlush() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while queue.isEmpty && !stopping { condition.wait() }
            let batch = queue
            queue.removeAll(keepingCapacity: true)
            let done = stopping && batch.isEmpty
            condition.unlock()
            if done { break }
            do {
                try store.commit(batch)
                onCommitted(batch)
            } catch let error as StoreError {
                onFailure(error)
            } catch {
                onFailure(StoreError(description: "store: \(error)"))
            }
        }
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }
}
