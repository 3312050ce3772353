import BoardCRDT
import Foundation
import SyncWire

/// Any frame the hub sends, decoded once; which fields are set depends on `type`.
struct IncomingFrame: Decodable {
    var type: String
    var board: String?
    var version: UInt64?
    var order: [Letter]?
    var clients: Int?
    var names: [String]?
    var ref: String?
    var code: String?
    var message: String?
    var checkpoint: Checkpoint<LetterBoard>?
    var operations: [BoardOperation]?

    static func decode(_ bytes: UnsafeRawBufferPointer) -> IncomingFrame? {
        try? JSONDecoder().decode(IncomingFrame.self, from: Data(bytes))
    }
}
