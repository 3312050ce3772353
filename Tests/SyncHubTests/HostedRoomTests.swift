import BoardCRDT
import Testing
@testable import SyncHub

/// Every hosted kind runs its own room (`Kinds/NAME/NAME+Hosted.swift`), the
/// class the optimiser compiles for that kind, and never the generic
/// `KindRoom` itself (docs/ARCHITECTURE.md, "Adding a kind").
@Suite struct HostedRoomTests {
    private static func roomIsItsOwn<Kind: HostedKind>(_ kind: Kind.Type) -> Bool {
        Kind.Room.self != KindRoom<Kind>.self
    }

    @Test func everyKindHasARoomOfItsOwn() throws {
        for kind in HostedKinds.all {
            let own = Self.roomIsItsOwn(kind)
            #expect(own, "\(kind) runs the generic KindRoom")
            let room = try kind.makeRoom(address: BoardAddress(key: kind.storesUnderBareName ? "k" : "\(kind.pathSegment)/k"),
                                         hubReplica: ReplicaID(1), stored: nil, limits: HubLimits())
            #expect(String(describing: type(of: room)).hasSuffix("Room") && !String(describing: type(of: room)).hasPrefix("KindRoom"),
                    "\(type(of: room))")
        }
    }
}
