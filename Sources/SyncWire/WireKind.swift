import BoardCRDT
import Foundation

/// A board kind's wire adapter: how its intents, changes and state look in
/// JSON frames (docs/PROTOCOL.md, docs/rules/). The hub, the store, the
/// replica link and `bench` handle every kind through this protocol; a kind
/// adds one conformance in `Sources/SyncWire/Kinds/NAME` and one line in the
/// hub's kind table.
public protocol WireKind: BoardKind {
    /// The first segment of the kind's board paths: `boards` for letters
    /// (`/boards/NAME`), `set` for the Set table (`/set/NAME`).
    static var pathSegment: String { get }
    /// The intent `type`s the kind takes, for error messages.
    static var intentTypes: [String] { get }
    /// Decodes an intent of `type` from the whole frame, or nil when `type`
    /// is not one of this kind's intents. Errors name the field and what
    /// was expected.
    static func intent(type: String, frame: Data) throws(ProtocolError) -> Intent?
    /// The intent as JSON members, `type` first: `"type":"choose","card":"2SFR"`.
    static func intentMembers(_ intent: Intent) -> String
    /// The kind's own members of a `state` frame, after the common ones
    /// (`"order":["F","A"]` as a shape): whole states are written from it
    /// and patches computed on it (`StatePatch`). Lists of elements with
    /// ids are `.identified`, so a change of one is a patch about it.
    static func stateShape(_ state: State) -> [ShapeMember]
    /// The change as JSON, the same shape its `Codable` form decodes
    /// (written by hand: the store writes one per operation).
    static func changeJSON(_ change: Change) -> String
    /// A fast path for the kind's most frequent frames, or nil to use the
    /// full decoder (which must accept exactly the same frames).
    static func scanIntent(_ bytes: UnsafeRawBufferPointer) -> ClientMessage<Self>?
    /// What the hub performs on a board nobody has played yet (the Set table
    /// deals a first game), or nil.
    static var opening: Intent? { get }
    /// The acknowledgement's extra members for an operation this intent
    /// made (kinds may name what was created), or "".
    static func ackMembers(for operation: BoardCRDT.Operation<Change>?) -> String
    /// How a person's own change is named when the total order refuses it
    /// after it was shown ("your pick of C was refused: ...").
    static func summary(of change: Change) -> String
    /// Whether people announce which item they edit (`editing`, presence
    /// only: never stored, never a change of `version`).
    static var tracksEditing: Bool { get }
    /// Why `editing` of item `id` is refused in `state`, or nil.
    static func editingProblem(_ id: String, in state: State) -> (code: String, message: String)?
    /// What a later notice about this change would name, as `ITEM/FIELD`
    /// (a todo edit of a title: `a1/title`): a notice carries the ref of
    /// the intent that made the change (K9).
    static func noticeSubjects(of change: Change) -> [String]
    /// A fast path for reading a change written by `changeJSON` (a
    /// cluster's hubs read every other hub's), or nil to use the `Codable`
    /// decoder (which must read exactly the same).
    static func scanChange(_ fields: JSONFields) -> Change?
    /// Frame `type`s that ask the board something and change nothing (the
    /// shop's `my_orders`): answered to their sender alone by `answer`.
    static var queryTypes: [String] { get }
    /// The ack's members answering `query` for `author` from `state`.
    static func answer(query: String, by author: String, in state: State) -> String
    /// Whether only an admin may perform `intent` (AUTH A13; the shop's
    /// catalog edits). Ordinary changes need `write`.
    static func needsAdmin(_ intent: Intent) -> Bool
    /// The same for a replica client's change.
    static func needsAdmin(change: Change) -> Bool
    /// What a change that needs an admin says to a token that is not one.
    static var adminOnlyMessage: String { get }
    /// A refusal's members beyond `code` and `message` (the shop's `lines`,
    /// `current`, `field`), or "".
    static func refusalMembers(_ refusal: Refusal) -> String
    /// Plain HTTP reads below a board's path (the shop's
    /// `/shop/NAME/sections/ID`, P5): the status and a JSON body, or nil
    /// when the kind has no such path.
    static func read(path: [Substring], in state: State, version: UInt64) -> (status: UInt32, json: String)?
    /// An image the board's state names (the shop's, P4): its content type
    /// and the SHA-256 its bytes are stored under ("" for the hub's own
    /// drawings), or nil.
    static func image(named name: String, in state: State) -> (type: String, digest: String)?
    /// Whether replica clients (`hello`, `ops`) may follow a board of this
    /// kind. A replica receives every operation and checkpoint, so a kind
    /// that shows something only to its owner (the shop's orders) says no.
    static var takesReplicaClients: Bool { get }
    /// The board's state read back from a `state` frame, for a thin client
    /// that shows it (the terminal's view of a shop), or nil when the kind
    /// cannot be followed that way.
    static func state(fromFrame frame: Data) -> State?
}

extension WireKind {
    public static func scanIntent(_ bytes: UnsafeRawBufferPointer) -> ClientMessage<Self>? { nil }
    public static var opening: Intent? { nil }
    public static func ackMembers(for operation: BoardCRDT.Operation<Change>?) -> String { "" }
    public static func summary(of change: Change) -> String { "your change" }
    public static var tracksEditing: Bool { false }
    public static func editingProblem(_ id: String, in state: State) -> (code: String, message: String)? { nil }
    public static func noticeSubjects(of change: Change) -> [String] { [] }
    public static func scanChange(_ fields: JSONFields) -> Change? { nil }
    public static var queryTypes: [String] { [] }
    public static func answer(query: String, by author: String, in state: State) -> String { "" }
    public static func needsAdmin(_ intent: Intent) -> Bool { false }
    public static func needsAdmin(change: Change) -> Bool { false }
    public static var adminOnlyMessage: String { "only an admin token may make this change" }
    public static func refusalMembers(_ refusal: Refusal) -> String { "" }
    public static func read(path: [Substring], in state: State, version: UInt64) -> (status: UInt32, json: String)? { nil }
    public static func image(named name: String, in state: State) -> (type: String, digest: String)? { nil }
    public static var takesReplicaClients: Bool { true }
    public static func state(fromFrame frame: Data) -> State? { nil }

    /// The kind's own members of a `state` frame as JSON text:
    /// `"order":["F","A"]`.
    public static func stateMembers(_ state: State) -> String { ShapeMember.text(stateShape(state)) }

    /// `{"id":[r,s],"lamport":l,"by":"ana","change":{...}}`, written by hand.
    public static func operationJSON(_ operation: BoardCRDT.Operation<Change>) -> String {
        var out = "{\"id\":[\(operation.id.replica.rawValue),\(operation.id.seq)],\"lamport\":\(operation.lamport)"
        if !operation.author.isEmpty {
            out += ",\"by\":"
            HubMessage.appendJSONString(operation.author, to: &out)
        }
        return out + ",\"change\":" + changeJSON(operation.change) + "}"
    }
}

/// Decoding helpers shared by the kinds' adapters.
public enum WireDecoding {
    /// Decodes `T` from a frame, turning the decoder's error into one that
    /// names the field.
    public static func decode<T: Decodable>(_ type: T.Type, from frame: Data) throws(ProtocolError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: frame)
        } catch let error as DecodingError {
            let described = describe(error)
            if described.code == "bad_json", isJSONObject(frame) {
                // JSONDecoder reports a number that is no integer of the
                // field's range (1.5, 2^63, 1e400) without naming the field
                // (and calls the JSON invalid): say what is wrong in our words.
                throw ProtocolError("bad_field",
                                    "a number is not a whole number in range: counts, prices, quantities and the like are integers")
            }
            throw described
        } catch let error as ProtocolError {
            throw error
        } catch {
            throw ProtocolError("bad_json", "the frame is not a JSON object")
        }
    }

    /// Whether `frame` is a JSON object at all.
    static func isJSONObject(_ frame: Data) -> Bool {
        (try? JSONSerialization.jsonObject(with: frame, options: [.fragmentsAllowed])) is [String: Any]
    }

    /// The `ref` of a frame that could not be read, when it has a usable
    /// one: the error then answers that intent (clients wait on refs).
    public static func ref(inUnreadable frame: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: frame) as? [String: Any],
              let ref = object["ref"] as? String, ref.count <= ClientLimits.maxRefLength else { return nil }
        return ref
    }

    static func describe(_ error: DecodingError) -> ProtocolError {
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
            if let error = context.underlyingError as? ProtocolError { return error }
            return ProtocolError("bad_field", "\"\(field(context.codingPath))\": \(context.debugDescription)")
        @unknown default:
            return ProtocolError("bad_json", "the frame could not be read")
        }
    }
}
