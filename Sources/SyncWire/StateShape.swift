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
    public var json: String { jsonBytes.text }

    /// The JSON of this value as bytes (what a frame carries).
    public var jsonBytes: JSONWriter {
        var out = JSONWriter(capacity: 256)  // a small state in one allocation; a large one grows from there
        write(to: &out)
        return out
    }

    /// Appends this value's JSON to `out` (presence, tests; frames use the
    /// bytes).
    public func write(to out: inout String) {
        out += json
    }

    public func write(to out: inout JSONWriter) {
        switch self {
        case let .value(text):
            out.raw(json: text)
        case let .string(text):
            out.string(text)
        case let .number(number):
            out.number(number)
        case let .bool(flag):
            out.bool(flag)
        case .null:
            out.raw("null")
        case let .object(members):
            out.raw(UInt8(ascii: "{"))
            ShapeMember.write(members, to: &out)
            out.raw(UInt8(ascii: "}"))
        case let .array(elements):
            out.raw(UInt8(ascii: "["))
            for index in elements.indices {
                if index > 0 { out.raw(UInt8(ascii: ",")) }
                elements[index].write(to: &out)
            }
            out.raw(UInt8(ascii: "]"))
        case let .identified(elements):
            out.raw(UInt8(ascii: "["))
            for index in elements.indices {
                if index > 0 { out.raw(UInt8(ascii: ",")) }
                elements[index].value.write(to: &out)
            }
            out.raw(UInt8(ascii: "]"))
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
    public static func write(_ members: [ShapeMember], to out: inout JSONWriter) {
        for index in members.indices {
            if index > 0 { out.raw(UInt8(ascii: ",")) }
            out.string(members[index].key)
            out.raw(UInt8(ascii: ":"))
            members[index].value.write(to: &out)
        }
    }

    public static func write(_ members: [ShapeMember], to out: inout String) {
        out += text(members)
    }

    public static func text(_ members: [ShapeMember]) -> String {
        var out = JSONWriter()
        write(members, to: &out)
        return out.text
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
