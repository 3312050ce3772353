import CZlib

/// A board's snapshot as the shared log stores it (log format 3): its JSON
/// in parts, each deflated (zlib) on its own, the parts' streams one after
/// the other; their inflated bytes, joined, are the JSON. The window of
/// operations a snapshot carries is most of it and repeats itself from one
/// operation to the next: a letter board's 1,700 operations are 235 KB of
/// JSON and about 22 KB packed; in parts, a fold packs only the operations
/// since the board's last fold (`PackedWindow`; docs/CLUSTER.md, "What a
/// board costs Redis"). A snapshot written as plain JSON (format 2, it
/// starts with `{`) still reads.
enum PackedSnapshot {
    /// What a snapshot may unpack to at most: a stored one that inflates
    /// further is refused, not followed (a corrupt or hostile value must not
    /// grow the hub without bound).
    static let largestUnpacked = 256 << 20

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The whole JSON as one stream.
    static func pack(_ json: String) throws(Failure) -> [UInt8] {
        guard json.utf8.count <= largestUnpacked else { throw tooLarge(json.utf8.count) }
        return try Deflater().pack(json)
    }

    /// What no hub could read back is never stored (the fold would trim the log behind it).
    static func tooLarge(_ bytes: Int) -> Failure {
        Failure(description: "the snapshot is \(bytes) bytes, more than the \(largestUnpacked) a hub reads back")
    }

    /// The snapshot's JSON, from a packed or a plain (format 2) value;
    /// refused when it would unpack to more than `limit` bytes.
    static func unpack(_ stored: [UInt8], limit: Int = largestUnpacked) throws(Failure) -> String {
        if stored.first == UInt8(ascii: "{") { return String(decoding: stored, as: UTF8.self) }
        guard !stored.isEmpty else { throw Failure(description: "the stored snapshot is empty") }
        var input = stored
        var stream = z_stream()
        guard czlib_inflate_init(&stream) == Z_OK else { throw Failure(description: "zlib cannot start inflating") }
        defer { inflateEnd(&stream) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 256 << 10)
        out.reserveCapacity(min(limit, stored.count * 12))
        var status = Z_OK
        input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            while status == Z_OK, out.count <= limit {
                status = chunk.withUnsafeMutableBufferPointer { target in
                    stream.next_out = target.baseAddress
                    stream.avail_out = uInt(target.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                out.append(contentsOf: chunk[..<produced])
                // One part ended and another follows: it is read with a fresh state.
                if status == Z_STREAM_END, stream.avail_in > 0 { status = inflateReset(&stream) }
                // No progress with input left: the value ends before its stream does.
                if status == Z_BUF_ERROR || (status == Z_OK && produced == 0 && stream.avail_in == 0) { status = Z_DATA_ERROR }
            }
        }
        guard out.count <= limit else { throw Failure(description: "the stored snapshot unpacks to more than \(limit) bytes") }
        guard status == Z_STREAM_END else {
            throw Failure(description: "the stored snapshot is neither JSON nor whole zlib streams (status \(status))")
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// One zlib deflater, used again for every part it packs (`deflateReset`):
/// its state (about 270 KB) and its output buffer are made once, not per
/// fold. Confined to the thread that made it.
final class Deflater {
    private var stream = z_stream()
    private var ready = false
    private var buffer: [UInt8] = []

    /// Level 3: nearly level 6's size at a third of its time.
    init() {
        ready = czlib_deflate_init(&stream, 3) == Z_OK
    }

    deinit {
        if ready { deflateEnd(&stream) }
    }

    func pack(_ text: String) throws(PackedSnapshot.Failure) -> [UInt8] {
        guard ready else { throw PackedSnapshot.Failure(description: "zlib cannot start deflating") }
        var input = Array(text.utf8)
        deflateReset(&stream)
        let bound = Int(deflateBound(&stream, uLong(input.count)))
        if buffer.count < bound { buffer = [UInt8](repeating: 0, count: bound) }
        let status = input.withUnsafeMutableBufferPointer { source in
            buffer.withUnsafeMutableBufferPointer { target in
                stream.next_in = source.baseAddress
                stream.avail_in = uInt(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = uInt(target.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else {
            throw PackedSnapshot.Failure(description: "zlib could not deflate the snapshot (status \(status))")
        }
        return Array(buffer[..<Int(stream.total_out)])
    }
}
