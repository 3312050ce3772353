import Foundation
import Testing
@testable import SyncHub

/// The cluster's Lua scripts (R15, R17) run on a real `redis-server`, each
/// answer checked as the shard reads it: the fence after a restart, a
/// history that went back, folds and write-backs that must not land on
/// another history, reads that wait out a fence.
@Suite(.serialized) final class SharedLogScriptTests {
    private let redis: RedisProcess
    private let connection: RedisConnection
    private let hashes: ScriptHashes
    private let keys = SharedLogScripts.BoardKeys(logName: "todo/scripts")
    private let lease = HubLease.key(hubID: "h1")

    init() throws {
        redis = try RedisProcess()
        connection = RedisConnection(server: try RedisServerAddress.parse(redis.url), timeoutMilliseconds: 2_000)
        try connection.connect(name: "script-tests")
        hashes = try ScriptHashes.load(on: connection)
        // As if a hub had seen this server before: no fence to start with.
        _ = try connection.command(["SET", SharedLogShard.runKey, connection.runID])
        _ = try connection.command(["SET", lease, "token-1"])
    }

    deinit {
        connection.close()
        redis.stop()
    }

    /// One `append` call: entries (body, link) after `seen`, as the shard sends it.
    private func append(_ entries: [(String, UInt64)], seen: SharedSeen = SharedSeen(), run: String? = nil,
                        token: String = "token-1") throws -> [RedisReply] {
        var command = ["EVALSHA", hashes.append, "8", keys.meta, keys.log, keys.keys, keys.keyOrder, keys.owners,
                       SharedLogShard.runKey, SharedLogShard.fenceKey, lease,
                       "epoch-1", run ?? connection.runID, "1000/4000", String(seen.offset), String(seen.link), seen.epoch, token]
        for (body, link) in entries { command += [body, "", "", "", String(link)] }
        let reply = try connection.command(command)
        if let error = reply.errorText { throw RedisFailure(reason: .reply, message: error) }
        return reply.elements
    }

    private func texts(_ replies: [RedisReply]) -> [String] { replies.map { $0.text ?? "" } }

    @Test func entriesAreLinkedAndAnAppendOnAHistoryThatLostWhatItAppliedAppendsNothing() throws {
        #expect(texts(try append([("a", 11), ("b", 22)])) == ["epoch-1", "ok", "1", "ok", "2"])
        let stream = try connection.command(["XRANGE", keys.log, "-", "+"]).elements
        #expect(stream.map { $0.elements[0].text } == ["1-11", "2-22"])
        #expect(texts(stream[1].elements[1].elements) == ["e", "b", "p", "11"])
        let good = SharedSeen(offset: 2, link: 22, epoch: "epoch-1")
        #expect(texts(try append([("c", 33)], seen: good)) == ["epoch-1", "ok", "3"])
        // Another link at the offset the hub applied, another epoch, an offset past the top: lost, with the head.
        for seen in [SharedSeen(offset: 2, link: 99, epoch: "epoch-1"), SharedSeen(offset: 2, link: 22, epoch: "epoch-0"),
                     SharedSeen(offset: 5, link: 55, epoch: "epoch-1")] {
            #expect(texts(try append([("x", 44)], seen: seen)) == ["lost", "3", "33", "epoch-1"], "\(seen)")
        }
        #expect(try connection.command(["XLEN", keys.log]).integer == 3, "nothing appended on a lost history")
    }

    @Test func aNewRunIDFencesAppendsAndReadsUntilTheFenceRunsOut() throws {
        let fenced = texts(try append([("a", 11)], run: "another-run"))
        #expect(fenced.first == "fence" && (Int(fenced[1]) ?? 0) > 0 && (Int(fenced[1]) ?? 0) <= 1_000, "\(fenced)")
        #expect(try load(run: "another-run").first?.text == "fence", "a read waits too")
        let lives = try connection.command(["PTTL", SharedLogShard.fenceKey]).integer ?? 0
        #expect(lives > 1_000 && lives <= 4_000, "the fence lives its ceiling at most (4,000 ms here): \(lives)")
        _ = try connection.command(["DEL", SharedLogShard.fenceKey])   // the fence ran out
        #expect(texts(try append([("a", 11)], run: "another-run")) == ["epoch-1", "ok", "1"])
    }

    /// One `load` call from offset 0, as the reader sends it.
    private func load(run: String) throws -> [RedisReply] {
        try connection.command(["EVALSHA", hashes.load, "5", keys.meta, keys.log, keys.snapshot, SharedLogShard.runKey,
                                SharedLogShard.fenceKey, "0", run, "1000/4000"]).elements
    }

    @Test func aReadThatIsTheFirstToReachARestartedServerStartsTheFence() throws {
        _ = try append([("a", 11)])
        #expect(try load(run: "restarted-run").first?.text == "fence")
        #expect(texts(try append([("b", 22)], run: "restarted-run")).first == "fence", "appends wait it out too")
    }

    /// Ends the fence's shortest part now (as if its `ms` had gone by), keeping the key alive.
    private func endShortestPart() throws {
        _ = try connection.command(["SET", SharedLogShard.fenceKey, "0", "KEEPTTL"])
    }

    private func arrive(_ hub: String, knows known: [String], run: String) throws -> Int64 {
        try connection.command(["EVAL", SharedLogScripts.arrive, "2", SharedLogShard.runKey, SharedLogShard.fenceKey,
                                run, "1000/4000", hub] + known).integer ?? -1
    }

    private func checked(_ hub: String) throws {
        _ = try connection.command(["EVAL", SharedLogScripts.checked, "1", SharedLogShard.fenceKey, hub])
    }

    @Test func pastItsShortestPartTheFenceWaitsForEveryHubAnArrivingHubKnewLiveUntilEachChecked() throws {
        // The script reads the clock twice (TIME): a millisecond may go by between.
        let started = try arrive("h1", knows: ["h2"], run: "run-2")
        #expect((900...1_000).contains(started), "the first to arrive starts the fence: \(started) ms left")
        #expect(try arrive("h3", knows: [], run: "run-2") > 0, "a later arrival adds itself")
        try endShortestPart()
        for hub in ["h1", "h2"] {
            #expect(texts(try append([("a", 11)], run: "run-2")).first == "fence", "h2 and h3 are still expected")
            try checked(hub)
        }
        #expect(try load(run: "run-2").first?.text == "fence", "h3 has not checked")
        try checked("h3")
        #expect(texts(try append([("a", 11)], run: "run-2")) == ["epoch-1", "ok", "1"], "every expected hub checked")
        #expect(try arrive("h1", knows: ["h2"], run: "run-2") == 0)
        #expect(try arrive("h7", knows: [], run: "run-2") == 0, "a fence that is over is not opened again")
        #expect(try connection.command(["SISMEMBER", SharedLogShard.fenceKey + ":expect", "h7"]).integer == 0)
    }

    @Test func aHubThatNeverChecksHoldsTheFenceOnlyUntilItsKeyExpires() throws {
        _ = try arrive("h1", knows: ["dead-hub"], run: "run-2")
        try endShortestPart()
        try checked("h1")
        #expect(texts(try append([("a", 11)], run: "run-2")).first == "fence", "dead-hub is expected")
        let fenceLives = try connection.command(["PTTL", SharedLogShard.fenceKey]).integer ?? 0
        for set in [":expect", ":done"] {
            let lives = try connection.command(["PTTL", SharedLogShard.fenceKey + set]).integer ?? 0
            #expect(lives > 0 && lives <= fenceLives + 5, "the fence's sets expire with it: \(set) \(lives) ms, the fence \(fenceLives)")
        }
        _ = try connection.command(["PEXPIRE", SharedLogShard.fenceKey, "1"])   // its ceiling ran out
        #expect(try waitUntil { try self.connection.command(["EXISTS", SharedLogShard.fenceKey]).integer == 0 })
        #expect(texts(try append([("a", 11)], run: "run-2")) == ["epoch-1", "ok", "1"])
        try checked("late")
        #expect(try connection.command(["SISMEMBER", SharedLogShard.fenceKey + ":done", "late"]).integer == 0,
                "a check after the fence writes nothing")
        #expect(try arrive("h9", knows: ["h1"], run: "run-2") == 0, "an arrival after the fence does not open it again")
        #expect(try connection.command(["SISMEMBER", SharedLogShard.fenceKey + ":expect", "h9"]).integer == 0)
    }

    private func waitUntil(_ condition: () throws -> Bool) throws -> Bool {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return false
    }

    @Test func anotherHolderOfTheHubsIdAppendsNothing() throws {
        #expect(texts(try append([("a", 11)], token: "token-2")) == ["notmine", "token-1"])
        #expect(try connection.command(["EXISTS", keys.log]).integer == 0)
    }

    @Test func aFoldLandsOnlyOnTheLogsOwnHistory() throws {
        _ = try append([("a", 11), ("b", 22)])
        func fold(_ offset: UInt64, link: UInt64) throws -> String? {
            let reply = try connection.command(["EVALSHA", hashes.fold, "6", keys.meta, keys.log, keys.snapshot, keys.keys, keys.keyOrder,
                                                keys.lease, String(offset), "{}", "h1", "30000", "100", "10", "epoch-1", String(link)])
            return reply.elements.first?.text
        }
        #expect(try fold(10, link: 100) == "behind", "past the log's end (a fold queued before Redis went back)")
        #expect(try fold(2, link: 99) == "behind", "another entry at the offset")
        #expect(try fold(2, link: 22) == "ok")
        #expect(texts(try connection.command(["HMGET", keys.meta, "snap", "snaplink"]).elements) == ["2", "22"])
    }

    @Test func aWriteBackIsACompareAndSetOnTheHeadAndHoldsTheBoardAfter() throws {
        _ = try append([("a", 11)])
        func restore(expectedTop: UInt64, expectedLast: UInt64, epoch: String = "epoch-1") throws -> [String] {
            texts(try connection.command(["EVALSHA", hashes.restore, "6", keys.meta, keys.log, keys.snapshot, keys.keys, keys.keyOrder,
                                          lease,
                                          "3", "33", "{\"offset\":3}", epoch, String(expectedTop), String(expectedLast), "epoch-new",
                                          "1000", "token-1", "k:x", "answer-x", "2"]).elements)
        }
        #expect(try restore(expectedTop: 1, expectedLast: 99) == ["moved", "1", "11", "epoch-1"], "the log is not what the hub saw")
        #expect(try restore(expectedTop: 1, expectedLast: 11) == ["ok"])
        #expect(texts(try connection.command(["HMGET", keys.meta, "top", "last", "snap", "snaplink", "epoch"]).elements)
                == ["3", "33", "3", "33", "epoch-1"])
        #expect(try connection.command(["EXISTS", keys.log]).integer == 0, "the stream is a part of the snapshot")
        #expect(texts(try connection.command(["HMGET", keys.keys, "k:x", "opening"]).elements) == ["answer-x", "@1"])
        #expect(try restore(expectedTop: 1, expectedLast: 11) == ["moved", "3", "33", "epoch-1"], "two write-backs cannot both win")
        let held = texts(try append([("d", 44)], seen: SharedSeen(offset: 3, link: 33, epoch: "epoch-1")))
        #expect(held.first == "fence", "held for the hubs that hold more: \(held)")
    }

    @Test func aWriteBackIntoALogThatCameBackEmptyNeverStoresAnEmptyEpoch() throws {
        let reply = try connection.command(["EVALSHA", hashes.restore, "6", keys.meta, keys.log, keys.snapshot, keys.keys, keys.keyOrder,
                                            lease,
                                            "3", "33", "{}", "", "0", "0", "epoch-new", "1000", "token-1"])
        #expect(texts(reply.elements) == ["ok"])
        #expect(try connection.command(["HGET", keys.meta, "epoch"]).text == "epoch-new")
    }

    @Test func keysAddedToAWrittenBackLogNeverReplaceAFirstAnswer() throws {
        _ = try connection.command(["HSET", keys.keys, "k:a", "ack 1"])
        _ = try connection.command(["EVAL", SharedLogScripts.keepKeys, "2", keys.keys, keys.keyOrder,
                                    "k:a", "ack 9", "9", "k:b", "ack 2", "2"])
        #expect(texts(try connection.command(["HMGET", keys.keys, "k:a", "k:b"]).elements) == ["ack 1", "ack 2"])
        #expect(try connection.command(["ZSCORE", keys.keyOrder, "k:b"]).text == "2")
    }
}
