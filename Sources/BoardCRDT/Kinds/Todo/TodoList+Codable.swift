/// Compact JSON for changes: `{"op":"add","id":"a1","after":null,"title":"Milk","memo":""}`,
/// `{"op":"edit","id":"a1","title":{"text":"Milk","base":"Mil"}}`,
/// `{"op":"done","id":"a1","done":true}`, `{"op":"move","id":"a1","after":"b2"}`,
/// `{"op":"delete","id":"a1"}`.
extension TodoList.Change: Codable {
    private enum Key: String, CodingKey { case op, id, after, title, memo, done }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let op = try container.decode(String.self, forKey: .op)
        let id = try container.decode(String.self, forKey: .id)
        switch op {
        case "add":
            self = .add(id: id, after: try container.decodeIfPresent(String.self, forKey: .after),
                        title: try container.decode(String.self, forKey: .title), memo: try container.decode(String.self, forKey: .memo))
        case "edit":
            self = .edit(id: id, title: try container.decodeIfPresent(TodoList.TextEdit.self, forKey: .title),
                         memo: try container.decodeIfPresent(TodoList.TextEdit.self, forKey: .memo))
        case "done": self = .done(id: id, done: try container.decode(Bool.self, forKey: .done))
        case "move": self = .move(id: id, after: try container.decodeIfPresent(String.self, forKey: .after))
        case "delete": self = .delete(id: id)
        default:
            throw DecodingError.dataCorruptedError(forKey: .op, in: container, debugDescription: "unknown change \"\(op.prefix(16))\"")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        switch self {
        case let .add(id, after, title, memo):
            try container.encode("add", forKey: .op)
            try container.encode(id, forKey: .id)
            try container.encode(after, forKey: .after)
            try container.encode(title, forKey: .title)
            try container.encode(memo, forKey: .memo)
        case let .edit(id, title, memo):
            try container.encode("edit", forKey: .op)
            try container.encode(id, forKey: .id)
            try container.encodeIfPresent(title, forKey: .title)
            try container.encodeIfPresent(memo, forKey: .memo)
        case let .done(id, done):
            try container.encode("done", forKey: .op)
            try container.encode(id, forKey: .id)
            try container.encode(done, forKey: .done)
        case let .move(id, after):
            try container.encode("move", forKey: .op)
            try container.encode(id, forKey: .id)
            try container.encode(after, forKey: .after)
        case let .delete(id):
            try container.encode("delete", forKey: .op)
            try container.encode(id, forKey: .id)
        }
    }
}

/// `{"text":"Milk","base":"Mil"}` (`base` left out when absent).
extension TodoList.TextEdit: Codable {
    private enum Key: String, CodingKey { case text, base }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        self.init(try container.decode(String.self, forKey: .text), base: try container.decodeIfPresent(String.self, forKey: .base))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(text, forKey: .text)
        try container.encodeIfPresent(base, forKey: .base)
    }
}

/// `{"entries":[{"id":"a1","title":"Milk","memo":"","done":false,"title_by":"ana","memo_by":"ana"},
/// {"id":"b2",...,"deleted_by":"bo","deleted_at":3}],"deletions":3}`. A decoded state must pass
/// `TodoList.violations(of:)`: a checkpoint from a peer is input like any other.
extension TodoList.State: Codable {
    private enum Key: String, CodingKey { case entries, deletions }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let state = TodoList.State(entries: try container.decode([TodoList.Entry].self, forKey: .entries),
                                   deletions: try container.decode(UInt64.self, forKey: .deletions))
        let problems = TodoList.violations(of: state)
        guard problems.isEmpty else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "not a valid list: " + problems.prefix(3).joined(separator: "; ")))
        }
        self = state
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(entries, forKey: .entries)
        try container.encode(deletions, forKey: .deletions)
    }
}

extension TodoList.Entry: Codable {
    private enum Key: String, CodingKey {
        case id, title, memo, done
        case titleBy = "title_by", memoBy = "memo_by", deletedBy = "deleted_by", deletedAt = "deleted_at"
        case titleWith = "title_with", memoWith = "memo_with"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let deleted = container.contains(.deletedBy)
        // A deleted item is written without text (`forgetText`); one stored
        // before that rule keeps none once read.
        self.init(id: try container.decode(String.self, forKey: .id),
                  title: deleted ? "" : try container.decode(String.self, forKey: .title),
                  memo: deleted ? "" : try container.decode(String.self, forKey: .memo),
                  done: deleted ? false : try container.decode(Bool.self, forKey: .done),
                  titleBy: try container.decodeIfPresent(String.self, forKey: .titleBy) ?? "",
                  memoBy: try container.decodeIfPresent(String.self, forKey: .memoBy) ?? "",
                  deletedBy: try container.decodeIfPresent(String.self, forKey: .deletedBy),
                  deletedAt: try container.decodeIfPresent(UInt64.self, forKey: .deletedAt) ?? 0)
        titleWith = Array(try container.decodeIfPresent([String].self, forKey: .titleWith)?.prefix(TodoList.sharedAuthorsKept) ?? [])
        memoWith = Array(try container.decodeIfPresent([String].self, forKey: .memoWith)?.prefix(TodoList.sharedAuthorsKept) ?? [])
        if deleted { forgetText() }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(id, forKey: .id)
        if let deletedBy {
            // A tombstone: no text (`forgetText`); the empty fields stay so
            // that readers of the earlier form (which required them) still
            // read it: `{"id":"a1","title":"","memo":"","done":false,"deleted_by":"ana","deleted_at":3}`.
            try container.encode("", forKey: .title)
            try container.encode("", forKey: .memo)
            try container.encode(false, forKey: .done)
            try container.encode(deletedBy, forKey: .deletedBy)
            try container.encode(deletedAt, forKey: .deletedAt)
            return
        }
        try container.encode(title, forKey: .title)
        try container.encode(memo, forKey: .memo)
        try container.encode(done, forKey: .done)
        if !titleBy.isEmpty { try container.encode(titleBy, forKey: .titleBy) }
        if !memoBy.isEmpty { try container.encode(memoBy, forKey: .memoBy) }
        try container.encodeIfPresent(deletedBy, forKey: .deletedBy)
        if deletedAt != 0 { try container.encode(deletedAt, forKey: .deletedAt) }
        if !titleWith.isEmpty { try container.encode(titleWith, forKey: .titleWith) }
        if !memoWith.isEmpty { try container.encode(memoWith, forKey: .memoWith) }
    }
}

extension TodoList {
    /// T1, TC1-TC5: ids valid and unique (each item once), texts within
    /// bounds, tombstones numbered by distinct deletes, at most
    /// `tombstonesKept` of them.
    public static func violations(of state: State) -> [String] {
        var problems: [String] = []
        var seen = Set<String>()
        var deletedAt = Set<UInt64>()
        var tombstones = 0
        for entry in state.entries {
            if !isValidID(entry.id) { problems.append("\"\(entry.id.prefix(70))\" is not a valid id") }
            if !seen.insert(entry.id).inserted { problems.append("\(entry.id) is on the list twice") }
            if let problem = textProblem(entry.title, field: .title) ?? textProblem(entry.memo, field: .memo) {
                problems.append("\(entry.id): \(problem.message)")
            }
            if entry.isDeleted {
                tombstones += 1
                if !entry.title.isEmpty || !entry.memo.isEmpty || !entry.titleWith.isEmpty || !entry.memoWith.isEmpty {
                    problems.append("\(entry.id) is deleted and keeps text")
                }
                if entry.deletedAt == 0 || entry.deletedAt > state.deletions || !deletedAt.insert(entry.deletedAt).inserted {
                    problems.append("\(entry.id) has delete number \(entry.deletedAt) of \(state.deletions)")
                }
            } else if entry.deletedAt != 0 {
                problems.append("\(entry.id) is live with a delete number")
            }
        }
        if tombstones > tombstonesKept { problems.append("\(tombstones) deleted items kept, more than \(tombstonesKept)") }
        // Room for every delete still to come: a count near the top would trap.
        if state.deletions > UInt64.max >> 2 { problems.append("\(state.deletions) deletes counted, beyond 2^62") }
        return problems
    }
}
