import WebSocketLoop

/// Plain HTTP below a kind's boards (`/SEGMENT/NAME/...`) that the kind
/// answers itself: the seam a kind's folder uses for what is not a
/// WebSocket (the shop's images and reads, `Kinds/Shop/BanchanShop+HTTP.swift`).
/// A hosted kind that conforms is asked by `HubServer` for every request;
/// one that does not never sees HTTP.
protocol KindHTTP: HostedKind {
    /// The largest request body the kind takes (0: none).
    static var maxRequestBodyBytes: Int { get }
    /// What the kind stores by HTTP, for the 405 of a write no kind takes
    /// ("a shop's images, with PUT /shop/NAME/images/FILE"); nil: nothing.
    static var storedByHTTP: String? { get }

    /// Whether the body of `request` may be read: `.notOurs` for a path
    /// that is not the kind's, `.refused` with the answer (judged from the
    /// head alone: a body is never read for a request that will be refused).
    static func admitBody(of request: RequestHead, on hub: HubServer) -> BodyAdmission

    /// The answer to `request` (with its body): `.notOurs` when the path is
    /// not the kind's, `.answer(nil)` when it is answered later through
    /// `exchange` (`answered(_:frame:on:)`). Every conforming kind is asked,
    /// and each keeps to its own paths.
    static func respond(to request: RequestHead, body: [UInt8], exchange: UInt64, on hub: HubServer) -> KindHTTPAnswer

    /// A deferred answer's frame arrived from the board (the change the
    /// request made is durable, or refused): answer `exchange` if it is one
    /// of this kind's, and say so.
    static func answered(_ exchange: UInt64, frame: String, on hub: HubServer) -> Bool
}

enum BodyAdmission {
    case notOurs
    case admitted
    case refused(HTTPResponse)
}

enum KindHTTPAnswer {
    case notOurs
    /// `nil`: answered later (through the exchange).
    case answer(HTTPResponse?)
}

extension HostedKinds {
    /// The kinds that answer plain HTTP below their boards.
    static let withHTTP: [any KindHTTP.Type] = all.compactMap { $0 as? any KindHTTP.Type }
    /// The largest request body any of them takes (each still checks its own).
    static let largestRequestBody = withHTTP.map { $0.maxRequestBodyBytes }.max() ?? 0
}
