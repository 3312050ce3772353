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

extension HubServer {
    /// Stores image bytes by digest in the board's store. The caller has
    /// checked the request may change the board (an admin, A13).
    func putImageBytes(_ board: BoardAddress, digest: String, type: String, bytes: [UInt8]) throws {
        if let sharedLog {
            do throws(RedisFailure) { try sharedLog.putImage(board.logName, digest: digest, type: type, bytes: bytes) } catch { throw error }
        } else if let imageStore {
            try imageStore.putImage(digest: digest, type: type, bytes: bytes)
        } else {
            try memoryImages.put(digest: digest, type: type, bytes: bytes)
        }
    }

    func imageBytes(_ board: BoardAddress, digest: String) -> (type: String, bytes: [UInt8])? {
        if let cached = imageCache.image(digest: digest) { return cached }
        guard let found = storedImageBytes(board, digest: digest) else { return nil }
        imageCache.keep(digest: digest, found)
        return found
    }

    private func storedImageBytes(_ board: BoardAddress, digest: String) -> (type: String, bytes: [UInt8])? {
        do {
            if let sharedLog {
                do throws(RedisFailure) { return try sharedLog.image(board.logName, digest: digest) } catch { throw error }
            }
            if let reader { return try reader.image(digest: digest) }
            return memoryImages.image(digest: digest)
        } catch {
            logger.error("cannot read an image", metadata: ["board": "\(board)", "error": "\(error)"])
            return nil
        }
    }

    /// The board as this hub holds it, else read from the store and held
    /// like a board whose last member left (followed in a cluster, let go
    /// after `--evict-after-seconds`), so the next request finds it in
    /// memory. The read is the shell's join read: on the service thread,
    /// bounded by `--redis-timeout` in a cluster. Nil when it cannot be read
    /// or the hub holds its limit of boards.
    func heldOrStored(_ board: BoardAddress) -> BoardRoom? {
        if let room = core.boards[board.key] { return room }
        guard core.admits(board: board) == nil, let stored = storedBoardIfNotHeld(board) else { return nil }
        core.now = WebSocketServer.nowNanos()
        var actions: [HubAction] = []
        if let failure = core.hold(board, stored: stored, actions: &actions) {
            logger.error("cannot hold a board for an HTTP request", metadata: ["board": "\(board)", "reason": "\(failure.reason)"])
            return nil
        }
        carryOut(actions)
        core.boards[board.key]?.emptySince = core.now
        followHeld(board)
        return core.boards[board.key]
    }

    /// What the store holds of `board` when this hub does not hold it
    /// (`.some(nil)`: held, or nothing stored yet); nil when it cannot be read.
    func storedBoardIfNotHeld(_ board: BoardAddress) -> StoredBoard?? {
        if core.boards[board.key] != nil { return .some(nil) }
        if let sharedLog {
            do throws(RedisFailure) {
                return .some(StoredBoard(shared: try sharedLog.load(board.logName, after: 0)))
            } catch {
                logger.error("cannot read a board for an HTTP request from redis", metadata: ["board": "\(board)", "error": "\(error.message)"])
                return nil
            }
        }
        guard let reader else { return .some(nil) }
        do {
            return .some(try reader.load(board: board.key))
        } catch {
            logger.error("cannot read a board for an HTTP request", metadata: ["board": "\(board)", "error": "\(error)"])
            return nil
        }
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
