import Foundation
import Testing
@testable import SyncHub

/// What the console keeps and sends through the store and Redis: audit
/// entries (O9) and the orders one hub gives another (O5, O8).
struct ConsoleRecordsTests {
    private let at = Date(timeIntervalSince1970: 1_795_900_201.123)

    @Test func anAuditEntryReadsBackAsItWasWritten() throws {
        let entry = AuditEntry(time: at, sub: "ops \"night\"", address: "::1", action: "disconnect", target: "hub-b/7",
                               result: "closed 1 (asked through hub hub-a)", hub: "hub-b")
        #expect(entry.json.contains("\"time\":\"2026-11-28T"))
        let back = try #require(AuditEntry(json: entry.json))
        #expect(back.sub == entry.sub && back.target == entry.target && back.hub == entry.hub && back.result == entry.result)
        #expect(abs(back.time.timeIntervalSince(at)) < 0.001)
    }

    @Test func aStoredEntryThatCannotBeReadIsSkippedNotGuessedAt() {
        for text in ["", "[]", "{}", #"{"time":"yesterday","sub":"a","address":"b","action":"c","target":"d","result":"e"}"#,
                     #"{"time":"2026-11-28T22:50:01.123Z","sub":"a"}"#] {
            #expect(AuditEntry(json: text) == nil, "\(text)")
        }
    }

    @Test func theTrailKeepsTimeOrderWhenAnotherHubsEntryComesLate() {
        func entry(_ seconds: Double, _ hub: String) -> AuditEntry {
            AuditEntry(time: at.addingTimeInterval(seconds), sub: "s", address: "a", action: "revoke", target: "t", result: "r", hub: hub)
        }
        var trail = AuditTrail([entry(0, "a"), entry(2, "a")])
        trail.note(entry(1, "b"))
        #expect(trail.newestFirst.map(\.hub) == ["a", "b", "a"])
        for second in 0..<(AuditTrail.kept + 5) { trail.note(entry(10 + Double(second), "a")) }
        #expect(trail.newestFirst.count == AuditTrail.kept, "the last 10,000")
    }

    @Test func ordersReadBackAndAnUnreadableOneIsSkipped() throws {
        let orders = [ConsoleOrder(action: .disconnect(connection: 17, sub: nil, name: nil, board: nil), by: "ops", address: "10.0.0.1",
                                   via: "a"),
                      ConsoleOrder(action: .disconnect(connection: nil, sub: "dana", name: nil, board: nil), by: "ops", address: "x",
                                   via: "a"),
                      ConsoleOrder(action: .disconnect(connection: nil, sub: nil, name: "bo", board: "todo/list"), by: "ops", address: "x",
                                   via: "a"),
                      ConsoleOrder(action: .drain, by: "ops", address: "x", via: "a")]
        for order in orders { #expect(ConsoleOrder(json: order.json) == order) }
        for text in ["{}", #"{"action":"explode","by":"a","address":"b","via":"c"}"#,
                     #"{"action":"disconnect","by":"a","address":"b","via":"c"}"#,
                     #"{"action":"disconnect","name":"bo","by":"a","address":"b","via":"c"}"#,
                     #"{"action":"disconnect","sub":"s","connection":3,"by":"a","address":"b","via":"c"}"#] {
            #expect(ConsoleOrder(json: text) == nil, "\(text)")
        }
    }
}

/// The console's board rows between hubs (one line each, no JSON parser) and merged.
struct AdminBoardRowTests {
    private let row = AdminBoardRow(kind: "todo", name: "week%1", connections: 3, perHub: ["a": 2, "b=c": 1],
                                    names: ["ana\tbo", "cy\u{1F}", "dee"], version: 42, frozen: true, changesPerMinute: 7,
                                    bytesPerSecond: 512)

    @Test func aRowReadsBackFromItsLineWhateverItsNamesHold() {
        #expect(AdminBoardRow(line: row.line[...]) == row)
        #expect(AdminBoardRow.rows(lines: AdminBoardRow.lines([row, row])[...]) == [row, row])
        #expect(!row.line.contains("\n"))
    }

    @Test func aLineThatIsNotARowIsSkipped() {
        for text in ["", "todo\tx", "todo\tx\tmany\t\t\t1\t0\t0\t0", "todo\tx\t1\ta=z\t\t1\t0\t0\t0"] {
            #expect(AdminBoardRow(line: text[...]) == nil, "\(text)")
        }
    }

    @Test func theJSONHasEveryFieldOfTheAPI() throws {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(row.json.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["kind", "name", "connections", "per_hub", "names", "version", "frozen", "changes_per_minute",
                                      "bytes_per_second"])
        #expect(object["per_hub"] as? [String: Int] == ["a": 2, "b=c": 1] && object["names"] as? [String] == row.names)
    }

    @Test func hubsRowsOfOneBoardAreMergedAndFiltered() {
        let a = AdminBoardRow(kind: "boards", name: "x", connections: 5, perHub: ["a": 2], names: ["ana"], version: 9, frozen: false,
                              changesPerMinute: 3, bytesPerSecond: 10)
        var b = a
        (b.perHub, b.names, b.version, b.frozen, b.bytesPerSecond) = (["b": 3], ["bo"], 10, true, 20)
        let other = AdminBoardRow(kind: "todo", name: "y", connections: 1, perHub: ["b": 1], names: ["cy"], version: 1, frozen: false,
                                  changesPerMinute: 0, bytesPerSecond: 0)
        let merged = AdminBoardMerge.merge(own: [a], others: [[b, other]], kind: nil, query: nil)
        #expect(merged.map(\.key) == ["boards/x", "todo/y"])
        #expect(merged[0].connections == 5 && merged[0].perHub == ["a": 2, "b": 3] && merged[0].names == ["ana", "bo"])
        #expect(merged[0].version == 10 && merged[0].frozen && merged[0].bytesPerSecond == 30)
        #expect(AdminBoardMerge.merge(own: [a], others: [[b, other]], kind: "todo", query: nil).map(\.key) == ["todo/y"])
        #expect(AdminBoardMerge.merge(own: [a], others: [[b, other]], kind: nil, query: "BO").map(\.key) == ["boards/x"])
    }
}
