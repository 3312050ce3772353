import Foundation

/// How the shard threads talk to Redis.
struct SharedLogConnectionSettings: Sendable {
    var hubID: String
    var timeoutMilliseconds: Int
    var waitReplicas: Int
    /// How long one XREAD waits for news before the follower looks at its list again.
    var blockMilliseconds = 100
    /// A fold's lease: one hub folds a board at a time.
    var leaseMilliseconds = 30_000
    /// Flags every hub must share because applying the log depends on them
    /// (when the engine compacts and forgets replicas); recorded in Redis
    /// by the first hub, checked by every other at start.
    var agreedFlags = ""
    /// Idempotency keys a board keeps in Redis (the oldest go first).
    var maxKeysPerBoard = 100_000
    /// Entries kept in the stream behind a snapshot, so a hub a little
    /// behind the folding one reads on instead of reloading the board.
    var keptBehindSnapshot = 1_024
    /// R15: how long a server that restarted or was promoted takes no
    /// append at least, while the hubs that hold its boards write back what
    /// it lost (they check at once when they reach it again): half of
    /// --redis-timeout, at most 1 s.
    var fenceMilliseconds: Int { min(1_000, max(100, timeoutMilliseconds / 2)) }
    /// R15: how long it holds at most while a hub that was live has not
    /// checked: four times its shortest part. Correctness first: a join
    /// never shows the log before a slow hub wrote it back (it fails after
    /// its deadline and is tried again); an intent that waits longer than
    /// --redis-timeout is answered `unavailable` and resent under its key.
    var fenceCeilingMilliseconds: Int { 4 * fenceMilliseconds }
    /// Both, as the scripts take them: `FLOOR/CEILING` milliseconds.
    var fenceSpans: String { "\(fenceMilliseconds)/\(fenceCeilingMilliseconds)" }
}

/// The SHA1s of the loaded scripts (SCRIPT LOAD on every new connection, so
/// a restarted Redis is served again at once).
struct ScriptHashes {
    var append: String
    var fold: String
    var load: String
    var restore: String

    static func load(on connection: RedisConnection) throws(RedisFailure) -> ScriptHashes {
        let scripts = [SharedLogScripts.append, SharedLogScripts.fold, SharedLogScripts.load, SharedLogScripts.restore]
        let replies = try connection.pipeline(scripts.map { ["SCRIPT", "LOAD", $0] })
        let hashes = replies.compactMap(\.text)
        guard hashes.count == scripts.count, replies.allSatisfy({ $0.errorText == nil }) else {
            throw RedisFailure(reason: .reply, message: "SCRIPT LOAD refused: \(replies.compactMap(\.errorText).first ?? "no hash")")
        }
        return ScriptHashes(append: hashes[0], fold: hashes[1], load: hashes[2], restore: hashes[3])
    }
}
