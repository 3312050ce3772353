/// A `state` frame as a tree of JSON values whose leaves are already
/// encoded. The hub writes whole `state` frames from it and computes the
/// `patch` between two of them (`StatePatch`, docs/PROTOCOL.md "Patches"),
/// so a whole state and the patched one can never disagree: both come from
/// the same tree. Not `indirect`: the nesting goes through arrays, so a
/// leaf costs no allocation of its own (a large list is built per publish).
public enum StateShape: Equatable, Sendable {
    /// Any JSON value, encoded: `{"who":"ana"}`, `["2SFR"]`. A changed one
    /// is replaced whole.
    case value(String)
    /// A string, kept as its text (escaped only when written), so building
    /// and comparing a large state allocates no JSON for unchanged fields.
    case string(String)
    case number(Int64)
    case bool(Bool)
    case null
    /// An object; its members are written in this order, compared by key.
    case object([ShapeMember])
    /// An array compared place by place.
    case array([StateShape])
    /// An array of elements that carry an id (todo items, a shop's dishes):
    /// compared by id, so a change, insertion, removal or move of one
    /// element is a patch about that element.
    case identified([IdentifiedShape])

    public static func int<T: BinaryInteger>(_ number: T) -> StateShape { .number(Int64(clamping: number)) }

    /// The JSON text of this value.
    public var json: String {
        var out = ""
        out.reserveCapacity(256)  // a small state in one allocation; a large one grows from there
        write(to: &out)
        return out
    }

    public func write(to out: inout String) {
        switch self {
        case let .value(text):
            out += text
        case let .string(text):
            HubMessage.appendJSONString(text, to: &out)
        case let .number(number):
            out += String(number)
        case let .bool(flag):
            out += flag ? "true" : "false"
        case .null:
            out += "null"
        case let .object(members):
            out += "{"
            ShapeMember.write(members, to: &out)
            out += "}"
        case let .array(elements):
            out += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { out += "," }
                element.write(to: &out)
            }
            out += "]"
        case let .identified(elements):
            out += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { out += "," }
                element.value.write(to: &out)
            }
            out += "]"
        }
    }

    /// Whether two values are leaves (written whole when they differ).
    var isLeaf: Bool {
        switch self {
        case .object, .array, .identified: false
        default: true
        }
    }
}

/// One member of an object shape.
public struct ShapeMember: Equatable, Sendable {
    public var key: String
    public var value: StateShape

    public init(_ key: String, _ value: StateShape) {
        self.key = key
        self.value = value
    }

    /// `"a":1,"b":[]`: members without the braces (a kind's own part of a
    /// state frame, `WireKind.stateMembers`).
    public static func write(_ members: [ShapeMember], to out: inout String) {
        for (index, member) in members.enumerated() {
            if index > 0 { out += "," }
            HubMessage.appendJSONString(member.key, to: &out)
            out += ":"
            member.value.write(to: &out)
        }
    }

    public static func text(_ members: [ShapeMember]) -> String {
        var out = ""
        write(members, to: &out)
        return out
    }
}

/// An element of an `identified` array: its id and its value (which shows
/// the id itself, as `"id":"a1"`).
public struct IdentifiedShape: Equatable, Sendable {
    public var id: String
    public var value: StateShape

    public init(id: String, _ value: StateShape) {
        self.id = id
        self.value = value
    }
}
