/// One outgoing WebSocket connection, confined to the client loop's thread.
public final class ClientConnection: @unchecked Sendable {
    // Sendable: only touched on the client loop's service thread.
    public let id: UInt64
    public let url: WebSocketURL
    public internal(set) var isOpen = false
    public internal(set) var isFinished = false

    var wsi: OpaquePointer?
    /// Client frames are masked in place by lws_write, so each is its own copy.
    var outgoing: [OutgoingFrame] = []
    var outgoingHead = 0
    var closeRequested = false
    var receiveBuffer: [UInt8] = []

    init(id: UInt64, url: WebSocketURL) {
        self.id = id
        self.url = url
    }

    public var queuedFrames: Int { outgoing.count - outgoingHead }

    func takeNextFrame() -> OutgoingFrame? {
        guard outgoingHead < outgoing.count else { return nil }
        let frame = outgoing[outgoingHead]
        outgoingHead += 1
        if outgoingHead == outgoing.count {
            outgoing.removeAll(keepingCapacity: true)
            outgoingHead = 0
        }
        return frame
    }
}
