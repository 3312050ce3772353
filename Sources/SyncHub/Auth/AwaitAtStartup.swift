import Dispatch
import Synchronization

/// Runs `work` to completion and returns its result, blocking the calling
/// thread meanwhile.
///
/// jwt-kit hands out its key objects and signs only through its
/// `JWTKeyCollection` actor; `synchub` is a synchronous command whose
/// service thread must never await. This bridge is used only where that
/// costs nothing: once at start-up to build the `KeyRing`, and in the
/// one-shot `synchub token`. Verification itself never comes here.
///
/// Never call it from async code: it would hold one of Swift's few
/// concurrency threads while `work` needs another.
func awaitAtStartup<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = StartupOutcome<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        let result: Result<T, any Error>
        do { result = .success(try await work()) } catch { result = .failure(error) }
        outcome.result.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    guard let result = outcome.result.withLock({ $0 }) else {
        preconditionFailure("the start-up task signalled without a result")
    }
    return try result.get()
}

/// The result handed from the start-up task to the waiting thread.
private final class StartupOutcome<T: Sendable>: Sendable {
    let result = Mutex<Result<T, any Error>?>(nil)
}
