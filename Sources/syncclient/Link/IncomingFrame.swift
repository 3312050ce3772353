import BoardCRDT
import Foundation
import SyncWire

/// Any frame the hub sends, decoded once; which fields are set depends on `type`.
struct IncomingFrame<Kind: WireKind>: Decodable {
    var type: String
    var board: String?
    var version: UInt64?
    var clients: Int?
    var names: [String]?
    var ref: String?
    var code: String?
    var message: String?
    /// On `sync`, and on answers to `ops`: the highest sequence number of
    /// this replica the hub holds durably.
    var have: UInt64?
    /// On `sync` and `unknown_replica`: the replica id of the `hello` answered.
    var replica: ReplicaID?
    /// On `sync`: the name this replica's operations are made under.
    var name: String?
    var checkpoint: Checkpoint<Kind>?
    var operations: [BoardCRDT.Operation<Kind.Change>]?
    /// On `state` of kinds with presence: who edits which item (`{"ana":"a1"}`).
    var editing: [String: String]?
    /// On `notice` (TC2): the item, the field and the text that won.
    var id: String?
    var field: String?
    var text: String?

    /// The frame, or why it could not be read (never silently nothing).
    static func decode(_ bytes: UnsafeRawBufferPointer) -> Result<IncomingFrame, FrameDecodingError> {
        do {
            return .success(try JSONDecoder().decode(IncomingFrame.self, from: Data(bytes)))
        } catch {
            return .failure(FrameDecodingError(reason: "\(error)"))
        }
    }
}

/// A frame from the hub this client cannot read.
struct FrameDecodingError: Error, CustomStringConvertible {
    var reason: String
    var description: String { "a frame from the hub could not be read: \(reason.prefix(200))" }
}
