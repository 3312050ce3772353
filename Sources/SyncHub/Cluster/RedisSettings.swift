import Foundation

/// What a hub asks of each Redis server before it trusts it with boards
/// (R18), read at start and after every reconnect: a `maxmemory-policy` that
/// can evict keys would drop a board's log (lost history), so it is refused;
/// `appendonly no` loses what the last RDB did not hold on a restart, so it
/// is served with a warning and `synchub_redis_persistent 0`.
struct RedisSettings: Equatable, Sendable {
    var maxmemoryPolicy: String
    var appendOnly: Bool

    /// Reads the two settings. Nil when `CONFIG` is not allowed (a managed
    /// Redis may rename it): the settings then cannot be checked.
    static func read(on connection: RedisConnection) throws(RedisFailure) -> RedisSettings? {
        let replies = try connection.pipeline([["CONFIG", "GET", "maxmemory-policy"], ["CONFIG", "GET", "appendonly"]])
        guard replies.count == 2, replies.allSatisfy({ $0.errorText == nil }),
              let policy = replies[0].elements.dropFirst().first?.text,
              let appendOnly = replies[1].elements.dropFirst().first?.text else { return nil }
        return RedisSettings(maxmemoryPolicy: policy, appendOnly: appendOnly == "yes")
    }

    /// Why `server` must not keep boards, or nil: only `noeviction` keeps
    /// every key (every other policy, `volatile-*` included, may drop one).
    func refusal(server: RedisServerAddress) -> String? {
        guard maxmemoryPolicy != "noeviction" else { return nil }
        return "redis \(server) runs with maxmemory-policy \(maxmemoryPolicy): it may evict a board's log, which is lost history; "
            + "set maxmemory-policy noeviction (a full Redis then answers OOM, and intents are answered unavailable)"
    }

    /// The warning for a server without an append-only file, or nil.
    func warning(server: RedisServerAddress) -> String? {
        appendOnly ? nil : "redis \(server) runs with appendonly no: a restart loses the changes made since its last RDB snapshot "
            + "(set appendonly yes; see docs/OPERATIONS.md)"
    }
}

/// One live hub per `--hub-id` (R17): each hub holds a lease on its id on
/// every Redis server (`synchub:hub:ID`, this process's random token, 20 s),
/// renewed by the follower about once a second. A hub given an id a live
/// hub holds exits 64; the id of a hub that died is free again once its
/// lease runs out (at most 20 s); a hub that stops cleanly frees it at once.
enum HubLease {
    static let milliseconds = 20_000

    static func key(hubID: String) -> String { "synchub:hub:" + hubID }

    /// Takes or renews the lease; answers 1 (held by `token`) or the
    /// milliseconds left of the other holder's lease (negative).
    static let take = """
        local holder = redis.call('GET', KEYS[1])
        if holder == false or holder == ARGV[1] then
          redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
          return 1
        end
        return -math.max(1, redis.call('PTTL', KEYS[1]))
        """

    /// Frees the lease if `token` holds it.
    static let free = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
        """

    static func takeCommand(hubID: String, token: String) -> [String] {
        ["EVAL", take, "1", key(hubID: hubID), token, String(milliseconds)]
    }

    static func freeCommand(hubID: String, token: String) -> [String] {
        ["EVAL", free, "1", key(hubID: hubID), token]
    }

    /// This process's token: a hub restarted with the same id is another holder.
    static let token = String(UInt64.random(in: 1...UInt64.max), radix: 36) + "-" + String(ProcessInfo.processInfo.processIdentifier)
}
