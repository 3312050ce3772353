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

    /// R15's fence, run first by the append and load scripts (and the
    /// follower's `arrive`): the server's run id (`INFO server`, which
    /// changes when it restarts or another server is promoted) against the
    /// one the hubs last wrote (`synchub:run`). A new one starts the fence;
    /// `spans` is `FLOOR/CEILING` milliseconds: `synchub:fence` holds when
    /// its shortest part ends (FLOOR on), and lives CEILING at most. Appends
    /// and reads wait it out while every hub that holds a board of the
    /// server checks it and writes back what the server lost: past its
    /// shortest part, the fence lasts while a hub expected
    /// (`synchub:fence:expect`, the hubs any arriving hub knew live) has not
    /// said it checked (`synchub:fence:done`), so a hub slowed down is
    /// waited for, and one that died costs CEILING at most. Answers the
    /// milliseconds left (0: none). `run` '' (INFO refused): no fence.
    /// (The two sets are named after the fence key: each server is its own
    /// Redis, never a Redis Cluster slot, docs/CLUSTER.md.)
    static let fence = """
        local function nowms()
          local t = redis.call('TIME')
          return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        end
        local function fenced(runKey, fenceKey, run, spans)
          if run == '' then return 0 end
          local floor, ceiling = string.match(spans, '^(%d+)/(%d+)$')
          floor, ceiling = tonumber(floor or spans), tonumber(ceiling or spans)
          local now = nowms()
          if redis.call('GET', runKey) ~= run then
            redis.call('SET', runKey, run)
            redis.call('SET', fenceKey, now + floor, 'PX', math.max(floor, ceiling))
            redis.call('DEL', fenceKey .. ':expect', fenceKey .. ':done')
            return floor
          end
          local ends = redis.call('GET', fenceKey)
          if not ends then return 0 end
          local left = tonumber(ends) - now
          if left > 0 then return left end
          if #redis.call('SDIFF', fenceKey .. ':expect', fenceKey .. ':done') > 0 then
            return math.max(1, math.min(100, redis.call('PTTL', fenceKey)))
          end
          return 0
        end
        """

    /// Run by a hub's follower when it reaches a server (and at each
    /// presence exchange): starts the fence after a restart; while it still
    /// holds, adds the hubs this one knew live (itself first) to those it
    /// waits for (a fence that is over is not opened again). KEYS run
    /// fence; ARGV run spans hub known... Answers the milliseconds left.
    static let arrive = fence + "\n" + """
        local left = fenced(KEYS[1], KEYS[2], ARGV[1], ARGV[2])
        if left > 0 then
          local ttl = redis.call('PTTL', KEYS[2])
          redis.call('SADD', KEYS[2] .. ':expect', unpack(ARGV, 3))
          redis.call('PEXPIRE', KEYS[2] .. ':expect', ttl)
          left = fenced(KEYS[1], KEYS[2], ARGV[1], ARGV[2])
        end
        return left
        """

    /// Run by a hub's follower once, after the server came back, every
    /// board it follows there holds all this hub applied (nothing was lost,
    /// or it was written back): the fence no longer waits for it.
    /// KEYS fence; ARGV hub. Answers the fence's milliseconds to live.
    static let checked = """
        local ttl = redis.call('PTTL', KEYS[1])
        if ttl > 0 then
          redis.call('SADD', KEYS[1] .. ':done', ARGV[1])
          redis.call('PEXPIRE', KEYS[1] .. ':done', ttl)
        end
        return ttl
        """

    /// Appends a batch of one board's entries, in order, each as if alone:
    /// deduplicates by key (`dup` and what the key holds), checks the
    /// replica's owner (`owner`), takes the next offset, XADDs under it,
    /// remembers the key (`ok` and the offset). One script call for up to
    /// `maxBatch` entries: Redis runs one script instead of one per entry.
    /// Each entry's stream id is `OFFSET-LINK` (the link drawn by the hub,
    /// never 0) and it keeps the link of the entry before it (`p`), so a
    /// log that went back and was written on again is told from the one a
    /// hub applied (R15).
    /// KEYS meta log keys keyorder owners run fence hub-lease; ARGV new-epoch
    /// run fence-ms seen-offset seen-link seen-epoch lease-token, then entry
    /// key replica sub link per entry. Answers {epoch, status1, value1, ...},
    /// or {'notmine', holder} (nothing appended: another process holds this
    /// hub's id, R17: entries are matched to their hub by id and number),
    /// or {'fence', ms} (nothing appended: the server came back moments ago),
    /// or {'lost', top, last-link, epoch} (nothing appended: the log no
    /// longer holds the entry the hub applied last, `seen`).
    /// An entry Redis refuses to append (an error reply to its XADD: OOM,
    /// READONLY...) answers `err` and its message, and the entries after it
    /// are not tried (`err` too): the entries before it are in the log and
    /// answered as such.
    static let append = fence + "\n" + """
        local holder = redis.call('GET', KEYS[8])
        if holder and holder ~= ARGV[7] then return {'notmine', holder} end
        local left = fenced(KEYS[6], KEYS[7], ARGV[2], ARGV[3])
        if left > 0 then return {'fence', left} end
        local meta = redis.call('HMGET', KEYS[1], 'epoch', 'top', 'last', 'snap', 'snaplink', 'hold')
        local epoch, top, last = meta[1], tonumber(meta[2] or '0'), meta[3] or '0'
        if meta[6] then
          -- A hub wrote the board back moments ago: the others get as long
          -- to write back more (R15), as after a restart.
          local held = tonumber(meta[6]) - nowms()
          if held > 0 then return {'fence', held} end
        end
        local seen = tonumber(ARGV[4])
        if seen > 0 then
          local lost = (not epoch) or (ARGV[6] ~= '' and epoch ~= ARGV[6]) or top < seen
          if not lost then
            local at = redis.call('XRANGE', KEYS[2], seen, seen)
            if #at > 0 then
              lost = at[1][1] ~= (seen .. '-' .. ARGV[5])
            elseif tonumber(meta[4] or '0') == seen then
              lost = (meta[5] or '0') ~= ARGV[5]
            end
          end
          if lost then return {'lost', tostring(top), last, epoch or ''} end
        end
        if not epoch then
          epoch = ARGV[1]
          redis.call('HSET', KEYS[1], 'epoch', epoch)
          -- O3: the boards this server holds, counted by the console.
          redis.call('SADD', 'synchub:boards', KEYS[1])
        end
        local out = {epoch}
        local failed = false
        local first = top
        for i = 8, #ARGV, 5 do
          local entry, key, replica, sub, link = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
          local status, value = false, false
          if failed then
            status, value = 'err', failed
          end
          if not status and key ~= '' then
            local seenKey = redis.call('HGET', KEYS[3], key)
            if seenKey then status, value = 'dup', seenKey end
          end
          if not status and replica ~= '' then
            local owner = redis.call('HGET', KEYS[5], replica)
            if owner and owner ~= sub then status, value = 'owner', owner end
          end
          if not status then
            local added = redis.pcall('XADD', KEYS[2], (top + 1) .. '-' .. link, 'e', entry, 'p', last)
            if type(added) == 'table' and added.err then
              failed = added.err
              status, value = 'err', failed
            else
              top = top + 1
              last = link
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
        if top ~= first then redis.call('HSET', KEYS[1], 'top', top, 'last', last) end
        return out
        """

    /// The most entries one `append` call carries.
    static let maxBatch = 64

    /// Folds the log into a snapshot under a lease (one hub at a time; the
    /// offset is the fencing token: only a newer snapshot replaces one),
    /// writes down the first answers of keys whose entries go, trims the
    /// stream behind the snapshot and the oldest keys beyond the bound.
    /// A fold is taken only of the log's own history (R15): its offset at
    /// or below the log's top, the entry there with the folding hub's link
    /// (or the snapshot there with it), the same epoch; else `behind`. A
    /// fold queued before Redis went back never lands past the log's end.
    /// KEYS meta log snap keys keyorder lease; ARGV offset snapshot hub
    /// lease-ms max-keys kept-behind epoch link [key answer]...
    static let fold = """
        local meta = redis.call('HMGET', KEYS[1], 'epoch', 'top', 'snap', 'snaplink')
        if ARGV[7] ~= '' and meta[1] ~= ARGV[7] then return {'behind', '0'} end
        if tonumber(ARGV[1]) > tonumber(meta[2] or '0') then return {'behind', '0'} end
        local here = redis.call('XRANGE', KEYS[2], ARGV[1], ARGV[1])
        if #here > 0 then
          if here[1][1] ~= (ARGV[1] .. '-' .. ARGV[8]) then return {'behind', '0'} end
        elseif meta[3] ~= ARGV[1] or (meta[4] or '0') ~= ARGV[8] then
          return {'behind', '0'}
        end
        local lease = redis.call('GET', KEYS[6])
        if lease and lease ~= ARGV[3] then return {'busy', lease} end
        redis.call('SET', KEYS[6], ARGV[3], 'PX', ARGV[4])
        -- O3: a board whose log started under an older hub is counted from its first fold on.
        redis.call('SADD', 'synchub:boards', KEYS[1])
        local at = tonumber(redis.call('HGET', KEYS[1], 'snap') or '0')
        local offset = tonumber(ARGV[1])
        if offset <= at then return {'behind', tostring(at)} end
        redis.call('SET', KEYS[3], ARGV[2])
        redis.call('HSET', KEYS[1], 'snap', ARGV[1], 'snaplink', ARGV[8])
        for i = 9, #ARGV, 2 do
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
    /// (a fold cannot slip in between). While the server's fence (or the
    /// board's hold after a write-back) runs, nothing is read: the answer is
    /// {'fence', ms} and the reader asks again after it (R15: a hub that
    /// joins then would show the log before the hubs that hold more wrote
    /// it back; a read is the first touch of a restarted server as often as
    /// an append is, so it starts the fence too). KEYS meta log snap run
    /// fence; ARGV from run ms. Answers {snapshot|nil, snapshot-offset,
    /// epoch, top, entries, snapshot-link}.
    static let load = fence + "\n" + """
        local left = fenced(KEYS[4], KEYS[5], ARGV[2], ARGV[3])
        if left > 0 then return {'fence', left} end
        local meta = redis.call('HMGET', KEYS[1], 'snap', 'epoch', 'top', 'snaplink', 'hold')
        if meta[5] then
          local held = tonumber(meta[5]) - nowms()
          if held > 0 then return {'fence', held} end
        end
        local at = tonumber(meta[1] or '0')
        -- A snapshot past the log's end is of a history it no longer holds.
        if at > tonumber(meta[3] or '0') then at = 0 end
        local from = tonumber(ARGV[1])
        local snap = false
        if from < at and #redis.call('XRANGE', KEYS[2], from + 1, from + 1) == 0 then
          -- The entries after `from` were trimmed: the snapshot, then what follows it.
          snap = redis.call('GET', KEYS[3]) or false
          from = at
        end
        local entries = redis.call('XRANGE', KEYS[2], from + 1, '+')
        return {snap, tostring(at), meta[2] or '', meta[3] or '0', entries, meta[4] or '0'}
        """

    /// R15: adds first answers of keys to a board's log that a hub wrote
    /// back, each only where the log has none (a first answer never changes).
    /// KEYS keys keyorder; ARGV [key answer offset]...
    static let keepKeys = """
        for i = 1, #ARGV, 3 do
          if not redis.call('HGET', KEYS[1], ARGV[i]) then
            redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
            redis.call('ZADD', KEYS[2], ARGV[i + 2], ARGV[i])
          end
        end
        return 1
        """

    /// R15: writes a board back into a log that went back: the hub's whole
    /// board as the snapshot at the offset it applied, taken only while the
    /// log still is what the hub saw (epoch, last offset and its link; an
    /// empty log has none), so two hubs writing back cannot both win and a
    /// log written on meanwhile is never overwritten. The stream goes (its
    /// entries are a part of the snapshot); the keys' first answers the hub
    /// kept are written down again, and the kind's opening is marked done.
    /// The board is then held (`hold`) for `ms`: appends and reads wait, so
    /// a hub that holds still more can write it back on top. Allowed while
    /// the server is fenced; refused to a hub whose id another holds (R17).
    /// KEYS meta log snap keys keyorder hub-lease; ARGV offset link snapshot
    /// epoch expected-top expected-last new-epoch ms lease-token
    /// [key answer offset]... Answers {'ok'}, {'moved', top, last, epoch} or
    /// {'notmine', holder}.
    static let restore = fence + "\n" + """
        local holder = redis.call('GET', KEYS[6])
        if holder and holder ~= ARGV[9] then return {'notmine', holder} end
        local meta = redis.call('HMGET', KEYS[1], 'epoch', 'top', 'last')
        local top, last = meta[2] or '0', meta[3] or '0'
        if (meta[1] and ARGV[4] ~= '' and meta[1] ~= ARGV[4]) or top ~= ARGV[5] or last ~= ARGV[6]
           or tonumber(ARGV[1]) <= tonumber(top) then
          return {'moved', top, last, meta[1] or ''}
        end
        local epoch = meta[1] or ARGV[4]
        if epoch == '' then epoch = ARGV[7] end
        redis.call('SADD', 'synchub:boards', KEYS[1])
        redis.call('SET', KEYS[3], ARGV[3])
        redis.call('DEL', KEYS[2])
        redis.call('HSET', KEYS[1], 'epoch', epoch, 'top', ARGV[1], 'last', ARGV[2], 'snap', ARGV[1], 'snaplink', ARGV[2],
                   'hold', nowms() + tonumber(ARGV[8]))
        if not redis.call('HGET', KEYS[4], 'opening') then
          redis.call('HSET', KEYS[4], 'opening', '@1')
          redis.call('ZADD', KEYS[5], 1, 'opening')
        end
        for i = 10, #ARGV, 3 do
          if not redis.call('HGET', KEYS[4], ARGV[i]) then
            redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
            redis.call('ZADD', KEYS[5], ARGV[i + 2], ARGV[i])
          end
        end
        return {'ok'}
        """
}
