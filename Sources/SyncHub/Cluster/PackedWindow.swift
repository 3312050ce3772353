import BoardCRDT

/// The parts a board's snapshot was packed in last (`PackedSnapshot`): the
/// window's operations in runs, each run packed on its own, so the next
/// fold packs only the operations that came since. On the hub a window only
/// grows at its end (its log is sealed: an operation that comes late is
/// stamped after the last, `ReplicaLimits.sealsOrder`) and loses its start
/// when the engine compacts; within one history of a board an operation id
/// names one operation, so a run whose first and last operations are where
/// they were, as many apart, is the same run (and a run an operation went
/// into the middle of fails that test and is packed again).
struct PackedWindow {
    struct Run {
        var first: OperationID
        var last: OperationID
        var count: Int
        /// Its JSON starts with the comma that separates it from the run
        /// before (every run but the window's first).
        var afterAnother: Bool
        var packed: [UInt8]
        /// Its JSON's length.
        var bytes: Int
    }

    var history: UInt64
    var runs: [Run] = []

    /// The most operations one new run holds.
    static let runLength = 128

    /// The snapshot packed: its head, the window's runs (the ones this
    /// window held last time as they were, the others packed now) and its
    /// tail, each a zlib stream. `self` is left holding this snapshot's runs.
    mutating func pack(_ text: SnapshotText, with deflater: Deflater) throws(PackedSnapshot.Failure) -> [UInt8] {
        var starting: [OperationID: Run] = [:]
        for run in runs { starting[run.first] = run }
        var out = try deflater.pack(text.head)
        var size = text.head.utf8.count + text.tail.utf8.count
        var kept: [Run] = []
        let ids = text.operations
        var index = 0
        while index < ids.count {
            if let run = starting[ids[index]], run.afterAnother == (index > 0), index + run.count <= ids.count,
               ids[index + run.count - 1] == run.last {
                kept.append(run)
                size += run.bytes
                out += run.packed
                index += run.count
                continue
            }
            var end = index + 1
            while end < ids.count, end - index < Self.runLength, starting[ids[end]] == nil { end += 1 }
            var json = ""
            for position in index..<end {
                if position > 0 { json += "," }
                json += text.operation(position)
            }
            size += json.utf8.count
            let run = Run(first: ids[index], last: ids[end - 1], count: end - index, afterAnother: index > 0,
                          packed: try deflater.pack(json), bytes: json.utf8.count)
            kept.append(run)
            out += run.packed
            index = end
        }
        guard size <= PackedSnapshot.largestUnpacked else { throw PackedSnapshot.tooLarge(size) }
        out += try deflater.pack(text.tail)
        runs = kept
        return out
    }
}
