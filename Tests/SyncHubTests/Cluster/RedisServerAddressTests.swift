import Foundation
import Testing
@testable import SyncHub

struct RedisServerAddressTests {
    @Test func parsesHostPortDatabaseAndPassword() throws {
        let address = try RedisServerAddress.parse("redis://:s3cret@10.0.0.5:6380/2")
        #expect(address == RedisServerAddress(host: "10.0.0.5", port: 6380, database: 2, password: "s3cret"))
        // The password never shows.
        #expect(address.description == "redis://10.0.0.5:6380/2")
        #expect(try RedisServerAddress.parse("redis://127.0.0.1:6379").database == 0)
    }

    @Test func refusesWhatCannotWorkWithoutShowingThePassword() {
        for bad in ["http://h:1", "redis://h", "redis://h:0", "redis://h:1/x", "redis://:pw@:1"] {
            #expect(throws: ClusterConfigError.self) { try RedisServerAddress.parse(bad) }
        }
        do {
            _ = try RedisServerAddress.parse("redis://:topsecret@h")
            Issue.record("parsed")
        } catch {
            #expect(!error.description.contains("topsecret"))
        }
    }

    @Test func passwordFileGivesThePassword() throws {
        let path = NSTemporaryDirectory() + "redis-pw-\(UInt32.random(in: 0...UInt32.max))"
        try "from-file\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try RedisServerAddress.parse("redis://h:1", passwordFile: path).password == "from-file")
    }

    /// R1: the same board lands on the same server for every hub, and
    /// boards spread over all servers.
    @Test func jumpHashIsStableAndSpreads() {
        var counts = [0, 0, 0]
        for index in 0..<3_000 {
            let bucket = SharedLog.jumpHash(key: fnv1a("letters/b\(index)"), buckets: 3)
            #expect(bucket == SharedLog.jumpHash(key: fnv1a("letters/b\(index)"), buckets: 3))
            counts[bucket] += 1
        }
        #expect(counts.allSatisfy { $0 > 800 })
        // Pinned (computed when first shipped): a change here would move the
        // boards of a running cluster to other servers.
        #expect(fnv1a("letters/kitchen") == 2_371_026_958_224_649_577)
        #expect((0..<8).map { SharedLog.jumpHash(key: fnv1a("letters/b\($0)"), buckets: 5) } == [4, 4, 0, 4, 4, 2, 3, 0])
    }

    /// R13: a primary behind Sentinels: the Sentinels, the master's name,
    /// the primary's password and database; never the password in text.
    @Test func sentinelURLsNameTheSentinelsAndTheMaster() throws {
        let address = try RedisServerAddress.parse("redis+sentinel://:s3cret@127.0.0.1:26379,[::1]:26380/boards1/2")
        #expect(address.isSentinel)
        #expect(address.sentinels.map(\.description) == ["127.0.0.1:26379", "[::1]:26380"])
        #expect(address.masterName == "boards1")
        #expect(address.database == 2)
        #expect(address.password == "s3cret")
        #expect(address.description == "redis+sentinel://127.0.0.1:26379,[::1]:26380/boards1/2")
        #expect(!address.description.contains("s3cret"))
        #expect(RedisServerAddress.redacted("redis+sentinel://:s3cret@h:1/m") == "redis+sentinel://***@h:1/m")
        #expect(try RedisServerAddress.parse("redis+sentinel://h:1/m").database == 0)
        for bad in ["redis+sentinel://h:1", "redis+sentinel://h:1/", "redis+sentinel:///m", "redis+sentinel://h/m",
                    "redis+sentinel://h:1/m/x/y"] {
            #expect(throws: ClusterConfigError.self, "\(bad)") { try RedisServerAddress.parse(bad) }
        }
    }
}
