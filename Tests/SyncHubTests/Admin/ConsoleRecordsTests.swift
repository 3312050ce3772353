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
        let orders = [ConsoleOrder(action: .disconnect(connection: 17, sub: nil, name: nil, board: nil), by: "ops", address: "10.0.0.1", via: "a"),
                      ConsoleOrder(action: .disconnect(connection: nil, sub: "dana", name: nil, board: nil), by: "ops", address: "x", via: "a"),
                      ConsoleOrder(action: .disconnect(connection: nil, sub: nil, name: "bo", board: "todo/list"), by: "ops", address: "x", via: "a"),
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
