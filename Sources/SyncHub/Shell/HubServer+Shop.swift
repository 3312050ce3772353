import BoardCRDT
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

/// The shop's images as the hub serves them (P4): at most 1 MiB each.
enum ShopImages {
    static let maxBytes = 1 << 20
    /// A name never names other bytes (P4), so a browser may keep an image for good.
    static let cacheControl = "public, max-age=31536000, immutable"
}

extension HubServer {
    func respond(to route: ShopRoute, request: RequestHead, body: [UInt8], exchange: UInt64) -> HTTPResponse? {
        switch (request.method, route.rest[0]) {
        case ("GET", "images"): return image(named: String(route.rest[1]), request: request)
        case ("GET", "sections"), ("GET", "dishes"): return read(route, request: request)
        case (_, "images"):
            return .text(405, "images are read with GET; storing them (PUT, P4) is not built yet in this hub")
        default:
            return .text(404, "a shop answers GET /shop/NAME/images/FILE, /shop/NAME/sections/ID and /shop/NAME/dishes/ID")
        }
    }

    /// P4: an image by name, with its ETag; 304 to a matching `If-None-Match`.
    /// Images need no token: an `<img>` cannot send one.
    private func image(named name: String, request: RequestHead) -> HTTPResponse {
        guard let picture = ShopDrawings.pictures[name] else {
            return HTTPResponse(status: 404, contentType: "application/json",
                                body: Array(#"{"error":"unknown_image","message":"this shop has no image by that name"}"#.utf8))
        }
        if let match = request.ifNoneMatch, match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == picture.etag || $0 == "*" }) {
            return HTTPResponse(status: 304, contentType: "image/svg+xml", body: [], cacheable: true, cacheControl: ShopImages.cacheControl,
                                etag: picture.etag)
        }
        return HTTPResponse(status: 200, contentType: "image/svg+xml", body: picture.bytes, cacheable: true,
                            cacheControl: ShopImages.cacheControl, etag: picture.etag)
    }

    /// P5: a section or a dish as JSON, from what is durable; a read token when tokens are on.
    private func read(_ route: ShopRoute, request: RequestHead) -> HTTPResponse {
        if let verifier = core.verifier {
            guard let token = request.bearerToken else {
                return json(401, #"{"error":"unauthenticated","message":"send Authorization: Bearer <a token with a role on this shop>"}"#)
            }
            do {
                let grant = try verifier.verify(token, now: Date())
                guard grant.role(for: route.board) != nil else {
                    return json(403, #"{"error":"forbidden","message":"your token gives no role on this shop"}"#)
                }
            } catch {
                return json(401, "{\"error\":\"unauthenticated\",\"message\":" + Self.quoted(error.reason) + "}")
            }
        }
        guard let room = heldOrStored(route.board) else {
            return json(503, #"{"error":"unavailable","message":"the shop could not be read from the store; try again"}"#)
        }
        guard let answer = room.read(route.rest) else { return json(404, #"{"error":"not_found","message":"no such path in a shop"}"#) }
        return json(answer.status, answer.json)
    }

    /// The board as this hub holds it, or read from the store (the shell's
    /// join read: on the service thread, bounded by `--redis-timeout` in a cluster).
    private func heldOrStored(_ board: BoardAddress) -> BoardRoom? {
        if let room = core.boards[board.key] { return room }
        var stored: StoredBoard?
        if let sharedLog {
            do throws(RedisFailure) {
                stored = StoredBoard(shared: try sharedLog.load(board.logName, after: 0))
            } catch {
                logger.error("cannot read a shop from redis", metadata: ["board": "\(board)", "error": "\(error.message)"])
                return nil
            }
        } else if let reader {
            do {
                stored = try reader.load(board: board.key)
            } catch {
                logger.error("cannot read a shop", metadata: ["board": "\(board)", "error": "\(error)"])
                return nil
            }
        }
        return core.detachedRoom(board, stored: stored)
    }

    private func json(_ status: UInt32, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", body: Array(text.utf8))
    }

    static func quoted(_ text: String) -> String {
        var out = ""
        HubMessage.appendJSONString(text, to: &out)
        return out
    }
}
