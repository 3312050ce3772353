extension TodoList {
    /// The shared list (T1): every item in order, deleted ones kept as
    /// hidden anchors (TC5) up to `tombstonesKept`.
    public struct State: Equatable, Sendable {
        /// The order, tombstones included.
        public internal(set) var entries: [Entry]
        /// How many deletes were applied: orders tombstones, oldest first.
        public internal(set) var deletions: UInt64
        /// How many of `entries` are tombstones (kept, not counted per delete).
        public internal(set) var tombstones: Int

        public init(entries: [Entry] = [], deletions: UInt64 = 0) {
            self.entries = entries
            self.deletions = deletions
            tombstones = entries.reduce(0) { $0 + ($1.isDeleted ? 1 : 0) }
        }

        /// The items people see, in order.
        public var items: [Item] {
            entries.compactMap { $0.isDeleted ? nil : Item(id: $0.id, title: $0.title, memo: $0.memo, done: $0.done) }
        }

        /// The item `id`, when it is on the list.
        public func item(_ id: String) -> Item? {
            guard let index = index(of: id), !entries[index].isDeleted else { return nil }
            let entry = entries[index]
            return Item(id: entry.id, title: entry.title, memo: entry.memo, done: entry.done)
        }

        /// Who deleted `id`, while the list remembers it ("" when unknown).
        public func deleter(of id: String) -> String? {
            index(of: id).flatMap { entries[$0].deletedBy }
        }

        func index(of id: String) -> Int? {
            // A scan of 64-bit fingerprints, comparing strings only on a match.
            let key = Entry.fingerprint(id)
            return entries.firstIndex { $0.key == key && $0.id == id }
        }

        /// The index of the live item `id`, or why there is none (T6, TC3).
        func liveIndex(of id: String) -> Result<Int, TodoRefusal> {
            guard let index = index(of: id) else { return .failure(.noSuchItem(id, deletedBy: nil)) }
            if let by = entries[index].deletedBy { return .failure(.noSuchItem(id, deletedBy: by)) }
            return .success(index)
        }

        /// Where an item placed after `anchor` goes: right after it, even
        /// when it was deleted (TC5); first when `anchor` is nil. Right
        /// after, not after whatever followed it, so that a run one person
        /// added item by item stays together (TC1).
        func position(after anchor: String?) -> Result<Int, TodoRefusal> {
            guard let anchor else { return .success(0) }
            guard let index = index(of: anchor) else { return .failure(.noSuchItem(anchor, deletedBy: nil)) }
            return .success(index + 1)
        }

        /// Drops the oldest tombstones beyond `tombstonesKept`.
        mutating func forgetOldTombstones() {
            guard tombstones > TodoList.tombstonesKept else { return }
            let cutoff = deletions - UInt64(TodoList.tombstonesKept)
            entries.removeAll { $0.isDeleted && $0.deletedAt <= cutoff }
            tombstones = entries.reduce(0) { $0 + ($1.isDeleted ? 1 : 0) }
        }
    }

    /// One place in the order: an item, or the tombstone of a deleted one.
    public struct Entry: Equatable, Sendable {
        public var id: String {
            didSet { key = Self.fingerprint(id) }
        }
        /// `id`'s fingerprint (FNV-1a of its UTF-8), for fast lookups.
        private(set) var key: UInt64
        public var title: String
        public var memo: String
        public var done: Bool
        /// Who last set the title / memo: told when someone overwrites it (TC2).
        public var titleBy: String
        public var memoBy: String
        /// Others whose changes a merge kept in the title / memo: told too
        /// when an edit overwrites it (TC2). Empty after a plain replace.
        public var titleWith: [String] = []
        public var memoWith: [String] = []
        /// Set once deleted (by whom; "" when the author had no name).
        public var deletedBy: String?
        /// The delete's number among all deletes (0 while live).
        public var deletedAt: UInt64

        public init(id: String, title: String = "", memo: String = "", done: Bool = false, titleBy: String = "",
                    memoBy: String = "", deletedBy: String? = nil, deletedAt: UInt64 = 0) {
            self.id = id
            key = Self.fingerprint(id)
            self.title = title
            self.memo = memo
            self.done = done
            self.titleBy = titleBy
            self.memoBy = memoBy
            self.deletedBy = deletedBy
            self.deletedAt = deletedAt
        }

        public var isDeleted: Bool { deletedBy != nil }

        /// A deleted item keeps its id, place, who deleted it and when: no text, no authors.
        mutating func forgetText() {
            title = ""
            memo = ""
            done = false
            titleBy = ""
            memoBy = ""
            titleWith = []
            memoWith = []
        }

        static func fingerprint(_ id: String) -> UInt64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in id.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            return hash
        }
    }

    /// An item as people see it (T1).
    public struct Item: Equatable, Sendable {
        public var id: String
        public var title: String
        public var memo: String
        public var done: Bool

        public init(id: String, title: String = "", memo: String = "", done: Bool = false) {
            self.id = id
            self.title = title
            self.memo = memo
            self.done = done
        }
    }
}
