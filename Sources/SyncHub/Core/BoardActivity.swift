/// What a board did lately, for the operator's console (docs/ADMIN.md,
/// O3-O4): its last changes with who made them and through which hub, and
/// how many it made in each of the last 60 seconds. Kept for every held
/// board whether or not a console looks (a few KiB); nothing is rendered
/// until one asks (`AdminViews`).
struct BoardActivity {
    /// At most this many changes are kept (O4: the last 100).
    static let kept = 100

    /// One change as its hub answered it.
    struct Change {
        /// When (monotonic nanoseconds; the console turns it into a time).
        var at: UInt64
        var sub: String?
        var name: String
        var hub: String
        /// The change itself, of the board's kind (`Kind.Change`), or the
        /// number of a replica client's operations; JSON only when asked.
        var change: (any Sendable)?
        var operations = 0
        /// `ack`, or the refusal's code.
        var answer: String
        var version: UInt64
    }

    private(set) var changes: [Change] = []
    private var next = 0
    /// Changes per second over the last minute, by second (a ring).
    private var perSecond = [UInt32](repeating: 0, count: 60)
    private var second: UInt64 = 0

    mutating func note(_ change: Change) {
        if changes.count < Self.kept {
            changes.append(change)
        } else {
            changes[next] = change
            next = (next + 1) % Self.kept
        }
        let now = change.at / 1_000_000_000
        advance(to: now)
        perSecond[Int(now % 60)] &+= 1
    }

    /// Newest first.
    var newestFirst: [Change] {
        Array(changes[..<next].reversed()) + Array(changes[next...].reversed())
    }

    /// Changes over the minute before `nanos`.
    mutating func perMinute(at nanos: UInt64) -> Int {
        advance(to: nanos / 1_000_000_000)
        return perSecond.reduce(0) { $0 + Int($1) }
    }

    /// Clears the seconds that went by since the last change.
    private mutating func advance(to now: UInt64) {
        guard now > second else { return }
        let gone = min(60, now - second)
        for step in 1...gone { perSecond[Int((second + step) % 60)] = 0 }
        second = now
    }
}
