/// The JSON Patch (RFC 6902) that turns one state shape into the next,
/// computed once per board per publish (docs/PROTOCOL.md "Patches").
///
/// - Leaves that differ are replaced; object members are removed, added or
///   compared by key; plain arrays place by place.
/// - `identified` arrays are compared by id: elements that left are
///   removed, the longest run that kept its order stays, every other
///   element moves (`move`, never a remove and an add of its content) or is
///   added, and then each element is compared with its old self at its new
///   place. Editing or ticking one item is one `replace` of that field;
///   moving one is one `move`.
/// - When an array changes in more places than `maxStructuralOps` (elements
///   moved, added or removed; for plain arrays, places that differ), the
///   patch replaces it whole: smaller than a long run of operations, and the
///   diff's cost stays linear in the list (plus O(n) per move or add, at
///   most `maxStructuralOps` of them).
public enum StatePatch {
    public static let maxStructuralOps = 64

    /// The operations as a JSON array, `[]` when the shapes are equal.
    public static func ops(from old: StateShape, to new: StateShape) -> String {
        var writer = Writer()
        diff(old, new, path: "", into: &writer)
        writer.out.raw(UInt8(ascii: "]"))
        return writer.out.text
    }

    /// Whether `ops(from:to:)` would be `[]`, without writing it.
    public static func isEmpty(_ ops: String) -> Bool { ops == "[]" }

    struct Writer {
        var out = JSONWriter()
        var count = 0

        init() { out.raw(UInt8(ascii: "[")) }

        mutating func op(_ name: StaticString, path: String, value: StateShape? = nil, from: String? = nil) {
            if count > 0 { out.raw(UInt8(ascii: ",")) }
            count += 1
            out.raw("{\"op\":\"")
            out.raw(name)
            out.raw(UInt8(ascii: "\""))
            if let from {
                out.raw(",\"from\":")
                out.string(from)
            }
            out.raw(",\"path\":")
            out.string(path)
            if let value {
                out.raw(",\"value\":")
                value.write(to: &out)
            }
            out.raw(UInt8(ascii: "}"))
        }
    }

    /// A JSON Pointer token: `~` and `/` escaped (RFC 6901).
    static func token(_ key: String) -> String {
        guard key.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return key }
        var out = ""
        for character in key.unicodeScalars {
            switch character {
            case "~": out += "~0"
            case "/": out += "~1"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    static func diff(_ old: StateShape, _ new: StateShape, path: String, into writer: inout Writer) {
        if old.isLeaf || new.isLeaf {
            if old != new { writer.op("replace", path: path, value: new) }
            return
        }
        switch (old, new) {
        case let (.object(a), .object(b)):
            diffObjects(a, b, path: path, into: &writer)
        case let (.array(a), .array(b)):
            diffArrays(a, b, path: path, into: &writer)
        case let (.identified(a), .identified(b)):
            diffIdentified(a, b, path: path, into: &writer)
        default:
            writer.op("replace", path: path, value: new)
        }
    }

    static func diffObjects(_ old: [ShapeMember], _ new: [ShapeMember], path: String, into writer: inout Writer) {
        // The common case: the same keys in the same order (a kind's fixed members).
        if old.count == new.count, zip(old, new).allSatisfy({ $0.key == $1.key }) {
            // Leaves are compared before a path is made; containers are
            // diffed directly (comparing first would walk them twice).
            for (a, b) in zip(old, new) where !(a.value.isLeaf && a.value == b.value) {
                diff(a.value, b.value, path: path + "/" + token(a.key), into: &writer)
            }
            return
        }
        var oldByKey: [String: StateShape] = [:]
        for member in old { oldByKey[member.key] = member.value }
        let newKeys = Set(new.map(\.key))
        for member in old where !newKeys.contains(member.key) {
            writer.op("remove", path: path + "/" + token(member.key))
        }
        for member in new {
            let at = path + "/" + token(member.key)
            if let before = oldByKey[member.key] {
                if !(before.isLeaf && before == member.value) { diff(before, member.value, path: at, into: &writer) }
            } else {
                writer.op("add", path: at, value: member.value)
            }
        }
    }

    static func diffArrays(_ old: [StateShape], _ new: [StateShape], path: String, into writer: inout Writer) {
        let common = min(old.count, new.count)
        var differing = abs(old.count - new.count)
        for index in 0..<common where differing <= maxStructuralOps && old[index] != new[index] { differing += 1 }
        if differing > maxStructuralOps {
            writer.op("replace", path: path, value: .array(new))
            return
        }
        for index in 0..<common where old[index] != new[index] { diff(old[index], new[index], path: "\(path)/\(index)", into: &writer) }
        if old.count > new.count {
            for index in stride(from: old.count - 1, through: new.count, by: -1) { writer.op("remove", path: "\(path)/\(index)") }
        } else {
            for index in old.count..<new.count { writer.op("add", path: "\(path)/\(index)", value: new[index]) }
        }
    }

    static func diffIdentified(_ old: [IdentifiedShape], _ new: [IdentifiedShape], path: String, into writer: inout Writer) {
        // The common case: the same ids in the same order (a tick, an edit).
        if old.count == new.count, zip(old, new).allSatisfy({ $0.id == $1.id }) {
            for index in old.indices where old[index].value != new[index].value {
                diff(old[index].value, new[index].value, path: "\(path)/\(index)", into: &writer)
            }
            return
        }
        // Only the window between the common head and tail changed place.
        let shorter = min(old.count, new.count)
        var head = 0
        while head < shorter, old[head].id == new[head].id { head += 1 }
        var tail = 0
        while tail < shorter - head, old[old.count - 1 - tail].id == new[new.count - 1 - tail].id { tail += 1 }
        let oldWindow = old[head..<old.count - tail], newWindow = new[head..<new.count - tail]
        // The old self of the element at `index` of `new` in the window.
        let before: (Int) -> StateShape?
        if let forward = Self.oneMove(oldWindow, newWindow) {
            // One element moved (a drag): one `move`, whatever the distance.
            let (start, end) = (oldWindow.startIndex, oldWindow.endIndex - 1)
            writer.op("move", path: "\(path)/\(forward ? end : start)", from: "\(path)/\(forward ? start : end)")
            before = { index in
                forward ? (index == end ? old[start].value : old[index + 1].value)
                        : (index == start ? old[end].value : old[index - 1].value)
            }
        } else {
            guard let plan = Plan(old: Array(oldWindow), new: Array(newWindow), offset: head), plan.steps.count <= maxStructuralOps else {
                writer.op("replace", path: path, value: .identified(new))
                return
            }
            for step in plan.steps {
                switch step {
                case let .remove(index): writer.op("remove", path: "\(path)/\(index)")
                case let .move(from, to): writer.op("move", path: "\(path)/\(to)", from: "\(path)/\(from)")
                case let .add(index, element): writer.op("add", path: "\(path)/\(index)", value: element.value)
                }
            }
            before = { index in plan.oldValue[new[index].id] }
        }
        // Then each element against its old self, at its new place.
        for index in 0..<head where old[index].value != new[index].value {
            diff(old[index].value, new[index].value, path: "\(path)/\(index)", into: &writer)
        }
        for index in newWindow.indices {
            if let was = before(index), was != new[index].value { diff(was, new[index].value, path: "\(path)/\(index)", into: &writer) }
        }
        for back in 0..<tail {
            let (a, b) = (old[old.count - 1 - back], new[new.count - 1 - back])
            if a.value != b.value { diff(a.value, b.value, path: "\(path)/\(new.count - 1 - back)", into: &writer) }
        }
    }

    /// Whether `new` is `old` with one element moved from one end of the
    /// window to the other (the common head and tail trimmed, a single move
    /// must be that): true when the first went to the end, false when the
    /// last went to the front, nil when it is something else.
    static func oneMove(_ old: ArraySlice<IdentifiedShape>, _ new: ArraySlice<IdentifiedShape>) -> Bool? {
        guard old.count == new.count, old.count >= 2, let first = old.first, let last = old.last,
              let newFirst = new.first, let newLast = new.last else { return nil }
        if first.id == newLast.id, zip(old.dropFirst(), new.dropLast()).allSatisfy({ $0.id == $1.id }) { return true }
        if last.id == newFirst.id, zip(old.dropLast(), new.dropFirst()).allSatisfy({ $0.id == $1.id }) { return false }
        return nil
    }

    /// How an identified array becomes the next: removals (from the end),
    /// then, in the new order, moves of the elements off the longest
    /// increasing run and additions, each placed right after the element
    /// that precedes it in the new array.
    struct Plan {
        enum Step {
            case remove(Int)
            case move(from: Int, to: Int)
            case add(Int, IdentifiedShape)
        }
        var steps: [Step] = []
        var oldValue: [String: StateShape] = [:]

        /// Nil when ids repeat (then the array is replaced whole). `offset`:
        /// where `old` and `new` start in the whole list (a window).
        init?(old: [IdentifiedShape], new: [IdentifiedShape], offset: Int = 0) {
            var newIDs = Set<String>()
            for element in new where !newIDs.insert(element.id).inserted { return nil }
            for element in old {
                guard oldValue[element.id] == nil else { return nil }
                if newIDs.contains(element.id) { oldValue[element.id] = element.value }
            }
            for index in stride(from: old.count - 1, through: 0, by: -1) where !newIDs.contains(old[index].id) {
                steps.append(.remove(offset + index))
                if steps.count > StatePatch.maxStructuralOps { return }
            }
            var current = old.map(\.id).filter { newIDs.contains($0) }
            var place: [String: Int] = [:]
            for (index, id) in current.enumerated() { place[id] = index }
            let kept = Self.longestIncreasingRun(new.compactMap { place[$0.id] }).reduce(into: Set<String>()) { $0.insert(current[$1]) }
            for (index, element) in new.enumerated() {
                if oldValue[element.id] != nil {
                    guard !kept.contains(element.id), let from = current.firstIndex(of: element.id) else { continue }
                    current.remove(at: from)
                    let to = index == 0 ? 0 : (current.firstIndex(of: new[index - 1].id) ?? -1) + 1
                    current.insert(element.id, at: to)
                    steps.append(.move(from: offset + from, to: offset + to))
                } else {
                    // Only adds and moves look up their place: O(n) each, at most `maxStructuralOps` of them.
                    let after = index == 0 ? 0 : (current.firstIndex(of: new[index - 1].id) ?? -1) + 1
                    current.insert(element.id, at: after)
                    steps.append(.add(offset + after, element))
                }
                if steps.count > StatePatch.maxStructuralOps { return }
            }
        }

        /// The values of the longest strictly increasing subsequence of `sequence`.
        static func longestIncreasingRun(_ sequence: [Int]) -> [Int] {
            var tails: [Int] = []          // index into sequence of the run's last element, per length
            var previous = [Int](repeating: -1, count: sequence.count)
            for (index, value) in sequence.enumerated() {
                var low = 0, high = tails.count
                while low < high {
                    let middle = (low + high) / 2
                    if sequence[tails[middle]] < value { low = middle + 1 } else { high = middle }
                }
                if low > 0 { previous[index] = tails[low - 1] }
                if low == tails.count { tails.append(index) } else { tails[low] = index }
            }
            var run: [Int] = []
            var index = tails.last ?? -1
            while index >= 0 {
                run.append(sequence[index])
                index = previous[index]
            }
            return run.reversed()
        }
    }
}
