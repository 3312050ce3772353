/// O3 in a cluster: one row per board from every hub's rows (each hub
/// lists the boards it holds): connections and bytes added up, per-hub
/// counts and names joined, the highest version and change rate (every hub
/// applies every change), frozen if any hub says so; then the console's
/// filters (kind, text).
enum AdminBoardMerge {
    static func merge(own: [AdminBoardRow], others: [[AdminBoardRow]], kind: String?, query: String?) -> [AdminBoardRow] {
        var rows: [String: AdminBoardRow] = [:]
        var order: [String] = []
        for row in own + others.joined() {
            let key = row.key
            guard var merged = rows[key] else {
                rows[key] = row
                order.append(key)
                continue
            }
            merged.bytesPerSecond += row.bytesPerSecond
            merged.version = max(merged.version, row.version)
            merged.changesPerMinute = max(merged.changesPerMinute, row.changesPerMinute)
            merged.frozen = merged.frozen || row.frozen
            merged.perHub.merge(row.perHub) { _, theirs in theirs }
            merged.names = Array(Set(merged.names + row.names)).sorted()
            rows[key] = merged
        }
        let needle = query?.lowercased() ?? ""
        return order.compactMap { key -> AdminBoardRow? in
            guard var row = rows[key] else { return nil }
            // Each hub counts its own connections in `per_hub`; its
            // `connections` may hold the others' too (presence).
            row.connections = row.perHub.values.reduce(0, +)
            if let kind, row.kind != kind { return nil }
            if !needle.isEmpty, !row.name.lowercased().contains(needle), !row.names.contains(where: { $0.lowercased().contains(needle) }) {
                return nil
            }
            return row
        }
    }
}
