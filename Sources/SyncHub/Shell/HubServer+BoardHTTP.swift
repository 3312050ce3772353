import BoardCRDT
import Foundation
import SyncWire
import WebSocketLoop

// What the hub offers a kind that answers HTTP below its boards (`KindHTTP`;
// the shop's images and reads): image bytes by digest in the board's store
// (SQLite, Redis under the board's tag, or memory) with a cache of those
// served lately, a board held for an HTTP request, and JSON answers.

/// The stored images served lately, by SHA-256 (bytes never change under a
/// digest), the least recently served dropped first past `maxBytes`.
struct ImageCache {
    static let maxBytes = 32 << 20
    private var entries: [String: (type: String, bytes: [UInt8], used: UInt64)] = [:]
    private var total = 0
    private var clock: UInt64 = 0

    mutating func image(digest: String) -> (type: String, bytes: [UInt8])? {
        guard let entry = entries[digest] else { return nil }
        clock += 1
        entries[digest]?.used = clock
        return (entry.type, entry.bytes)
    }

    mutating func keep(digest: String, _ image: (type: String, bytes: [UInt8])) {
        guard entries[digest] == nil, image.bytes.count <= Self.maxBytes else { return }
        while total + image.bytes.count > Self.maxBytes, let oldest = entries.min(by: { $0.value.used < $1.value.used }) {
            total -= oldest.value.bytes.count
            entries[oldest.key] = nil
        }
        clock += 1
        entries[digest] = (image.type, image.bytes, clock)
        total += image.bytes.count
    }
}

/// Images of an `--in-memory` hub (tests, benchmarks): gone with the
/// process, bounded so uploads cannot grow it without end.
struct MemoryImages {
    static let maxTotalBytes = 256 << 20
    private var images: [String: (type: String, bytes: [UInt8])] = [:]
    private var total = 0

    mutating func put(digest: String, type: String, bytes: [UInt8]) throws {
        guard images[digest] == nil else { return }
        guard total + bytes.count <= Self.maxTotalBytes else {
            throw StoreError(description: "an in-memory hub keeps at most \(Self.maxTotalBytes >> 20) MiB of images")
        }
        images[digest] = (type, bytes)
        total += bytes.count
    }

    func image(digest: String) -> (type: String, bytes: [UInt8])? { images[digest] }
}

/// What an HTTP request that waited hears back (`HubServer.httpSteps`).
enum HTTPStep {
    /// The board it needs is held now (`ready`), or could not be read.
    case board(ready: Bool, reason: String)
    case imageStored(StoreFailure?)
    case imageRead(Result<StoredImage?, StoreFailure>)
    case boardsCounted(Result<Int, StoreFailure>)
}

extension HubServer {
    /// Runs `then` once `board` is held (true) or could not be read (false):
    /// at once when it is held, else when the core has loaded it. A board
    /// read only for a request is let go like one whose last member left.
    /// The store is never waited for on the service thread (R16).
    func withBoard(_ board: BoardAddress, exchange: UInt64, then: @escaping (Bool) -> Void) {
        // R8: a board whose store is known to be down is refused at once.
        if let log, !core.holds(board: board), !log.isUp(board) { return then(false) }
        httpSteps[exchange] = { step in
            guard case let .board(ready, _) = step else { return then(false) }
            then(ready)
        }
        handle(.httpNeedsBoard(exchange: exchange, board: board))
    }

    /// Stores image bytes by digest in the board's store, then runs `then`
    /// with the failure, if any. The caller has checked the request may
    /// change the board (an admin, A13).
    func putImageBytes(_ board: BoardAddress, digest: String, type: String, bytes: [UInt8], exchange: UInt64,
                       then: @escaping (String?) -> Void) {
        guard let log else {
            do {
                try memoryImages.put(digest: digest, type: type, bytes: bytes)
                then(nil)
            } catch {
                then("\(error)")
            }
            return
        }
        httpSteps[exchange] = { step in
            guard case let .imageStored(failure) = step else { return then("unexpected answer") }
            then(failure?.message)
        }
        log.carry(.putImage(board: board, digest: digest, type: type, bytes: bytes, exchange: exchange))
    }

    /// Runs `then` with an image's bytes: from the cache, else from the
    /// board's store (`.failure` when it cannot be read).
    func imageBytes(_ board: BoardAddress, digest: String, exchange: UInt64, then: @escaping (Result<StoredImage?, StoreFailure>) -> Void) {
        if let cached = imageCache.image(digest: digest) { return then(.success(StoredImage(type: cached.type, bytes: cached.bytes))) }
        guard let log else { return then(.success(memoryImages.image(digest: digest).map { StoredImage(type: $0.type, bytes: $0.bytes) })) }
        httpSteps[exchange] = { [self] step in
            guard case let .imageRead(result) = step else { return then(.failure(StoreFailure(message: "unexpected answer"))) }
            if case let .success(found?) = result { imageCache.keep(digest: digest, (found.type, found.bytes)) }
            if case let .failure(failure) = result {
                logger.error("cannot read an image", metadata: ["board": "\(board)", "error": "\(failure.message)"])
            }
            then(result)
        }
        log.carry(.readImage(board: board, digest: digest, exchange: exchange))
    }

    func json(_ status: UInt32, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", body: Array(text.utf8))
    }

    static func quoted(_ text: String) -> String {
        var out = ""
        HubMessage.appendJSONString(text, to: &out)
        return out
    }
}
