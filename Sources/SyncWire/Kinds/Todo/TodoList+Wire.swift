import BoardCRDT
import Foundation

/// The reminders list on the wire (docs/rules/todo.md): `add` with `id`
/// (optional), `after`, `title`, `memo`; `edit` with `id`, `title` and/or
/// `memo` and their bases; `done`, `move`, `delete`; presence by `editing`.
/// State members `items` (what people see, in order) and `editing`.
extension TodoList: WireKind {
    public static let pathSegment = "todo"
    public static let intentTypes = ["add", "edit", "done", "move", "delete", "editing"]
    public static let tracksEditing = true

    private enum Key: String, CodingKey {
        case id, after, title, memo, done, base
        case titleBase = "title_base", memoBase = "memo_base"
    }

    /// The fields of a todo intent; `after` told apart when absent and when null.
    private struct Fields: Decodable {
        var id: String?
        var hasAfter: Bool
        var after: String?
        var title: String?
        var memo: String?
        var done: Bool?
        var base: String?
        var titleBase: String?
        var memoBase: String?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            id = try container.decodeIfPresent(String.self, forKey: .id)
            hasAfter = container.contains(.after)
            after = try container.decodeIfPresent(String.self, forKey: .after)
            title = try container.decodeIfPresent(String.self, forKey: .title)
            memo = try container.decodeIfPresent(String.self, forKey: .memo)
            done = try container.decodeIfPresent(Bool.self, forKey: .done)
            base = try container.decodeIfPresent(String.self, forKey: .base)
            titleBase = try container.decodeIfPresent(String.self, forKey: .titleBase)
            memoBase = try container.decodeIfPresent(String.self, forKey: .memoBase)
        }
    }

    /// `done`, `move` and `delete` (the frequent small intents) read by
    /// hand; anything else, or anything unusual in them, goes to the full
    /// decoder, which answers the same frames the same way.
    public static func scanIntent(_ bytes: UnsafeRawBufferPointer) -> ClientMessage<TodoList>? {
        guard let fields = JSONFields(bytes) else { return nil }
        var type: String?, id: String?, done: Bool?, ref: String?, key: String?
        var after: String??
        for (name, range) in fields.members {
            switch name {
            case "type": type = fields.string(range)
            case "id": guard let text = fields.string(range) else { return nil }; id = text
            case "done": guard let flag = fields.bool(range) else { return nil }; done = flag
            case "after":
                if fields.isNull(range) {
                    after = .some(nil)
                } else if let text = fields.string(range) {
                    after = .some(text)
                } else {
                    return nil
                }
            case "ref": guard let text = fields.string(range), text.count <= ClientLimits.maxRefLength else { return nil }; ref = text
            case "key":
                guard let text = fields.string(range), !text.isEmpty, text.count <= ClientLimits.maxKeyLength else { return nil }
                key = text
            default: return nil
            }
        }
        let intent: Intent
        switch type {
        case "done"?:
            guard let id, let done, after == nil else { return nil }
            intent = .done(id: id, done: done)
        case "move"?:
            guard let id, let after, done == nil else { return nil }
            intent = .move(id: id, after: after)
        case "delete"?:
            guard let id, done == nil, after == nil else { return nil }
            intent = .delete(id: id)
        default:
            return nil
        }
        guard problem(with: probe(intent)) == nil else { return nil }
        return .intent(intent, ref: ref, key: key)
    }

    public static func intent(type: String, frame: Data) throws(ProtocolError) -> Intent? {
        guard intentTypes.contains(type), type != "editing" else { return nil }
        let fields = try WireDecoding.decode(Fields.self, from: frame)
        let intent: Intent
        switch type {
        case "add":
            guard fields.hasAfter else {
                throw ProtocolError("missing_field", "add needs \"after\": the id of the item to add after, or null for the top")
            }
            intent = .add(id: fields.id, after: fields.after, title: fields.title ?? "", memo: fields.memo ?? "")
        case "edit":
            let id = try id(fields.id, for: type)
            guard fields.title != nil || fields.memo != nil else {
                throw ProtocolError("missing_field", "edit needs \"title\", \"memo\" or both")
            }
            let both = fields.title != nil && fields.memo != nil
            if both, fields.base != nil {
                throw ProtocolError("bad_field", "an edit of both fields names its bases \"title_base\" and \"memo_base\", not \"base\"")
            }
            intent = .edit(id: id, title: fields.title.map { TextEdit($0, base: fields.titleBase ?? (both ? nil : fields.base)) },
                           memo: fields.memo.map { TextEdit($0, base: fields.memoBase ?? (both ? nil : fields.base)) })
        case "done":
            let id = try id(fields.id, for: type)
            guard let done = fields.done else { throw ProtocolError("missing_field", "done needs \"done\": true or false") }
            intent = .done(id: id, done: done)
        case "move":
            let id = try id(fields.id, for: type)
            guard fields.hasAfter else {
                throw ProtocolError("missing_field", "move needs \"after\": the id of the item to put it after, or null for the top")
            }
            intent = .move(id: id, after: fields.after)
        default:
            intent = .delete(id: try id(fields.id, for: type))
        }
        if let problem = problem(with: probe(intent)) { throw ProtocolError(problem.code, problem.message) }
        return intent
    }

    private static func id(_ id: String?, for type: String) throws(ProtocolError) -> String {
        guard let id else { throw ProtocolError("missing_field", "\(type) needs \"id\": the item's id") }
        return id
    }

    /// The change an intent makes, with a stand-in id for an add without
    /// one: what the frame-level checks (T1) look at.
    private static func probe(_ intent: Intent) -> Change {
        switch intent {
        case let .add(id, after, title, memo): .add(id: id ?? "new", after: after, title: title, memo: memo)
        case let .edit(id, title, memo): .edit(id: id, title: title, memo: memo)
        case let .done(id, done): .done(id: id, done: done)
        case let .move(id, after): .move(id: id, after: after)
        case let .delete(id): .delete(id: id)
        }
    }

    public static func editingProblem(_ id: String, in state: State) -> (code: String, message: String)? {
        guard isValidID(id) else {
            let refusal = TodoRefusal.badID(id)
            return (refusal.code, refusal.message)
        }
        guard state.item(id) == nil else { return nil }
        let refusal = TodoRefusal.noSuchItem(id, deletedBy: state.deleter(of: id))
        return (refusal.code, refusal.message)
    }

    public static func intentMembers(_ intent: Intent) -> String {
        var out: String
        switch intent {
        case let .add(id, after, title, memo):
            out = "\"type\":\"add\""
            if let id { appendMember("id", id, to: &out) }
            appendMember("after", after, to: &out)
            appendMember("title", title, to: &out)
            appendMember("memo", memo, to: &out)
        case let .edit(id, title, memo):
            out = "\"type\":\"edit\""
            appendMember("id", id, to: &out)
            appendEdits(title: title, memo: memo, to: &out)
        case let .done(id, done):
            out = "\"type\":\"done\""
            appendMember("id", id, to: &out)
            out += ",\"done\":\(done)"
        case let .move(id, after):
            out = "\"type\":\"move\""
            appendMember("id", id, to: &out)
            appendMember("after", after, to: &out)
        case let .delete(id):
            out = "\"type\":\"delete\""
            appendMember("id", id, to: &out)
        }
        return out
    }

    /// `title`/`memo` with their bases: `base` when one field is edited,
    /// `title_base`/`memo_base` when both are.
    private static func appendEdits(title: TextEdit?, memo: TextEdit?, to out: inout String) {
        let both = title != nil && memo != nil
        if let title {
            appendMember("title", title.text, to: &out)
            if let base = title.base { appendMember(both ? "title_base" : "base", base, to: &out) }
        }
        if let memo {
            appendMember("memo", memo.text, to: &out)
            if let base = memo.base { appendMember(both ? "memo_base" : "base", base, to: &out) }
        }
    }

    private static func appendMember(_ key: String, _ value: String?, to out: inout String) {
        out += ",\"\(key)\":"
        if let value { HubMessage.appendJSONString(value, to: &out) } else { out += "null" }
    }

    /// An edit's notice (TC2 `overwritten`) names its item and field.
    public static func noticeSubjects(of change: Change) -> [String] {
        guard case let .edit(id, title, memo) = change else { return [] }
        return (title == nil ? [] : [id + "/title"]) + (memo == nil ? [] : [id + "/memo"])
    }

    /// `"items":[{"id":"a1","title":"milk","memo":"","done":false}]`, by id.
    public static func stateShape(_ state: State) -> [ShapeMember] {
        var items: [IdentifiedShape] = []
        items.reserveCapacity(state.entries.count)
        for entry in state.entries where !entry.isDeleted {
            items.append(IdentifiedShape(id: entry.id, .object([
                ShapeMember("id", .string(entry.id)), ShapeMember("title", .string(entry.title)),
                ShapeMember("memo", .string(entry.memo)), ShapeMember("done", .bool(entry.done)),
            ])))
        }
        return [ShapeMember("items", .identified(items))]
    }

    public static func changeJSON(_ change: Change) -> String {
        var out: String
        switch change {
        case let .add(id, after, title, memo):
            out = "{\"op\":\"add\""
            appendMember("id", id, to: &out)
            appendMember("after", after, to: &out)
            appendMember("title", title, to: &out)
            appendMember("memo", memo, to: &out)
        case let .edit(id, title, memo):
            out = "{\"op\":\"edit\""
            appendMember("id", id, to: &out)
            for (key, edit) in [("title", title), ("memo", memo)] {
                guard let edit else { continue }
                out += ",\"\(key)\":{\"text\":"
                HubMessage.appendJSONString(edit.text, to: &out)
                if let base = edit.base {
                    out += ",\"base\":"
                    HubMessage.appendJSONString(base, to: &out)
                }
                out += "}"
            }
        case let .done(id, done):
            out = "{\"op\":\"done\""
            appendMember("id", id, to: &out)
            out += ",\"done\":\(done)"
        case let .move(id, after):
            out = "{\"op\":\"move\""
            appendMember("id", id, to: &out)
            appendMember("after", after, to: &out)
        case let .delete(id):
            out = "{\"op\":\"delete\""
            appendMember("id", id, to: &out)
        }
        return out + "}"
    }

    /// T2: an add's ack names the item (the id the list made up, or the client's).
    public static func ackMembers(for operation: BoardCRDT.Operation<Change>?) -> String {
        guard case let .add(id, _, _, _)? = operation?.change else { return "" }
        var out = "\"id\":"
        HubMessage.appendJSONString(id, to: &out)
        return out
    }

    /// What a change the total order refused is called when it is taken back.
    public static func summary(of change: Change) -> String {
        switch change {
        case .add: "your new reminder"
        case .edit: "your edit"
        case let .done(_, done): done ? "your tick" : "your untick"
        case .move: "your move"
        case .delete: "your delete"
        }
    }
}
