import CLibWebsockets
import Glibc

/// One plain HTTP request on its way through the server: its body while it
/// arrives, then its answer until lws lets it be written. Held by the
/// connection's per-session slot (retained) and by `httpExchanges`.
final class HTTPExchange {
    let id: UInt64
    let wsi: OpaquePointer
    let head: RequestHead
    var body: [UInt8] = []
    /// The body grew past `maxRequestBodyBytes`: answered 413, the rest dropped.
    var tooLarge = false
    /// A refusal sent once the body is read to its end and dropped: a proxy
    /// in front (nginx) that is still sending it gets the answer, not a
    /// broken connection it would count against this hub.
    var refusalAfterBody: HTTPResponse?
    var response: HTTPResponse?
    /// The answer went out: a further WRITEABLE callback writes nothing.
    var written = false
    init(id: UInt64, wsi: OpaquePointer, head: RequestHead) {
        self.id = id
        self.wsi = wsi
        self.head = head
    }
}

/// Plain HTTP (pages, `/healthz`, `/metrics`, each kind's own reads and uploads):
/// GET answered when its head is read, PUT and POST once their body is in;
/// either at once or later through `answer(_:with:)`.
extension WebSocketServer {
    /// Request bodies received or waiting for their answer at once (each at
    /// most `maxRequestBodyBytes`); more are answered 503.
    static let maxBodiesAtOnce = 32

    /// A refused body up to this many times `maxRequestBodyBytes` is read and
    /// dropped before the refusal is sent; a larger one is answered at once
    /// and its connection closed.
    static let refusedBodyReadFactor = 16

    /// Answers a request the delegate deferred (nil from `respond`). Service
    /// thread only; an exchange whose client left is forgotten, and this does nothing.
    public func answer(_ exchange: UInt64, with response: HTTPResponse) {
        assertOnServiceThread()
        guard let pending = httpExchanges[exchange], pending.response == nil else { return }
        pending.response = response
        lws_callback_on_writable(pending.wsi)
    }

    func httpRequest(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?) -> Int32 {
        guard let user, let input else { return -1 }
        var head = requestHead(wsi, path: String(cString: input.assumingMemoryBound(to: CChar.self)))
        switch swlws_http_method(wsi) {
        case 0: head.method = "GET"
        case 1: head.method = "POST"
        case 2: head.method = "PUT"
        default: head.method = "OTHER"
        }
        head.ifNoneMatch = header(wsi, WSI_TOKEN_HTTP_IF_NONE_MATCH)
        head.contentLength = header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH).flatMap { Int($0) }
        head.contentType = header(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE)
        lastExchange += 1
        let exchange = HTTPExchange(id: lastExchange, wsi: wsi, head: head)
        if let old = user.load(as: UnsafeMutableRawPointer?.self) { release(old) }
        user.storeBytes(of: Unmanaged.passRetained(exchange).toOpaque(), as: UnsafeMutableRawPointer?.self)
        httpExchanges[exchange.id] = exchange
        let limit = delegate?.maxRequestBodyBytes ?? 0
        switch head.method {
        case "PUT", "POST":
            if let refusal = delegate?.admitBody(of: head) {
                refuse(exchange, refusal, limit: limit)
                return 0
            }
            // Bodies are held whole until answered: only so many at once, so
            // uploads cannot grow the hub's memory without bound.
            let receiving = httpExchanges.values.filter { ($0.head.method == "PUT" || $0.head.method == "POST") && !$0.written }.count
            if receiving > Self.maxBodiesAtOnce {
                refuse(exchange, .text(503, "too many uploads at once; try again in a moment"), limit: limit)
                return 0
            }
            if let length = head.contentLength, length > limit {
                refuse(exchange, .text(413, "the body is \(length) bytes; at most \(limit) are taken"), limit: limit)
                return 0
            }
            guard let length = head.contentLength else {
                // Without a length lws reads no body (chunked uploads are not taken).
                exchange.tooLarge = true
                respond(exchange, .text(411, "send the body with a Content-Length"))
                return 0
            }
            // An empty body: lws calls no body callback, so it is decided now.
            if length == 0 { decide(exchange) }
            return 0  // the body follows (LWS_CALLBACK_HTTP_BODY), then its completion
        case "GET":
            decide(exchange)
            return 0
        default:
            respond(exchange, .text(405, "method \(head.method) is not answered here: only GET, PUT and POST"))
            return 0
        }
    }

    func httpBody(_ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard let exchange = exchange(in: user), let input, length > 0, !exchange.tooLarge else { return 0 }
        let limit = delegate?.maxRequestBodyBytes ?? 0
        guard exchange.body.count + length <= limit else {
            exchange.tooLarge = true
            exchange.body = []
            respond(exchange, .text(413, "the body is over \(limit) bytes"))
            return 0
        }
        exchange.body.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
        return 0
    }

    func httpBodyComplete(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
        guard let exchange = exchange(in: user), exchange.response == nil, !exchange.written else { return 0 }
        if let refusal = exchange.refusalAfterBody {
            exchange.refusalAfterBody = nil
            respond(exchange, refusal)
            return 0
        }
        guard !exchange.tooLarge else { return 0 }
        decide(exchange)
        return 0
    }

    /// Refuses a body: once it is read and dropped when it is of a bounded
    /// length (see `refusalAfterBody`), else at once (the connection closes
    /// after the answer: the body was not read).
    private func refuse(_ exchange: HTTPExchange, _ refusal: HTTPResponse, limit: Int) {
        exchange.tooLarge = true   // nothing of the body is kept
        if let length = exchange.head.contentLength, length > 0, length <= Self.refusedBodyReadFactor * max(limit, 1) {
            exchange.refusalAfterBody = refusal
        } else {
            respond(exchange, refusal)
        }
    }

    func httpWriteable(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
        guard let exchange = exchange(in: user), let response = exchange.response, !exchange.written else { return 0 }
        exchange.written = true
        exchange.response = nil
        httpExchanges[exchange.id] = nil
        let cacheControl = response.cacheable ? response.cacheControl : "no-store"
        let written = withOptionalCString(cacheControl) { cache in
            withOptionalCString(response.etag) { etag in
                withOptionalCString(response.challenge) { challenge in
                    withOptionalCString(response.contentSecurityPolicy) { policy in
                        swlws_write_http_head(wsi, response.status, response.contentType, response.body.count, cache, etag, challenge,
                                              policy)
                    }
                }
            }
        }
        guard written == 0 else { return -1 }
        let frame = OutgoingFrame(response.body, isText: false)
        if lws_write(wsi, frame.payload, frame.count, LWS_WRITE_HTTP_FINAL) < frame.count { return -1 }
        // A refused body was not read to its end: the connection cannot carry another request.
        if exchange.tooLarge { return -1 }
        return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
    }

    func httpClosed(_ user: UnsafeMutableRawPointer?) {
        guard let user, let raw = user.load(as: UnsafeMutableRawPointer?.self) else { return }
        user.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
        release(raw)
    }

    private func decide(_ exchange: HTTPExchange) {
        let response = delegate.map { $0.respond(to: exchange.head, body: exchange.body, exchange: exchange.id) }
            ?? HTTPResponse.text(503, "stopping")
        exchange.body = []
        if let response { respond(exchange, response) }
    }

    private func respond(_ exchange: HTTPExchange, _ response: HTTPResponse) {
        exchange.response = response
        lws_callback_on_writable(exchange.wsi)
    }

    private func exchange(in user: UnsafeMutableRawPointer?) -> HTTPExchange? {
        guard let user, let raw = user.load(as: UnsafeMutableRawPointer?.self) else { return nil }
        return Unmanaged<HTTPExchange>.fromOpaque(raw).takeUnretainedValue()
    }

    private func release(_ raw: UnsafeMutableRawPointer) {
        let exchange = Unmanaged<HTTPExchange>.fromOpaque(raw).takeRetainedValue()
        httpExchanges[exchange.id] = nil
    }
}

/// Calls `body` with a C string of `text`, or NULL.
private func withOptionalCString<T>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> T) -> T {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}
