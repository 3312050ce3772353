import SyncWire

/// The first answer to a keyed intent, kept so that a resend gets it again
/// (with the resend's `ref`) instead of being applied a second time.
enum KeyedAnswer: Equatable, Sendable {
    /// `members`: the kind's own ack fields (`WireKind.ackMembers`).
    case ack(version: UInt64, members: String = "")
    /// `members`: the kind's own refusal fields (`WireKind.refusalMembers`).
    case rejected(code: String, message: String, members: String = "")

    var isAck: Bool { if case .ack = self { true } else { false } }

    func frame(ref: String?) -> String {
        switch self {
        case let .ack(version, members): HubMessage.ack(ref: ref, version: version, members: members)
        case let .rejected(code, message, members): HubMessage.rejected(ref: ref, code: code, message: message, members: members)
        }
    }
}

/// A board's memory of idempotency keys (docs/PROTOCOL.md, "Idempotency
/// keys"): the most recent `capacity` keys in memory; older ones are in the
/// store, which the shell asks when `mayBeInStore` says it could hold a key
/// memory lacks. A key whose change is not durable yet is `pending`: a
/// resend then waits for the first answer rather than applying again.
struct IntentKeys {
    enum Entry: Equatable {
        /// Merged, not yet durable; these resends wait for its answer.
        case pending(waiters: [Waiter])
        case answered(KeyedAnswer)
    }

    struct Waiter: Equatable {
        var connection: UInt64
        var ref: String?
    }

    let capacity: Int
    /// True once a key of this board may be in the store and not in memory
    /// (the board had keys when it was loaded, or memory dropped one).
    var mayBeInStore: Bool
    private var entries: [String: Entry] = [:]
    /// Keys in the order they were first seen, from `head` on.
    private var arrival: [String] = []
    private var head = 0

    init(capacity: Int, mayBeInStore: Bool) {
        self.capacity = max(1, capacity)
        self.mayBeInStore = mayBeInStore
    }

    var count: Int { entries.count }

    subscript(key: String) -> Entry? { entries[key] }

    /// A new keyed intent is being merged.
    mutating func begin(_ key: String) {
        insert(key, .pending(waiters: []))
    }

    /// A resend arrived while the first is not durable yet.
    mutating func wait(_ key: String, connection: UInt64, ref: String?) {
        guard case var .pending(waiters) = entries[key] else { return }
        waiters.append(Waiter(connection: connection, ref: ref))
        entries[key] = .pending(waiters: waiters)
    }

    /// The first answer is durable: remembers it and returns the resends
    /// that waited for it.
    mutating func answer(_ key: String, with answer: KeyedAnswer) -> [Waiter] {
        let waiting: [Waiter]
        if case let .pending(waiters) = entries[key] { waiting = waiters } else { waiting = [] }
        if entries[key] == nil {
            insert(key, .answered(answer))
        } else {
            entries[key] = .answered(answer)
            evictBeyondCapacity(sparing: key)
        }
        return waiting
    }

    /// The log could not confirm the first use of `key` (cluster mode,
    /// `unavailable`): forgets it, so a resend proposes again (the log
    /// deduplicates), and returns the resends that waited.
    mutating func abandon(_ key: String) -> [Waiter] {
        guard case let .pending(waiters) = entries[key] else { return [] }
        entries[key] = nil
        return waiters
    }

    /// Every key with its first answer, as memory holds them (R15's write-back).
    var answered: [(key: String, answer: KeyedAnswer)] {
        entries.compactMap { key, entry in if case let .answered(answer) = entry { (key, answer) } else { nil } }
    }

    /// An answer the store held (a key older than memory).
    mutating func remember(_ key: String, answer: KeyedAnswer) {
        guard entries[key] == nil else { return }
        insert(key, .answered(answer))
    }

    private mutating func insert(_ key: String, _ entry: Entry) {
        entries[key] = entry
        arrival.append(key)
        evictBeyondCapacity(sparing: key)
    }

    /// Drops the oldest answered keys beyond `capacity` (the store keeps
    /// them); a pending key stays until its answer is durable, and `sparing`
    /// (the key at hand: it is about to be used) stays too, so memory may
    /// exceed `capacity` by the keys in flight.
    private mutating func evictBeyondCapacity(sparing: String) {
        var scanned = 0
        let queued = arrival.count - head
        while entries.count > capacity, scanned < queued {
            let oldest = arrival[head]
            head += 1
            scanned += 1
            if oldest == sparing {
                arrival.append(oldest)
                continue
            }
            if case .pending = entries[oldest] {
                arrival.append(oldest)
                continue
            }
            if entries.removeValue(forKey: oldest) != nil { mayBeInStore = true }
        }
        if head > 1024, head * 2 > arrival.count {
            arrival.removeFirst(head)
            head = 0
        }
    }
}
