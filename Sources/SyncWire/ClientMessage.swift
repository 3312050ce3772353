import BoardCRDT
import Foundation

/// Everything a client may send the hub about a board of kind `Kind`
/// (docs/PROTOCOL.md).
public enum ClientMessage<Kind: WireKind>: Equatable, Sendable {
    public typealias Hello = ReplicaHello
    /// Thin-client intents: the hub turns them into operations.
    /// `key` is the optional idempotency key: a resend is applied at most once.
    case intent(Kind.Intent, ref: String?, key: String? = nil)
    /// Who acts on this connection from now on (K10, docs/rules/README.md).
    case join(name: String, ref: String?)
    /// A replica client introduces itself and says what it already has, so
    /// the hub sends only what it lacks (resume without refetching).
    case hello(Hello)
    /// A replica client's own operations.
    case operations([BoardCRDT.Operation<Kind.Change>], ref: String?)
    /// Which item this connection's person edits now (nil: none), for kinds
    /// that track it (`WireKind.tracksEditing`): presence, never stored.
    case editing(id: String?, ref: String?)
    /// A token presented after the upgrade (browsers) or a newer one
    /// before the current one expires (refresh): docs/SECURITY.md.
    case auth(token: String, ref: String?)
    /// How this connection wants the board's state from now on: whole
    /// `state` frames or `patch` frames (docs/PROTOCOL.md "Patches").
    case subscribe(StateFormat, ref: String?)
    /// A question about the board answered to this connection alone
    /// (`WireKind.queryTypes`: the shop's `my_orders`).
    case query(String, ref: String?)
}

/// What a thin connection gets after each change: whole states (the
/// default) or patches from the last state it received.
public enum StateFormat: String, Equatable, Sendable {
    case state
    case patch
}

/// `auth`'s one field.
public struct AuthFields: Decodable, Sendable {
    public var token: String?

    /// The token of an `auth` frame, or why the frame is not one.
    public static func token(in bytes: UnsafeRawBufferPointer) -> Result<(token: String, ref: String?), ProtocolError> {
        let data = Data(bytes)
        do throws(ProtocolError) {
            let head = try WireDecoding.decode(AuthHead.self, from: data)
            guard head.type == "auth" else {
                return .failure(ProtocolError("auth_first", "send {\"type\":\"auth\",\"token\":\"...\"} before anything else"))
            }
            guard let token = head.token, !token.isEmpty else {
                return .failure(ProtocolError("missing_field", "auth needs \"token\": a signed token"))
            }
            return .success((token, head.ref))
        } catch {
            return .failure(error)
        }
    }

    private struct AuthHead: Decodable {
        var type: String
        var token: String?
        var ref: String?
    }
}

/// `editing`'s one field: an item id, or null (absent means null too).
private struct EditingFields: Decodable {
    var id: String?
}

/// A replica client's greeting: small and bounded whatever the board's
/// history (no version vector): the hub sends every durable operation
/// after its checkpoint, and the checkpoint when the client's is older.
public struct ReplicaHello: Equatable, Sendable {
    public var replica: ReplicaID
    /// The name the replica's operations are made under (`Operation.author`).
    public var name: String?
    /// The stamp of the checkpoint the client holds (`.origin` for none).
    public var frontier: Stamp
    /// The highest sequence number of its own that this replica has ever
    /// sent to a hub (0: none). A hub with no record of a replica that
    /// sent something answers `unknown_replica`.
    public var sent: UInt64
    /// Whether the client wants `presence` frames (who is on the board, who
    /// edits what) in place of whole `state` frames: its operations carry
    /// the rest.
    public var presenceOnly: Bool
    public init(replica: ReplicaID, name: String?, frontier: Stamp, sent: UInt64, presenceOnly: Bool = false) {
        self.replica = replica
        self.name = name
        self.frontier = frontier
        self.sent = sent
        self.presenceOnly = presenceOnly
    }
}

/// A frame the hub cannot take, with the code and message sent back in an `error`.
public struct ProtocolError: Error, Equatable, Sendable {
    public var code: String
    public var message: String
    public init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// Bounds on what a client frame may carry (docs/PROTOCOL.md).
public enum ClientLimits {
    /// Longest `ref` echoed back (K6).
    public static let maxRefLength = 64
    /// Longest idempotency key (K6: 1 to 64 characters).
    public static let maxKeyLength = 64
    /// Longest display name (`join`, `hello`).
    public static let maxNameLength = 32
    /// Most operations in one `ops` frame.
    public static let maxOperationsPerFrame = 256

    /// Why `name` cannot be a display name, or nil.
    public static func problem(withName name: String) -> ProtocolError? {
        if name.isEmpty || name.count > maxNameLength || name.contains(where: \.isNewline) {
            return ProtocolError("bad_name", "\"name\" must be one line of 1 to \(maxNameLength) characters")
        }
        return nil
    }
}

/// The fields any client message may carry; which are required depends on `type`.
private struct Envelope<Change: Equatable & Codable & Sendable>: Decodable {
    var type: String
    var ref: String?
    var key: String?
    var replica: ReplicaID?
    var name: String?
    var frontier: Stamp?
    var sent: UInt64?
    var presence: Bool?
    var format: String?
    var operations: [BoardCRDT.Operation<Change>]?
}

/// Only `type`: to tell a kind's intent from the replica protocol's frames
/// before decoding the rest.
private struct TypeOnly: Decodable {
    var type: String
    var ref: String?
    var key: String?
}

extension ClientMessage {
    /// Parses one text frame. Every failure names the field and what was expected.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(ProtocolError) -> ClientMessage {
        if let intent = Kind.scanIntent(bytes) { return intent }
        let data = Data(bytes)
        let head = try WireDecoding.decode(TypeOnly.self, from: data)
        if let ref = head.ref, ref.count > ClientLimits.maxRefLength {
            throw ProtocolError("bad_ref", "\"ref\" is longer than \(ClientLimits.maxRefLength) characters")
        }
        if let key = head.key, key.isEmpty || key.count > ClientLimits.maxKeyLength {
            throw ProtocolError("bad_key", "\"key\" must be 1 to \(ClientLimits.maxKeyLength) characters")
        }
        switch head.type {
        case "join":
            let envelope = try WireDecoding.decode(Envelope<Kind.Change>.self, from: data)
            guard let name = envelope.name else {
                throw ProtocolError("missing_field", "join needs \"name\": 1 to \(ClientLimits.maxNameLength) characters")
            }
            if let problem = ClientLimits.problem(withName: name) { throw problem }
            return .join(name: name, ref: head.ref)
        case "hello":
            let envelope = try WireDecoding.decode(Envelope<Kind.Change>.self, from: data)
            guard let replica = envelope.replica else {
                throw ProtocolError("missing_field", "hello needs \"replica\": the client's replica id")
            }
            if let name = envelope.name, let problem = ClientLimits.problem(withName: name) { throw problem }
            guard (envelope.sent ?? 0) <= Replica<Kind>.maxLamport else {
                throw ProtocolError("bad_field", "\"sent\" is beyond 2^62")
            }
            return .hello(Hello(replica: replica, name: envelope.name, frontier: envelope.frontier ?? .origin,
                                sent: envelope.sent ?? 0, presenceOnly: envelope.presence ?? false))
        case "subscribe":
            let envelope = try WireDecoding.decode(Envelope<Kind.Change>.self, from: data)
            guard let text = envelope.format else {
                throw ProtocolError("missing_field", "subscribe needs \"format\": \"patch\" or \"state\"")
            }
            guard let format = StateFormat(rawValue: text) else {
                throw ProtocolError("bad_field", "\"format\" must be \"patch\" or \"state\", not \"\(text.prefix(32))\"")
            }
            return .subscribe(format, ref: head.ref)
        case "ops":
            let envelope = try WireDecoding.decode(Envelope<Kind.Change>.self, from: data)
            guard let operations = envelope.operations else {
                throw ProtocolError("missing_field", "ops needs \"operations\": an array of operations")
            }
            guard operations.count <= ClientLimits.maxOperationsPerFrame else {
                throw ProtocolError("too_many_operations", "at most \(ClientLimits.maxOperationsPerFrame) operations per frame")
            }
            return .operations(operations, ref: head.ref)
        case "auth":
            let fields = try WireDecoding.decode(AuthFields.self, from: data)
            guard let token = fields.token, !token.isEmpty else {
                throw ProtocolError("missing_field", "auth needs \"token\": a signed token")
            }
            return .auth(token: token, ref: head.ref)
        case "editing" where Kind.tracksEditing:
            let fields = try WireDecoding.decode(EditingFields.self, from: data)
            return .editing(id: fields.id, ref: head.ref)
        case let type where Kind.queryTypes.contains(type):
            return .query(type, ref: head.ref)
        default:
            if let intent = try Kind.intent(type: head.type, frame: data) {
                return .intent(intent, ref: head.ref, key: head.key)
            }
            let expected = (Kind.intentTypes + Kind.queryTypes + ["join", "subscribe", "hello", "ops"]).joined(separator: ", ")
            throw ProtocolError("unknown_type",
                                "unknown \"type\" \"\(head.type.prefix(32))\" on a \(Kind.name) board; expected one of \(expected)")
        }
    }

    /// The idempotency key of a keyed intent.
    public var key: String? {
        if case let .intent(_, _, key) = self { return key }
        return nil
    }

    /// The `ref` a reply to this message echoes.
    public var ref: String? {
        switch self {
        case let .intent(_, ref, _), let .join(_, ref), let .operations(_, ref), let .editing(_, ref), let .auth(_, ref),
             let .subscribe(_, ref), let .query(_, ref): ref
        case .hello: nil
        }
    }
}

extension ClientMessage {
    /// Encodes a thin-client intent frame (docs/PROTOCOL.md, "Client to hub:
    /// thin intents"), as a client sends it.
    public static func thinFrame(_ intent: Kind.Intent, ref: String?, key: String? = nil) -> String {
        var out = "{" + Kind.intentMembers(intent)
        if let ref {
            out += ",\"ref\":"
            HubMessage.appendJSONString(ref, to: &out)
        }
        if let key {
            out += ",\"key\":"
            HubMessage.appendJSONString(key, to: &out)
        }
        return out + "}"
    }

    /// Encodes a replica client's `hello` (written by hand: it cannot fail).
    public static func helloFrame(_ hello: Hello) -> String {
        var out = "{\"type\":\"hello\",\"replica\":\(hello.replica.rawValue)"
        if let name = hello.name {
            out += ",\"name\":"
            HubMessage.appendJSONString(name, to: &out)
        }
        out += ",\"frontier\":{\"lamport\":\(hello.frontier.lamport),\"replica\":\(hello.frontier.replica.rawValue)}"
        out += ",\"sent\":\(hello.sent)"
        if hello.presenceOnly { out += ",\"presence\":true" }
        return out + "}"
    }

    /// Encodes a `subscribe` frame.
    public static func subscribeFrame(_ format: StateFormat) -> String {
        "{\"type\":\"subscribe\",\"format\":\"\(format.rawValue)\"}"
    }

    /// Encodes a `join` frame.
    public static func joinFrame(name: String, ref: String? = nil) -> String {
        var out = "{\"type\":\"join\",\"name\":"
        HubMessage.appendJSONString(name, to: &out)
        if let ref {
            out += ",\"ref\":"
            HubMessage.appendJSONString(ref, to: &out)
        }
        return out + "}"
    }

    /// Encodes an `editing` frame (presence: which item this person edits).
    public static func editingFrame(id: String?, ref: String? = nil) -> String {
        var out = "{\"type\":\"editing\",\"id\":"
        if let id { HubMessage.appendJSONString(id, to: &out) } else { out += "null" }
        if let ref {
            out += ",\"ref\":"
            HubMessage.appendJSONString(ref, to: &out)
        }
        return out + "}"
    }

    /// Encodes a replica client's `ops` frame.
    public static func operationsFrame(_ operations: [BoardCRDT.Operation<Kind.Change>], ref: String?) -> String {
        var out = "{\"type\":\"ops\""
        if let ref {
            out += ",\"ref\":"
            HubMessage.appendJSONString(ref, to: &out)
        }
        out += ",\"operations\":["
        for (index, operation) in operations.enumerated() {
            if index > 0 { out += "," }
            out += Kind.operationJSON(operation)
        }
        return out + "]}"
    }
}
