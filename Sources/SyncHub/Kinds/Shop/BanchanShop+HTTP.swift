import BoardCRDT
import Crypto
import Foundation
import SyncWire
import WebSocketLoop

/// A plain HTTP request below a shop's path (docs/rules/shop.md P4, P5):
/// `/shop/NAME/images/FILE`, `/shop/NAME/sections/ID`, `/shop/NAME/dishes/ID`.
struct ShopRoute {
    let board: BoardAddress
    /// What follows the board's path: `["images", "x.png"]`.
    let rest: [Substring]

    init?(path: String) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1] == Substring(BanchanShop.pathSegment),
              case let .success(board) = BoardAddress.parse(path: "/" + parts[1] + "/" + parts[2]) else { return nil }
        self.board = board
        rest = Array(parts[3...])
    }
}

/// The shop's plain HTTP (`KindHTTP`): its images and the P5 reads.
extension BanchanShop: KindHTTP {
    static var maxRequestBodyBytes: Int { ShopImages.maxBytes }
    static var storedByHTTP: String? { "a shop's images, with PUT /shop/NAME/images/FILE" }

    static func admitBody(of request: RequestHead, on hub: HubServer) -> BodyAdmission {
        guard let route = ShopRoute(path: request.path) else { return .notOurs }
        guard route.rest[0] == "images", request.method == "PUT" else {
            return .refused(.text(405, "only a shop's images are stored, with PUT /shop/NAME/images/FILE"))
        }
        return hub.refuseUpload(String(route.rest[1]), to: route.board, request: request).map { .refused($0) } ?? .admitted
    }

    static func respond(to request: RequestHead, body: [UInt8], exchange: UInt64, on hub: HubServer) -> KindHTTPAnswer {
        guard let route = ShopRoute(path: request.path) else { return .notOurs }
        return .answer(hub.respond(to: route, request: request, body: body, exchange: exchange))
    }

    static func answered(_ exchange: UInt64, frame: String, on hub: HubServer) -> Bool {
        hub.answerUpload(exchange, frame: frame)
    }
}

/// The shop's images as the hub serves them (P4): at most 1 MiB each.
enum ShopImages {
    static let maxBytes = 1 << 20
    /// A name never names other bytes (P4), so a browser may keep an image for good.
    static let cacheControl = "public, max-age=31536000, immutable"
    /// An image opened as a page (an uploaded SVG with a script) runs nothing and reaches nothing.
    static let contentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; sandbox"

    /// The content type the bytes themselves show (their first bytes; an
    /// SVG is UTF-8 text whose first element is `<svg`), or nil.
    static func type(of bytes: [UInt8]) -> String? {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) { return "image/webp" }
        guard let text = String(validating: bytes.prefix(4096), as: UTF8.self) ?? String(validating: bytes, as: UTF8.self) else {
            return nil
        }
        var rest = Substring(text)
        if rest.hasPrefix("\u{FEFF}") { rest = rest.dropFirst() }
        while true {
            rest = rest.drop { $0.isWhitespace }
            if rest.hasPrefix("<?") || rest.hasPrefix("<!--") || rest.hasPrefix("<!DOCTYPE") || rest.hasPrefix("<!doctype") {
                let closing = rest.hasPrefix("<!--") ? "-->" : ">"
                guard let end = rest.range(of: closing) else { return nil }
                rest = rest[end.upperBound...]
                continue
            }
            return rest.hasPrefix("<svg") ? "image/svg+xml" : nil
        }
    }

    static func digest(of bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }
}

extension HubServer {
    func respond(to route: ShopRoute, request: RequestHead, body: [UInt8], exchange: UInt64) -> HTTPResponse? {
        switch (request.method, route.rest[0]) {
        case ("GET", "images"): return image(named: String(route.rest[1]), in: route.board, request: request, exchange: exchange)
        case ("PUT", "images"): return store(body, as: String(route.rest[1]), in: route.board, request: request, exchange: exchange)
        case ("GET", "sections"), ("GET", "dishes"): return read(route, request: request, exchange: exchange)
        case (_, "images"): return json(405, #"{"error":"method","message":"images are read with GET and stored with PUT"}"#)
        default:
            return .text(404, "a shop answers GET /shop/NAME/images/FILE, /shop/NAME/sections/ID and /shop/NAME/dishes/ID")
        }
    }

    /// P4: an image by name, with its ETag; 304 to a matching `If-None-Match`.
    /// Images need no token: an `<img>` cannot send one. Answered through
    /// `exchange` once the shop and the bytes are read (nil here).
    private func image(named name: String, in board: BoardAddress, request: RequestHead, exchange: UInt64) -> HTTPResponse? {
        if let picture = ShopDrawings.pictures[name] {
            return imageResponse(type: "image/svg+xml", bytes: picture.bytes, etag: picture.etag, request: request)
        }
        withBoard(board, exchange: exchange) { [self] ready in
            guard ready else {
                return server.answer(
                    exchange, with: json(503, #"{"error":"unavailable","message":"the shop could not be read from the store; try again"}"#))
            }
            guard let named = core.image(named: name, on: board), !named.digest.isEmpty else {
                return server.answer(exchange,
                                     with: json(404, #"{"error":"unknown_image","message":"this shop has no image by that name"}"#))
            }
            imageBytes(board, digest: named.digest, exchange: exchange) { [self] result in
                guard case let .success(stored?) = result else {
                    return server.answer(
                        exchange,
                        with: json(503,
                                   #"{"error":"unavailable","message":"the image's bytes could not be read from the store; try again"}"#))
                }
                server.answer(exchange, with: imageResponse(type: stored.type, bytes: stored.bytes,
                                                            etag: "\"sha256-\(named.digest.prefix(32))\"", request: request))
            }
        }
        return nil
    }

    private func imageResponse(type: String, bytes: [UInt8], etag: String, request: RequestHead) -> HTTPResponse {
        if let match = request.ifNoneMatch,
           match.split(separator: ",").contains(where: {
               let tag = $0.trimmingCharacters(in: .whitespaces)
               return tag == etag || tag == "*"
           }) {
            return HTTPResponse(status: 304, contentType: type, body: [], cacheable: true, cacheControl: ShopImages.cacheControl,
                                etag: etag,
                                contentSecurityPolicy: ShopImages.contentSecurityPolicy)
        }
        return HTTPResponse(status: 200, contentType: type, body: bytes, cacheable: true,
                            cacheControl: ShopImages.cacheControl, etag: etag, contentSecurityPolicy: ShopImages.contentSecurityPolicy)
    }

    /// P4: stores an image (admin only, A13): its bytes first, by SHA-256,
    /// then its name as a change of the board, answered once that is durable
    /// (201; the same bytes again 200; another's bytes under the name 409).
    /// What an upload is refused from its head alone (before its body is
    /// read): a bad name, no admin, a hub at its limit of boards; nil to
    /// read it (a name held for other bytes or a full shop are refused by
    /// the board, once the bytes are stored).
    func refuseUpload(_ name: String, to board: BoardAddress, request: RequestHead) -> HTTPResponse? {
        guard BanchanShop.isImageName(name) else {
            return json(
                400,
                #"{"error":"bad_name","message":"an image name is 1 to 64 of a-z, 0-9, ., _ and -, ending in .png, .jpg, .webp or .svg"}"#)
        }
        if let refusal = adminRefusal(for: board, request: request) { return refusal }
        if !core.holds(board: board), let refusal = core.admits(board: board) {
            return json(refusal.status, "{\"error\":\"unavailable\",\"message\":" + Self.quoted(refusal.message) + "}")
        }
        return nil
    }

    private func store(_ body: [UInt8], as name: String, in board: BoardAddress, request: RequestHead, exchange: UInt64) -> HTTPResponse? {
        if let refusal = refuseUpload(name, to: board, request: request) { return refusal }
        // The shell reads bodies up to the largest any kind takes: the shop's own limit here.
        guard body.count <= ShopImages.maxBytes else {
            return json(413, #"{"error":"too_large","message":"an image is at most 1 MiB"}"#)
        }
        guard let declared = BanchanShop.imageType(of: name) else { return json(400, #"{"error":"bad_name","message":"no image type"}"#) }
        guard !body.isEmpty, ShopImages.type(of: body) == declared else {
            return json(
                415,
                "{\"error\":\"wrong_type\",\"message\":" + Self.quoted("the bytes are not \(declared), as the name's ending says") + "}")
        }
        let digest = ShopImages.digest(of: body)
        let etag = "\"sha256-\(digest.prefix(32))\""
        withBoard(board, exchange: exchange) { [self] ready in
            guard ready else {
                return server.answer(
                    exchange, with: json(503, #"{"error":"unavailable","message":"the shop could not be read from the store; try again"}"#))
            }
            // A name the shop already holds is answered without storing anything again.
            if let named = core.image(named: name, on: board) {
                guard named.digest == digest else {
                    return server.answer(exchange, with: json(409, "{\"error\":\"image_exists\",\"message\":"
                        + Self.quoted("an image \"\(name)\" exists with other bytes; choose another name") + "}"))
                }
                return server.answer(exchange, with: json(200, "{\"name\":" + Self.quoted(name) + ",\"etag\":" + Self.quoted(etag) + "}"))
            }
            putImageBytes(board, digest: digest, type: declared, bytes: body, exchange: exchange) { [self] failure in
                if let failure {
                    logger.error("cannot store an image", metadata: ["board": "\(board)", "error": "\(failure)"])
                    return server.answer(exchange,
                                         with: json(503, #"{"error":"unavailable","message":"the image could not be stored; try again"}"#))
                }
                let intent = BanchanShop.Intent.addImage(name: name, ShopImage(type: declared, digest: digest, bytes: body.count))
                let frame = ParsedFrame(key: nil, ref: nil, isOperations: false, isHello: false,
                                        message: ClientMessage<BanchanShop>.intent(intent, ref: nil, key: nil), error: nil,
                                        isChange: true, needsAdmin: true)
                uploads[exchange] = (name, etag)
                handle(.httpIntent(exchange: exchange, board: board, frame))
            }
        }
        return nil
    }

    /// The answer to an upload, once the board took or refused its name.
    func answerUpload(_ exchange: UInt64, frame: String) -> Bool {
        guard let upload = uploads.removeValue(forKey: exchange) else { return false }
        let answer = (try? JSONSerialization.jsonObject(with: Data(frame.utf8))) as? [String: Any] ?? [:]
        let code = answer["code"] as? String ?? ""
        let response: HTTPResponse
        switch answer["type"] as? String {
        case "ack":
            let created = answer["created"] as? Bool == true
            response = json(created ? 201 : 200, "{\"name\":" + Self.quoted(upload.name) + ",\"etag\":" + Self.quoted(upload.etag) + "}")
        case "rejected":
            let status: UInt32 = switch code {
            case "image_exists": 409
            case "shop_full": 507
            // Not known whether the name was recorded (R8): the same PUT again tells.
            case "unavailable": 503
            case "forbidden": 403
            default: 400
            }
            response = json(status, frameBody(answer, code: code))
        default:
            response = json(code == "unavailable" ? 503 : 500, frameBody(answer, code: code.isEmpty ? "internal" : code))
        }
        server.answer(exchange, with: response)
        return true
    }

    private func frameBody(_ answer: [String: Any], code: String) -> String {
        "{\"error\":" + Self.quoted(code) + ",\"message\":" + Self.quoted(answer["message"] as? String ?? code) + "}"
    }

    /// A13: nil when the request may change the catalog (an open hub, or an admin token), else its refusal.
    private func adminRefusal(for board: BoardAddress, request: RequestHead) -> HTTPResponse? {
        guard core.verifier != nil else { return nil }
        guard let token = request.bearerToken else {
            var response = json(401, #"{"error":"unauthenticated","message":"send Authorization: Bearer <an admin token for this shop>"}"#)
            response.challenge = "Bearer realm=\"synchub\""
            return response
        }
        do {
            let grant = try verifiedGrant(token)
            guard grant.role(for: board) == .admin else {
                return json(403, #"{"error":"forbidden","message":"only the shop's staff (an admin token) may store images"}"#)
            }
            return nil
        } catch {
            var response = json(401, "{\"error\":\"unauthenticated\",\"message\":" + Self.quoted(error.reason) + "}")
            response.challenge = "Bearer realm=\"synchub\", error=\"invalid_token\""
            return response
        }
    }

    /// P5: a section or a dish as JSON, from what is durable; a read token when tokens are on.
    private func read(_ route: ShopRoute, request: RequestHead, exchange: UInt64) -> HTTPResponse? {
        if core.verifier != nil {
            guard let token = request.bearerToken else {
                return json(401, #"{"error":"unauthenticated","message":"send Authorization: Bearer <a token with a role on this shop>"}"#)
            }
            do {
                let grant = try verifiedGrant(token)
                guard grant.role(for: route.board) != nil else {
                    return json(403, #"{"error":"forbidden","message":"your token gives no role on this shop"}"#)
                }
            } catch {
                return json(401, "{\"error\":\"unauthenticated\",\"message\":" + Self.quoted(error.reason) + "}")
            }
        }
        withBoard(route.board, exchange: exchange) { [self] ready in
            guard ready else {
                return server.answer(
                    exchange, with: json(503, #"{"error":"unavailable","message":"the shop could not be read from the store; try again"}"#))
            }
            guard let answer = core.read(route.rest, on: route.board) else {
                return server.answer(exchange, with: json(404, #"{"error":"not_found","message":"no such path in a shop"}"#))
            }
            server.answer(exchange, with: json(answer.status, answer.json))
        }
        return nil
    }
}
