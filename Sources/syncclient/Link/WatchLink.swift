import SyncWire
import WebSocketLoop

/// What `WatchSession` needs of the link to a board: snapshots out, intents
/// in, the socket's events forwarded. `ReplicaLink` (a replica of the board,
/// the default) and `ThinLink` (state frames and intents only, for kinds that
/// take no replica clients, `WireKind.takesReplicaClients`) are the two.
protocol WatchLink<Kind>: AnyObject {
    associatedtype Kind: WireKind
    var url: WebSocketURL { get }
    /// Called on the loop thread whenever the snapshot changes.
    var onChange: (LinkSnapshot<Kind>) -> Void { get set }
    /// Set once the hub refused the token: the link stays down.
    var denial: AccessDenial? { get }
    var onDenied: (AccessDenial) -> Void { get set }
    func start()
    func perform(_ intent: Kind.Intent)
    /// Presence (`editing`); false when it could not be sent now.
    @discardableResult func sendEditing(_ item: String?) -> Bool
    func close()
    func connected(_ connection: ClientConnection)
    func received(_ connection: ClientConnection, message: UnsafeRawBufferPointer, isText: Bool)
    func disconnected(_ connection: ClientConnection, reason: String)
    func serviceLoopDidRun()
}

extension ReplicaLink: WatchLink {}
