import Foundation

/// The one thread allowed to use some state, checked where it is used: a
/// class marked `@unchecked Sendable` because its state is confined to a
/// thread says so with one of these and calls `check()` on entry. Debug
/// builds (every test) trap on a use from another thread, or before any
/// thread claimed it; release builds do not evaluate the check.
public final class ThreadOwner: @unchecked Sendable {
    // Sendable: `owner` is guarded by `lock`.
    private let lock = NSLock()
    private var owner: pthread_t?
    /// What is owned, for the trap's message.
    public let what: String

    public init(_ what: String) {
        self.what = what
    }

    /// The calling thread owns the state from now on (the thread that
    /// starts serving it; a hand-over from the thread that set it up).
    public func claim() {
        lock.lock()
        owner = pthread_self()
        lock.unlock()
    }

    /// No thread owns it (stopped); a use traps until one claims it again.
    public func release() {
        lock.lock()
        owner = nil
        lock.unlock()
    }

    /// Whether the calling thread owns the state.
    public var isOwnedHere: Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let owner else { return false }
        return pthread_equal(owner, pthread_self()) != 0
    }

    /// Debug builds: traps unless the calling thread owns the state.
    @inline(__always)
    public func check(file: StaticString = #fileID, line: UInt = #line) {
        assert(isOwnedHere, "\(what) used off the thread that owns it", file: file, line: line)
    }
}
