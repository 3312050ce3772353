import BoardCRDT
import Foundation

/// Encodes the hub's messages. The thin ones are written by hand: they are
/// on the hot path (a state frame per board change) and have a fixed shape.
public enum HubMessage {
    /// `{"type":"state","board":...,"kind":...,"version":...,"clients":...,"names":[...],<the kind's members>}`
    /// `names` lists the display names given on the board (`join`, `hello`).
    public static func state(board: String, kind: String, version: UInt64, members: String, clients: Int, names: [String] = []) -> String {
        var out = "{\"type\":\"state\",\"board\":"
        out.reserveCapacity(112 + members.utf8.count)
        appendJSONString(board, to: &out)
        out += ",\"kind\":\"\(kind)\",\"version\":\(version),\"clients\":\(clients),\"names\":["
        for (index, name) in names.enumerated() {
            if index > 0 { out += "," }
            appendJSONString(name, to: &out)
        }
        out += "]"
        if !members.isEmpty { out += "," + members }
        out += "}"
        return out
    }

    /// The common members of a `state` frame, in the order they are
    /// written, before the kind's own (`WireKind.stateShape`) and presence.
    /// `room`: members the caller appends after these, so the array is
    /// allocated once.
    public static func stateHead(board: String, kind: String, version: UInt64, clients: Int, names: [String],
                                 room: Int = 0) -> [ShapeMember] {
        var members: [ShapeMember] = []
        members.reserveCapacity(6 + room)
        members.append(ShapeMember("type", .string("state")))
        members.append(ShapeMember("board", .string(board)))
        members.append(ShapeMember("kind", .string(kind)))
        members.append(ShapeMember("version", .int(version)))
        members.append(ShapeMember("clients", .int(clients)))
        members.append(ShapeMember("names", .array(names.map { .string($0) })))
        return members
    }

    /// `{"type":"patch","board":...,"version":N,"ops":[...]}`: `ops` (JSON
    /// Patch, `StatePatch`) turn the connection's last state into the one
    /// at `version`.
    public static func patch(board: String, version: UInt64, ops: String) -> String {
        var out = "{\"type\":\"patch\",\"board\":"
        out.reserveCapacity(48 + ops.utf8.count)
        appendJSONString(board, to: &out)
        out += ",\"version\":\(version),\"ops\":"
        out += ops
        return out + "}"
    }

    /// `{"type":"presence","board":...,"version":N,"clients":...,"names":[...]}`
    /// plus `"editing":{...}` on kinds that track it: what a replica client
    /// that asked for it (`hello` with `"presence":true`) gets in place of
    /// whole states, since its operations carry the rest.
    public static func presence(board: String, version: UInt64, presence: String) -> String {
        var out = "{\"type\":\"presence\",\"board\":"
        appendJSONString(board, to: &out)
        return out + ",\"version\":\(version)," + presence + "}"
    }

    /// `have`, on answers to a replica client's `ops`: the highest sequence
    /// number of its replica the hub holds durably. Operations after it were
    /// not integrated (they wait behind a gap) and must be sent again.
    /// `members`: the kind's own fields (`WireKind.ackMembers`), or "".
    public static func ack(ref: String?, version: UInt64, have: UInt64? = nil, members: String = "") -> String {
        // One per intent, on the way to the sender's first send: written as bytes.
        var out = JSONWriter(capacity: 64 + members.utf8.count)
        out.raw("{\"type\":\"ack\"")
        if let ref {
            out.raw(",\"ref\":")
            out.string(ref)
        }
        out.raw(",\"version\":")
        out.number(version)
        if let have {
            out.raw(",\"have\":")
            out.number(have)
        }
        if !members.isEmpty {
            out.raw(UInt8(ascii: ","))
            out.raw(json: members)
        }
        out.raw(UInt8(ascii: "}"))
        return out.text
    }

    /// `members`: the kind's own fields of the refusal (`WireKind.refusalMembers`), or "".
    public static func rejected(ref: String?, code: String, message: String, members: String = "") -> String {
        var out = "{\"type\":\"rejected\""
        appendRef(ref, to: &out)
        out += ",\"code\":"
        appendJSONString(code, to: &out)
        out += ",\"message\":"
        appendJSONString(message, to: &out)
        if !members.isEmpty { out += "," + members }
        out += "}"
        return out
    }

    /// Told to an author whose acknowledged change a later one by someone
    /// else overwrote or undid (K9, docs/rules/README.md); never an answer.
    /// `item`, `field` and `text` name what changed, for kinds with items.
    public static func notice(ref: String?, code: String, message: String, item: String? = nil, field: String? = nil,
                              text: String? = nil) -> String {
        var out = "{\"type\":\"notice\""
        appendRef(ref, to: &out)
        out += ",\"code\":"
        appendJSONString(code, to: &out)
        for (key, value) in [("id", item), ("field", field), ("text", text)] {
            guard let value else { continue }
            out += ",\"\(key)\":"
            appendJSONString(value, to: &out)
        }
        out += ",\"message\":"
        appendJSONString(message, to: &out)
        out += "}"
        return out
    }

    /// `replica` names the replica an answer to `hello` concerns.
    public static func error(_ error: ProtocolError, ref: String? = nil, have: UInt64? = nil, replica: ReplicaID? = nil) -> String {
        var out = "{\"type\":\"error\""
        appendRef(ref, to: &out)
        if let have { out += ",\"have\":\(have)" }
        if let replica { out += ",\"replica\":\(replica.rawValue)" }
        out += ",\"code\":"
        appendJSONString(error.code, to: &out)
        out += ",\"message\":"
        appendJSONString(error.message, to: &out)
        out += "}"
        return out
    }

    /// Replica protocol: the answer to `hello`: the durable operations after
    /// the hub's checkpoint, the checkpoint when the replica's is older, and
    /// `have`, the replica's own highest sequence number the hub holds.
    /// `replica` echoes the `hello`'s, so a client that changed its id since
    /// can tell an answer meant for its old one.
    /// `name` is the name the replica's operations must carry (its hello's,
    /// or the `guest-N` the hub gave the connection).
    public static func sync<Kind: WireKind>(_ delta: Delta<Kind>, board: String, version: UInt64, replica: ReplicaID, have: UInt64,
                                            name: String) throws(FrameEncodingError) -> String {
        try encode(SyncFrame<Kind>(type: "sync", board: board, version: version, replica: replica, have: have, name: name,
                                   checkpoint: delta.checkpoint, operations: delta.operations))
    }

    /// Replica protocol: operations merged by the hub, relayed to replica clients.
    public static func operations<Kind: WireKind>(_ operations: [BoardCRDT.Operation<Kind.Change>], of kind: Kind.Type, board: String,
                                                  version: UInt64) -> String {
        var out = "{\"type\":\"ops\",\"board\":"
        appendJSONString(board, to: &out)
        out += ",\"version\":\(version),\"operations\":["
        for (index, operation) in operations.enumerated() {
            if index > 0 { out += "," }
            out += Kind.operationJSON(operation)
        }
        return out + "]}"
    }

    /// Replica protocol: the hub compacted; replicas adopt this checkpoint.
    public static func checkpoint<Kind: WireKind>(_ checkpoint: Checkpoint<Kind>, board: String,
                                                  version: UInt64) throws(FrameEncodingError) -> String {
        try encode(SyncFrame<Kind>(type: "checkpoint", board: board, version: version, replica: nil, have: nil, name: nil,
                                   checkpoint: checkpoint, operations: []))
    }

    static func encode<Kind: WireKind>(_ frame: SyncFrame<Kind>) throws(FrameEncodingError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(frame), as: UTF8.self)
        } catch {
            throw FrameEncodingError(frameType: frame.type, reason: "\(error)")
        }
    }

    private static func appendRef(_ ref: String?, to out: inout String) {
        guard let ref else { return }
        out += ",\"ref\":"
        appendJSONString(ref, to: &out)
    }

    /// Appends `text` as a JSON string literal, escaping what JSON requires
    /// (as `JSONWriter.string` does).
    public static func appendJSONString(_ text: String, to out: inout String) {
        // Most text needs no escape: appended whole, after a scan of its
        // bytes in place, with no buffer of its own.
        var copy = text
        let plain = copy.withUTF8 { bytes in
            for byte in bytes where byte < 0x20 || byte == 0x22 || byte == 0x5C { return false }
            return true
        }
        if plain {
            out += "\""
            out += text
            out += "\""
            return
        }
        var literal = JSONWriter(capacity: text.utf8.count + 8)
        literal.string(text)
        out += literal.text
    }
}

/// The replica-protocol frames `sync`, `ops` and `checkpoint` (hub to client).
public struct SyncFrame<Kind: WireKind>: Codable, Sendable {
    public var type: String
    public var board: String
    public var version: UInt64
    /// On `sync` only: see `HubMessage.sync`.
    public var replica: ReplicaID?
    public var have: UInt64?
    public var name: String?
    public var checkpoint: Checkpoint<Kind>?
    public var operations: [BoardCRDT.Operation<Kind.Change>]
}

/// A frame the hub could not encode (a value JSON cannot hold). Never sent
/// as an empty frame: the hub logs it and closes the connections concerned.
public struct FrameEncodingError: Error, Equatable, Sendable, CustomStringConvertible {
    public var frameType: String
    public var reason: String
    public var description: String { "could not encode a \(frameType) frame: \(reason)" }
}
