/// The Lua scripts cluster mode runs in Redis. Each runs atomically and
/// touches only one board's keys (one `{KIND/NAME}` hash tag, so they stay
/// valid under Redis Cluster). Layout and reasons: docs/CLUSTER.md.
enum SharedLogScripts {
    /// The keys of one board's log.
    struct BoardKeys {
        let meta, log, snapshot, keys, keyOrder, owners, lease, here: String
        init(logName: String) {
            let tag = "sh:{" + logName + "}:"
            meta = tag + "meta"
            log = tag + "log"
            snapshot = tag + "snap"
            keys = tag + "keys"
            keyOrder = tag + "keyorder"
            owners = tag + "owners"
            lease = tag + "lease"
            here = tag + "here"
        }
    }

    /// Appends a batch of one board's entries, in order, each as if alone:
    /// deduplicates by key (`dup` and what the key holds), checks the
    /// replica's owner (`owner`), takes the next offset, XADDs under it,
    /// remembers the key (`ok` and the offset). One script call for up to
    /// `maxBatch` entries: Redis runs one script instead of one per entry.
    /// KEYS meta log keys keyorder owners; ARGV new-epoch, then entry key
    /// replica sub per entry. Answers {epoch, status1, value1, status2, value2, ...}.
    /// An entry Redis refuses to append (an error reply to its XADD: OOM,
    /// READONLY...) answers `err` and its message, `top` is put back, and
    /// the entries after it are not tried (`err` too): the entries before it
    /// are in the log and answered as such.
    static let append = """
        local epoch = redis.call('HGET', KEYS[1], 'epoch')
        if not epoch then
          epoch = ARGV[1]
          redis.call('HSET', KEYS[1], 'epoch', epoch)
        end
        local out = {epoch}
        local failed = false
        for i = 2, #ARGV, 4 do
          local entry, key, replica, sub = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
          local status, value = false, false
          if failed then
            status, value = 'err', failed
          end
          if not status and key ~= '' then
            local seen = redis.call('HGET', KEYS[3], key)
            if seen then status, value = 'dup', seen end
          end
          if not status and replica ~= '' then
            local owner = redis.call('HGET', KEYS[5], replica)
            if owner and owner ~= sub then status, value = 'owner', owner end
          end
          if not status then
            local top = redis.call('HINCRBY', KEYS[1], 'top', 1)
            local added = redis.pcall('XADD', KEYS[2], top .. '-0', 'e', entry)
            if type(added) == 'table' and added.err then
              redis.call('HINCRBY', KEYS[1], 'top', -1)
              failed = added.err
              status, value = 'err', failed
            else
              if replica ~= '' then redis.call('HSETNX', KEYS[5], replica, sub) end
              if key ~= '' then
                redis.call('HSET', KEYS[3], key, '@' .. top)
                redis.call('ZADD', KEYS[4], top, key)
              end
              status, value = 'ok', tostring(top)
            end
          end
          out[#out + 1] = status
          out[#out + 1] = value
        end
        return out
        """

    /// The most entries one `append` call carries.
    static let maxBatch = 64

    /// Folds the log into a snapshot under a lease (one hub at a time; the
    /// offset is the fencing token: only a newer snapshot replaces one),
    /// writes down the first answers of keys whose entries go, trims the
    /// stream behind the snapshot and the oldest keys beyond the bound.
    /// KEYS meta log snap keys keyorder lease; ARGV offset snapshot hub
    /// lease-ms max-keys kept-behind epoch [key answer]...
    static let fold = """
        if ARGV[7] ~= '' and redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[7] then return {'behind', '0'} end
        local lease = redis.call('GET', KEYS[6])
        if lease and lease ~= ARGV[3] then return {'busy', lease} end
        redis.call('SET', KEYS[6], ARGV[3], 'PX', ARGV[4])
        local at = tonumber(redis.call('HGET', KEYS[1], 'snap') or '0')
        local offset = tonumber(ARGV[1])
        if offset <= at then return {'behind', tostring(at)} end
        redis.call('SET', KEYS[3], ARGV[2])
        redis.call('HSET', KEYS[1], 'snap', ARGV[1])
        for i = 8, #ARGV, 2 do
          local seen = redis.call('HGET', KEYS[4], ARGV[i])
          if seen and string.sub(seen, 1, 1) == '@' and tonumber(string.sub(seen, 2)) <= offset then
            redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
          end
        end
        -- Entries up to the snapshot stay a while (ARGV[6] of them): a hub a
        -- little behind reads on instead of reloading the board.
        local keep = tonumber(ARGV[6])
        if offset > keep then redis.call('XTRIM', KEYS[2], 'MINID', (offset - keep + 1) .. '-0') end
        local count = redis.call('ZCARD', KEYS[5])
        local excess = count - tonumber(ARGV[5])
        if excess > 0 then
          local old = redis.call('ZRANGE', KEYS[5], 0, excess - 1)
          redis.call('ZREMRANGEBYRANK', KEYS[5], 0, excess - 1)
          for i = 1, #old, 500 do
            redis.call('HDEL', KEYS[4], unpack(old, i, math.min(i + 499, #old)))
          end
        end
        return {'ok', ARGV[1]}
        """

    /// Reads a board: every entry after `from` while the stream still holds
    /// them, else the snapshot and every entry after it, in one atomic step
    /// (a fold cannot slip in between). KEYS meta log snap; ARGV from. Answers {snapshot|nil,
    /// snapshot-offset, epoch, top, entries}.
    static let load = """
        local at = tonumber(redis.call('HGET', KEYS[1], 'snap') or '0')
        local epoch = redis.call('HGET', KEYS[1], 'epoch') or ''
        local top = redis.call('HGET', KEYS[1], 'top') or '0'
        local from = tonumber(ARGV[1])
        local snap = false
        if from < at and #redis.call('XRANGE', KEYS[2], (from + 1) .. '-0', (from + 1) .. '-0') == 0 then
          -- The entries after `from` were trimmed: the snapshot, then what follows it.
          snap = redis.call('GET', KEYS[3]) or false
          from = at
        end
        local entries = redis.call('XRANGE', KEYS[2], (from + 1) .. '-0', '+')
        return {snap, tostring(at), epoch, top, entries}
        """
}
