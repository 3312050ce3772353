import BoardCRDT
import Foundation

/// Everything a client may send the hub (docs/PROTOCOL.md).
public enum ClientMessage: Equatable, Sendable {
    /// Thin-client intents (CONTRACT): the hub turns them into operations.
    /// `key` is the optional idempotency key: a resend is applied at most once.
    case intent(LetterBoard.Intent, ref: String?, key: String? = nil)
    /// A replica client introduces itself and says what it already has, so
    /// the hub sends only what it lacks (resume without refetching).
    case hello(Hello)
    /// A replica client's own operations.
    case operations([BoardOperation], ref: String?)

    /// A replica client's greeting: small and bounded whatever the board's
    /// history (no version vector): the hub sends every durable operation
    /// after its checkpoint, and the checkpoint when the client's is older.
    public struct Hello: Equatable, Sendable {
        public var replica: ReplicaID
        public var name: String?
        /// The stamp of the checkpoint the client holds (`.origin` for none).
        public var frontier: Stamp
        /// The highest sequence number of its own that this replica has ever
        /// sent to a hub (0: none). A hub with no record of a replica that
        /// sent something answers `unknown_replica`.
        public var sent: UInt64
        public init(replica: ReplicaID, name: String?, frontier: Stamp, sent: UInt64) {
            self.replica = replica
            self.name = name
            self.frontier = frontier
            self.sent = sent
        }
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

/// The fields any client message may carry; which are required depends on `type`.
private struct Envelope: Decodable {
    var type: String
    var letter: String?
    var to: Int?
    var ref: String?
    var key: String?
    var replica: ReplicaID?
    var name: String?
    var frontier: Stamp?
    var sent: UInt64?
    var operations: [BoardOperation]?
}

extension ClientMessage {
    /// Longest `ref` echoed back (CONTRACT).
    public static let maxRefLength = 64
    /// Longest idempotency key (KINDS: 1 to 64 characters).
    public static let maxKeyLength = 64
    /// Longest display name of a replica client.
    public static let maxNameLength = 32
    /// Most operations in one `ops` frame.
    public static let maxOperationsPerFrame = 256

    /// Parses one text frame. Every failure names the field and what was expected.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(ProtocolError) -> ClientMessage {
        if let intent = ThinIntentScanner.scan(bytes) { return intent }
        let envelope: Envelope
        do {
            envelope = try JSONDecoder().decode(Envelope.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw Self.describe(error)
        } catch {
            throw ProtocolError("bad_json", "the frame is not a JSON object")
        }
        if let ref = envelope.ref, ref.count > maxRefLength {
            throw ProtocolError("bad_ref", "\"ref\" is longer than \(maxRefLength) characters")
        }
        if let key = envelope.key, key.isEmpty || key.count > maxKeyLength {
            throw ProtocolError("bad_key", "\"key\" must be 1 to \(maxKeyLength) characters")
        }
        switch envelope.type {
        case "select", "deselect":
            let letter = try Self.letter(envelope.letter, for: envelope.type)
            return .intent(envelope.type == "select" ? .select(letter) : .deselect(letter), ref: envelope.ref, key: envelope.key)
        case "move":
            let letter = try Self.letter(envelope.letter, for: "move")
            guard let place = envelope.to else {
                throw ProtocolError("missing_field", "move needs \"to\": the 1-based place to move the letter to")
            }
            return .intent(.move(letter, to: place), ref: envelope.ref, key: envelope.key)
        case "reset":
            return .intent(.reset, ref: envelope.ref, key: envelope.key)
        case "hello":
            guard let replica = envelope.replica else {
                throw ProtocolError("missing_field", "hello needs \"replica\": the client's replica id")
            }
            if let name = envelope.name, name.count > maxNameLength || name.contains(where: \.isNewline) {
                throw ProtocolError("bad_name", "\"name\" must be one line of at most \(maxNameLength) characters")
            }
            guard (envelope.sent ?? 0) <= Replica<LetterBoard>.maxLamport else {
                throw ProtocolError("bad_field", "\"sent\" is beyond 2^62")
            }
            return .hello(Hello(replica: replica, name: envelope.name, frontier: envelope.frontier ?? .origin,
                                sent: envelope.sent ?? 0))
        case "ops":
            guard let operations = envelope.operations else {
                throw ProtocolError("missing_field", "ops needs \"operations\": an array of operations")
            }
            guard operations.count <= maxOperationsPerFrame else {
                throw ProtocolError("too_many_operations", "at most \(maxOperationsPerFrame) operations per frame")
            }
            return .operations(operations, ref: envelope.ref)
        default:
            throw ProtocolError("unknown_type", "unknown \"type\" \"\(envelope.type.prefix(32))\"; expected select, deselect, move, reset, hello or ops")
        }
    }

    private static func letter(_ text: String?, for type: String) throws(ProtocolError) -> Letter {
        guard let text else {
            throw ProtocolError("missing_field", "\(type) needs \"letter\": one of A-Z")
        }
        guard let letter = Letter(text) else {
            throw ProtocolError("bad_letter", "\"\(text.prefix(16))\" is not a letter: use one upper-case letter A-Z")
        }
        return letter
    }

    private static func describe(_ error: DecodingError) -> ProtocolError {
        func field(_ path: [any CodingKey]) -> String {
            path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case let .keyNotFound(key, context) where context.codingPath.isEmpty:
            return ProtocolError("missing_field", "the frame needs \"\(key.stringValue)\"")
        case let .keyNotFound(key, context):
            return ProtocolError("missing_field", "\"\(field(context.codingPath))\" needs \"\(key.stringValue)\"")
        case let .typeMismatch(_, context), let .valueNotFound(_, context):
            return ProtocolError("bad_field", "\"\(field(context.codingPath))\" has the wrong type")
        case let .dataCorrupted(context) where context.codingPath.isEmpty:
            return ProtocolError("bad_json", "the frame is not a JSON object")
        case let .dataCorrupted(context):
            return ProtocolError("bad_field", "\"\(field(context.codingPath))\": \(context.debugDescription)")
        @unknown default:
            return ProtocolError("bad_json", "the frame could not be read")
        }
    }
}

extension ClientMessage {
    /// Encodes a thin-client intent frame (CONTRACT), as a client sends it.
    public static func thinFrame(_ intent: LetterBoard.Intent, ref: String?, key: String? = nil) -> String {
        var out = "{\"type\":"
        switch intent {
        case let .select(letter): out += "\"select\",\"letter\":\"\(letter)\""
        case let .deselect(letter): out += "\"deselect\",\"letter\":\"\(letter)\""
        case let .move(letter, place): out += "\"move\",\"letter\":\"\(letter)\",\"to\":\(place)"
        case .reset: out += "\"reset\""
        }
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
        out += ",\"sent\":\(hello.sent)}"
        return out
    }

    /// Encodes a replica client's `ops` frame.
    public static func operationsFrame(_ operations: [BoardOperation], ref: String?) -> String {
        var out = "{\"type\":\"ops\""
        if let ref {
            out += ",\"ref\":"
            HubMessage.appendJSONString(ref, to: &out)
        }
        out += ",\"operations\":["
        for (index, operation) in operations.enumerated() {
            if index > 0 { out += "," }
            out += operation.jsonText
        }
        return out + "]}"
    }
}
