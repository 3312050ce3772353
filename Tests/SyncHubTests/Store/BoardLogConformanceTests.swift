import BoardCRDT
import Foundation
import Logging
import Testing
@testable import SyncHub

/// The stores a hub can have, each a `BoardLog`.
enum StoreUnderTest: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// The embedded store: a SQLite file.
    case embedded
    /// The shared log: a real redis-server.
    case shared

    var testDescription: String { rawValue }
}

/// One store for one test (a SQLite file in a fresh directory, or a fresh
/// redis-server) and the hubs made on it.
final class StorePlace {
    let kind: StoreUnderTest
    let keptOperations: Int
    private let directory: String
    private let redis: RedisProcess?
    private var hubs: [StoreDrivenHub] = []
    private let logger = Logger(label: "conformance")

    init(_ kind: StoreUnderTest, keptOperations: Int = 1024) throws {
        self.kind = kind
        self.keptOperations = keptOperations
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("synchub-store-\(UUID().uuidString)").path
        redis = kind == .shared ? try RedisProcess() : nil
    }

    var databasePath: String { directory + "/boards.sqlite" }

    /// A hub on this store with a fresh core; `id` names it in a cluster.
    func hub(_ id: String) throws -> StoreDrivenHub {
        // A fixed replica id per hub: nothing in a run depends on a draw.
        let replica = ReplicaID(id == "a" ? 101 : 102)
        var limits = HubLimits()
        limits.keptOperations = keptOperations
        let hub: StoreDrivenHub
        switch kind {
        case .embedded:
            let log = try EmbeddedBoardLog(directory: directory, fsyncEachCommit: false, logger: logger)
            hub = StoreDrivenHub(core: HubCore(hubReplica: replica, limits: limits, durable: true, loadTimeoutNanos: 5_000_000_000),
                                 log: log)
        case .shared:
            guard let redis else { preconditionFailure("a shared store has its redis-server") }
            var settings = SharedLogConnectionSettings(hubID: id, timeoutMilliseconds: 2_000, waitReplicas: 0)
            settings.keptBehindSnapshot = keptOperations
            settings.agreedFlags = "--kept-operations \(keptOperations)"
            let log = SharedLog(servers: [try RedisServerAddress.parse(redis.url)], settings: settings, logger: logger)
            try log.connectAtStart(deadline: Date().addingTimeInterval(5))
            let sequencing = Sequencing.shared(SharedLogSettings(hubID: id, timeoutNanos: 2_000_000_000, foldEvery: UInt64(keptOperations)))
            hub = StoreDrivenHub(core: HubCore(hubReplica: replica, limits: limits, sequencing: sequencing,
                                               loadTimeoutNanos: 5_000_000_000),
                                 log: log)
        }
        hubs.append(hub)
        return hub
    }

    /// A hub on this store with `connection` seated on `board` (its read answered).
    func hub(_ id: String, seating connection: UInt64, on board: String = "k") throws -> StoreDrivenHub {
        let hub = try hub(id)
        hub.join(connection, board)
        #expect(hub.wait { $0.core.boardOf[connection] == board }, "seated on \(board)")
        return hub
    }

    /// Makes the store unreadable: the redis-server stops; the SQLite
    /// file's pages after the first are overwritten.
    func breakStore() throws {
        if let redis { return redis.stop() }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: databasePath))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: 4096)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: Int(max(size, 8192) - 4096)))
        try handle.close()
    }

    func stop() {
        for hub in hubs { hub.stop() }
        redis?.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// One suite, run against each store: the same tests, the same answers
/// (docs/ARCHITECTURE.md, "One store protocol"). Real SQLite files and real
/// redis-server processes; the hub's core drives them as the shell does.
@Suite(.serialized) struct BoardLogConformanceTests {
    static func acked(_ hub: StoreDrivenHub, _ ref: String, to connection: UInt64 = 1) -> Bool {
        hub.answer(ref, to: connection) != nil
    }

    @Test(arguments: StoreUnderTest.allCases)
    func aBoardNeverWrittenLoadsEmpty(_ store: StoreUnderTest) throws {
        let place = try StorePlace(store)
        defer { place.stop() }
        let hub = try place.hub("a", seating: 1)
        #expect(hub.state("k")?["order"] as? [String] == [])
        #expect(hub.state("k")?["version"] as? Int == 0)
    }

    @Test(arguments: StoreUnderTest.allCases)
    func whatWasAcknowledgedIsLoadedBackByAFreshHub(_ store: StoreUnderTest) throws {
        let place = try StorePlace(store)
        defer { place.stop() }
        let first = try place.hub("a", seating: 1)
        for (index, letter) in ["Q", "U", "I"].enumerated() {
            first.send(1, #"{"type":"select","letter":"\#(letter)","ref":"r\#(index)"}"#)
        }
        #expect(first.wait { Self.acked($0, "r2") })
        #expect(first.answer("r2", to: 1)?["version"] as? Int == 3)
        first.stop()
        let fresh = try place.hub("b", seating: 7)
        #expect(fresh.state("k")?["order"] as? [String] == ["Q", "U", "I"])
        #expect(fresh.state("k")?["version"] as? Int == 3)
    }

    @Test(arguments: StoreUnderTest.allCases)
    func aFoldKeepsTheStateAndShortensWhatALoadReads(_ store: StoreUnderTest) throws {
        let place = try StorePlace(store, keptOperations: 16)
        defer { place.stop() }
        let first = try place.hub("a", seating: 1)
        for round in 0..<24 {
            first.send(1, #"{"type":"select","letter":"A","ref":"s\#(round)"}"#)
            first.send(1, #"{"type":"deselect","letter":"A","ref":"d\#(round)"}"#)
            #expect(first.wait { Self.acked($0, "d\(round)") })
        }
        first.send(1, #"{"type":"select","letter":"Z","ref":"last"}"#)
        #expect(first.wait { Self.acked($0, "last") })
        // What a load reads now starts from a checkpoint or snapshot, not from the first change.
        let folded = first.wait(seconds: 15) { hub in
            guard let stored = hub.rawLoad("k") else { return false }
            switch store {
            case .embedded: return stored.checkpoint != nil && stored.operations.count < 49
            case .shared: return stored.shared?.snapshot != nil && (stored.shared?.entries.count ?? 49) < 49
            }
        }
        #expect(folded, "the store keeps a fold instead of every change")
        let firstCounters = first.core.counters
        first.stop()
        let fresh = try place.hub("b", seating: 2)
        #expect(fresh.state("k")?["order"] as? [String] == ["Z"])
        #expect(fresh.state("k")?["version"] as? Int == 49, """
            first: lost \(firstCounters.sharedHistoryLost) back \(firstCounters.sharedWrittenBack) gaps \
            \(firstCounters.sharedGaps); fresh: \(fresh.core.counters.sharedGaps) \(fresh.core.boards["k"]?.shared.applied ?? 0)
            """)
    }

    @Test(arguments: StoreUnderTest.allCases)
    func aKeyedIntentResentToAFreshHubGetsItsFirstAnswer(_ store: StoreUnderTest) throws {
        let place = try StorePlace(store)
        defer { place.stop() }
        let first = try place.hub("a", seating: 1)
        first.send(1, #"{"type":"select","letter":"K","ref":"first","key":"key-1"}"#)
        #expect(first.wait { Self.acked($0, "first") })
        first.stop()
        let fresh = try place.hub("b", seating: 2)
        fresh.send(2, #"{"type":"select","letter":"K","ref":"again","key":"key-1"}"#)
        #expect(fresh.wait { Self.acked($0, "again", to: 2) })
        let again = fresh.answer("again", to: 2)
        #expect(again?["type"] as? String == "ack")
        #expect(again?["version"] as? Int == 1, "the first answer, not a second change")
        fresh.send(2, #"{"type":"select","letter":"L","ref":"next"}"#)
        #expect(fresh.wait { Self.acked($0, "next", to: 2) })
        #expect(fresh.state("k")?["order"] as? [String] == ["K", "L"])
        #expect(fresh.state("k")?["version"] as? Int == 2)
    }

    @Test(arguments: StoreUnderTest.allCases)
    func imagesAreKeptByDigest(_ store: StoreUnderTest) throws {
        let place = try StorePlace(store)
        defer { place.stop() }
        let hub = try place.hub("a")
        let board = BoardAddress(key: "shop/s")
        let bytes: [UInt8] = Array("<svg xmlns='http://www.w3.org/2000/svg'/>".utf8)
        hub.log.carry(.putImage(board: board, digest: "d1", type: "image/svg+xml", bytes: bytes, exchange: 1))
        #expect(hub.wait { $0.images.count == 1 })
        guard case .imageStored(1, nil)? = hub.images.first else {
            Issue.record("not stored: \(hub.images)")
            return
        }
        hub.log.carry(.readImage(board: board, digest: "d1", exchange: 2))
        hub.log.carry(.readImage(board: board, digest: "unknown", exchange: 3))
        #expect(hub.wait { $0.images.count == 3 })
        var found: [UInt64: StoredImage?] = [:]
        for case let .imageRead(exchange, _, .success(image)) in hub.images { found[exchange] = image }
        #expect(found[2] == .some(StoredImage(type: "image/svg+xml", bytes: bytes)))
        #expect(found[3] == .some(nil), "an unknown digest is no image, not a failure")
    }

    @Test(arguments: StoreUnderTest.allCases)
    func aLoadFromAStoreThatCannotBeReadClosesItsClientWith1011(_ store: StoreUnderTest) throws {
        let place = try StorePlace(store)
        defer { place.stop() }
        let first = try place.hub("a", seating: 1)
        first.send(1, #"{"type":"select","letter":"A","ref":"a"}"#)
        #expect(first.wait { Self.acked($0, "a") })
        first.stop()
        let fresh = try place.hub("b")
        try place.breakStore()
        fresh.join(2, "k")
        #expect(fresh.wait { !$0.closes(of: 2).isEmpty })
        #expect(fresh.closes(of: 2) == [1011])
        #expect(fresh.core.counters.boardsUnreadable == 1)
        #expect(!fresh.core.holds(board: BoardAddress(key: "k")))
    }

    /// Only a shared log has other writers: a hub following a board gets
    /// what another hub appended, in order (the embedded store has one
    /// writer, the hub itself, and is never asked to follow).
    @Test func aSharedLogHandsAFollowerWhatAnotherHubAppended() throws {
        let place = try StorePlace(.shared)
        defer { place.stop() }
        let a = try place.hub("a"), b = try place.hub("b")
        a.join(1, "k")
        b.join(2, "k")
        #expect(a.wait { $0.core.boardOf[1] == "k" } && b.wait { $0.core.boardOf[2] == "k" })
        a.send(1, #"{"type":"select","letter":"F","ref":"f"}"#)
        b.send(2, #"{"type":"select","letter":"G","ref":"g"}"#)
        #expect(a.wait { Self.acked($0, "f") } && b.wait { Self.acked($0, "g", to: 2) })
        #expect(a.wait { $0.state("k")?["version"] as? Int == 2 } && b.wait { $0.state("k")?["version"] as? Int == 2 })
        #expect(a.state("k")?["order"] as? [String] == b.state("k")?["order"] as? [String])
    }
}
