import Glibc

/// Lifts the limit on open files for a process holding many sockets: each
/// connection is a descriptor. Root may also lift the hard limit (up to
/// `fs.nr_open`, given CAP_SYS_RESOURCE); others get their hard limit.
/// Returns the soft limit now in force.
@discardableResult
public func raiseOpenFileLimit() -> Int {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
    var wanted = limit
    wanted.rlim_cur = 1 << 20
    wanted.rlim_max = max(limit.rlim_max, 1 << 20)
    if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &wanted) != 0, limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    return Int(limit.rlim_cur)
}

/// The `fd_limit_per_thread` to give a one-thread lws context that should hold
/// `sockets` connections.
///
/// lws finds the connection of a ready socket in a table indexed by the
/// socket's number, sized from the process's open-file limit. When
/// `fd_limit_per_thread` is *below* that limit, lws 4.1 shrinks the table and
/// switches to "slow fds handling": it scans the whole table on every socket
/// event. With 10,000 sockets that scan was half of the load tool's CPU, and a
/// hub given `--fd-limit 200000` on a machine whose limit is 1,048,576 would
/// scan 200,000 entries per event. So a context meant for many sockets is given
/// at least the process's limit (a table of 8 bytes per descriptor), and the
/// lookup stays one index. Small contexts (a one-shot command's single
/// socket) keep their small table: scanning a few dozen entries costs nothing.
public func descriptorTableSize(forSockets sockets: UInt32) -> UInt32 {
    guard sockets > 1024 else { return sockets }
    let processLimit = sysconf(Int32(_SC_OPEN_MAX))
    guard processLimit > 0 else { return sockets }
    return max(sockets, UInt32(clamping: processLimit))
}
