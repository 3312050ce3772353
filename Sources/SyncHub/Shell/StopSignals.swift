import Foundation
import Glibc

/// SIGINT and SIGTERM start a clean stop: they are blocked in every thread
/// and taken by one waiting thread, which calls `stop` (never from a signal handler).
enum StopSignals {
    static func install(_ stop: @escaping @Sendable () -> Void) {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        let thread = Thread { @Sendable in
            var waitSet = sigset_t()
            sigemptyset(&waitSet)
            sigaddset(&waitSet, SIGINT)
            sigaddset(&waitSet, SIGTERM)
            var signal: Int32 = 0
            while sigwait(&waitSet, &signal) == 0 {
                stop()
            }
        }
        thread.name = "stop-signals"
        thread.start()
    }
}

/// Holds what a stop signal should do once the hub exists; a signal that
/// came earlier is kept and acted on when the action is set.
final class StopRequest: @unchecked Sendable {
    // Sendable: guarded by `lock`.
    private let lock = NSLock()
    private var action: (@Sendable () -> Void)?
    private var fired = false

    func set(_ action: @escaping @Sendable () -> Void) {
        lock.lock()
        self.action = action
        let already = fired
        lock.unlock()
        if already { action() }
    }

    func fire() {
        lock.lock()
        fired = true
        let action = self.action
        lock.unlock()
        action?()
    }
}
