import Foundation
import Testing
@testable import SyncHub

struct PackedSnapshotTests {
    /// A window of letter-board operations, as a snapshot carries it.
    static let window: String = {
        let operations = (1...1_024).map { seq in
            "{\"id\":[3597295342106012550,\(seq)],\"lamport\":\(seq),\"by\":\"guest-\(seq % 3)\"," +
                "\"change\":{\"op\":\"move\",\"letter\":\"\(["A", "B", "C", "D"][seq % 4])\",\"side\":\"after\",\"place\":\(seq % 6)}}"
        }
        return "{\"offset\":1024,\"version\":1000,\"replica\":{\"log\":[" + operations.joined(separator: ",") + "]}}"
    }()

    @Test func aPackedSnapshotUnpacksToItsJSONAndIsMuchSmaller() throws {
        let packed = try PackedSnapshot.pack(Self.window)
        #expect(try PackedSnapshot.unpack(packed) == Self.window)
        #expect(packed.first != UInt8(ascii: "{"), "a packed value is told from format 2's JSON by its first byte")
        #expect(packed.count * 5 < Self.window.utf8.count, "\(packed.count) of \(Self.window.utf8.count) bytes")
    }

    @Test func aFormat2SnapshotIsItsJSONAndReadsAsIs() throws {
        #expect(try PackedSnapshot.unpack(Array("{\"offset\":7}".utf8)) == "{\"offset\":7}")
    }

    @Test func aCutOrCorruptValueIsRefusedWithAReason() throws {
        let packed = try PackedSnapshot.pack(Self.window)
        for bad in [Array(packed.prefix(packed.count / 2)), [], Array("not a snapshot".utf8), packed.map { $0 ^ 0x5a }] {
            #expect(throws: PackedSnapshot.Failure.self) { try PackedSnapshot.unpack(bad) }
        }
        do {
            _ = try PackedSnapshot.unpack(Array(packed.dropLast(4)))
            Issue.record("a value cut before its checksum unpacked")
        } catch {
            #expect(error.description.contains("neither JSON nor whole zlib streams"), "\(error)")
        }
    }

    @Test func aValueThatWouldUnpackPastTheLimitIsRefusedNotFollowed() throws {
        let zeros = try PackedSnapshot.pack(String(repeating: "0", count: 4 << 20))
        #expect(zeros.count < 64 << 10)
        #expect(throws: PackedSnapshot.Failure.self) { try PackedSnapshot.unpack(zeros, limit: 1 << 20) }
        #expect(try PackedSnapshot.unpack(zeros, limit: 4 << 20).utf8.count == 4 << 20)
    }

    /// Parts packed one by one and stored one after the other unpack to
    /// their JSON joined; a value cut inside a later part is refused.
    @Test func partsPackedOneByOneUnpackToTheirJoinedJSON() throws {
        let deflater = Deflater()
        let parts = ["{\"log\":[", String(Self.window.dropFirst().dropLast(2)), "]}"]
        var stored: [UInt8] = []
        for part in parts { stored += try deflater.pack(part) }
        #expect(try PackedSnapshot.unpack(stored) == parts.joined())
        #expect(throws: PackedSnapshot.Failure.self) { try PackedSnapshot.unpack(Array(stored.dropLast(3))) }
        #expect(throws: PackedSnapshot.Failure.self) { try PackedSnapshot.unpack(stored + [0x78]) }
    }
}
