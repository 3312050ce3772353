"""Which Redis server of a cluster holds a board, as the hub decides it
(Sources/SyncHub/Cluster/SharedLog.swift: `shardIndex`, `jumpHash`,
`fnv1a`): a jump consistent hash of FNV-1a-64 of the board's log name.
Standard library only, so the benchmarks import it too (Benchmarks/stall.py);
cluster_support re-exports it for the tests. Checked against the real hub by
test_stall.py (a board written through a hub is found on the server these
functions name).
"""

STORE_KIND = {"boards": "letters", "set": "set", "stock": "stock", "todo": "todo", "shop": "shop"}
_MASK64 = (1 << 64) - 1


def log_name(kind_segment, name):
    """The board's name in its shared log: `KIND/NAME` for every kind
    (BoardAddress.logName), where KIND is the kind's name, not its path
    segment: the letter board at /boards/x is `letters/x`."""
    return STORE_KIND[kind_segment] + "/" + name


def fnv1a64(text):
    """FNV-1a, 64 bits, of `text`'s UTF-8 bytes."""
    h = 0xCBF29CE484222325
    for byte in text.encode():
        h = ((h ^ byte) * 0x100000001B3) & _MASK64
    return h


def jump_hash(key, buckets):
    """Jump consistent hash (Lamping and Veach), with the hub's arithmetic:
    wrapping 64-bit multiply-add, the quotient in doubles, truncated."""
    b, j, k = -1, 0, key & _MASK64
    while j < buckets:
        b = j
        k = (k * 2862933555777941757 + 1) & _MASK64
        j = int(float(b + 1) * (float(1 << 31) / float((k >> 33) + 1)))
    return max(0, b)


def redis_shard_of(log_name, servers):
    """The index, in the hub's --redis list, of the server that holds the
    board whose log name is `log_name` ("letters/kitchen"; see log_name()).
    `servers`: how many servers the hub was given, or the list itself."""
    count = servers if isinstance(servers, int) else len(servers)
    if count < 1:
        raise ValueError("a cluster has at least one Redis server")
    return jump_hash(fnv1a64(log_name), count)


def boards_on_shard(kind_segment, shard, servers, prefix):
    """Board names prefix-0, prefix-1, ... (in that order, skipping the others)
    whose boards of kind `kind_segment` ("boards", "set", ...) live on server
    number `shard` (0-based, --redis order). Deterministic; endless."""
    count = servers if isinstance(servers, int) else len(servers)
    if not 0 <= shard < count:
        raise ValueError(f"shard {shard} outside 0...{count - 1}")
    n = 0
    while True:
        name = f"{prefix}-{n}"
        if redis_shard_of(log_name(kind_segment, name), count) == shard:
            yield name
        n += 1


def board_on_shard(kind_segment, shard, servers, prefix):
    """The first name prefix-N (N = 0, 1, ...) whose board of kind
    `kind_segment` lives on server `shard` (see boards_on_shard)."""
    return next(boards_on_shard(kind_segment, shard, servers, prefix))


