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
