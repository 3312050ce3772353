import Foundation

/// O3 in a cluster: one row per board from every hub's rows (each hub
/// lists the boards it holds): connections and bytes added up, per-hub
/// counts and names joined, the highest version and change rate (every hub
/// applies every change), frozen if any hub says so; then the console's
/// filters (kind, text).
enum AdminBoardMerge {
    static func merge(own: [String], others: [String], kind: String?, query: String?) -> [String] {
        var rows: [String: [String: Any]] = [:]
        var order: [String] = []
        let parsed = own.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
            + others.flatMap { ((try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [[String: Any]]) ?? [] }
        for row in parsed {
            guard let rowKind = row["kind"] as? String, let name = row["name"] as? String else { continue }
            let key = rowKind + "/" + name
            guard var merged = rows[key] else {
                rows[key] = row
                order.append(key)
                continue
            }
            merged["bytes_per_second"] = int(merged["bytes_per_second"]) + int(row["bytes_per_second"])
            merged["version"] = max(int(merged["version"]), int(row["version"]))
            merged["changes_per_minute"] = max(int(merged["changes_per_minute"]), int(row["changes_per_minute"]))
            merged["frozen"] = (merged["frozen"] as? Bool ?? false) || (row["frozen"] as? Bool ?? false)
            var perHub = merged["per_hub"] as? [String: Any] ?? [:]
            for (hub, count) in row["per_hub"] as? [String: Any] ?? [:] { perHub[hub] = count }
            merged["per_hub"] = perHub
            merged["names"] = Array(Set((merged["names"] as? [String] ?? []) + (row["names"] as? [String] ?? []))).sorted()
            rows[key] = merged
        }
        let needle = query?.lowercased() ?? ""
        return order.compactMap { key -> String? in
            guard var row = rows[key] else { return nil }
            // Each hub counts its own connections in `per_hub`; its
            // `connections` may hold the others' too (presence).
            row["connections"] = (row["per_hub"] as? [String: Any] ?? [:]).values.reduce(0) { $0 + int($1) }
            if let kind, row["kind"] as? String != kind { return nil }
            if !needle.isEmpty, !((row["name"] as? String ?? "").lowercased().contains(needle)),
               !(row["names"] as? [String] ?? []).contains(where: { $0.lowercased().contains(needle) }) { return nil }
            return (try? JSONSerialization.data(withJSONObject: row, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    private static func int(_ value: Any?) -> Int { (value as? Int) ?? (value as? NSNumber)?.intValue ?? 0 }
}
