import Foundation

/// What the console's audit keeps of one action (O9): who, when, from
/// where, what, the result, and the hub that carried it out.
struct AuditEntry: Sendable, Equatable {
    var time: Date
    var sub: String
    var address: String
    var action: String
    var target: String
    var result: String
    var hub: String

    /// The entry as the API answers it and as the store keeps it.
    var json: String {
        "{\"time\":" + HubCore.jsonString(HubCore.rfc3339(time)) + ",\"sub\":" + HubCore.jsonString(sub)
            + ",\"address\":" + HubCore.jsonString(address) + ",\"action\":" + HubCore.jsonString(action)
            + ",\"target\":" + HubCore.jsonString(target) + ",\"result\":" + HubCore.jsonString(result)
            + ",\"hub\":" + HubCore.jsonString(hub) + "}"
    }

    /// An entry as `json` wrote it; nil for anything else (a store's entry
    /// that cannot be read is skipped, never guessed at).
    init?(json text: String) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
              let stamp = object["time"] as? String, let time = Self.date(rfc3339: stamp),
              let sub = object["sub"] as? String, let address = object["address"] as? String,
              let action = object["action"] as? String, let target = object["target"] as? String,
              let result = object["result"] as? String else { return nil }
        self.init(time: time, sub: sub, address: address, action: action, target: target, result: result,
                  hub: object["hub"] as? String ?? "")
    }

    /// `2026-11-28T22:50:01.123Z` (as `HubCore.rfc3339` writes it) as a date.
    static func date(rfc3339 text: String) -> Date? {
        let digits = text.split(whereSeparator: { "-T:.Z".contains($0) }).map { Int32($0) }
        guard text.hasSuffix("Z"), digits.count == 7, digits.allSatisfy({ $0 != nil }) else { return nil }
        let d = digits.map { $0! }
        var parts = tm()
        (parts.tm_year, parts.tm_mon, parts.tm_mday) = (d[0] - 1900, d[1] - 1, d[2])
        (parts.tm_hour, parts.tm_min, parts.tm_sec) = (d[3], d[4], d[5])
        return Date(timeIntervalSince1970: Double(timegm(&parts)) + Double(d[6]) / 1000)
    }

    init(time: Date, sub: String, address: String, action: String, target: String, result: String, hub: String) {
        (self.time, self.sub, self.address, self.action, self.target, self.result, self.hub)
            = (time, sub, address, action, target, result, hub)
    }
}

/// The last 10,000 audited actions (of the whole cluster when the hubs
/// share Redis), in the order of their times.
struct AuditTrail {
    static let kept = 10_000
    private var entries: [AuditEntry] = []

    init(_ kept: [AuditEntry] = []) {
        for entry in kept { note(entry) }
    }

    /// Adds `entry` in time order (another hub's entries come a second late).
    mutating func note(_ entry: AuditEntry) {
        var at = entries.endIndex
        while at > entries.startIndex, entries[at - 1].time > entry.time { at -= 1 }
        entries.insert(entry, at: at)
        if entries.count > Self.kept + Self.kept / 10 { entries.removeFirst(entries.count - Self.kept) }
    }

    var newestFirst: [AuditEntry] { entries.suffix(Self.kept).reversed() }
}
