/// A `state` frame as a tree of JSON values whose leaves are already
/// encoded. The hub writes whole `state` frames from it and computes the
/// `patch` between two of them (`StatePatch`, docs/PROTOCOL.md "Patches"),
/// so a whole state and the patched one can never disagree: both come from
/// the same tree.
public indirect enum StateShape: Equatable, Sendable {
    /// Any JSON value, encoded: `3`, `"A"`, `null`, `{"who":"ana"}`. A
    /// changed leaf is replaced whole.
    case value(String)
    /// An object; its members are written in this order, compared by key.
    case object([ShapeMember])
    /// An array compared place by place.
    case array([StateShape])
    /// An array of elements that carry an id (todo items, a shop's dishes):
    /// compared by id, so a change, insertion, removal or move of one
    /// element is a patch about that element.
    case identified([IdentifiedShape])

    public static func string(_ text: String) -> StateShape {
        var out = ""
        HubMessage.appendJSONString(text, to: &out)
        return .value(out)
    }

    public static func int<T: BinaryInteger>(_ number: T) -> StateShape { .value(String(number)) }

    public static func bool(_ flag: Bool) -> StateShape { .value(flag ? "true" : "false") }

    public static let null = StateShape.value("null")

    /// The JSON text of this value.
    public var json: String {
        var out = ""
        write(to: &out)
        return out
    }

    public func write(to out: inout String) {
        switch self {
        case let .value(text):
            out += text
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
