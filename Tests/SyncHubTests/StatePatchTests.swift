import Foundation
import SyncWire
@testable import BoardCRDT
import Testing

/// `StatePatch` against an independent JSON Patch (RFC 6902) applier written
/// here on Foundation's JSON values: every patch must turn the old state's
/// JSON into exactly the new one's.
@Suite struct StatePatchTests {
    // MARK: An RFC 6902 applier (the test's model; add/remove/replace/move only)

    enum PatchError: Error { case bad(String) }

    static func apply(_ ops: String, to text: String) throws -> Any {
        var document = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
        let list = try #require(try JSONSerialization.jsonObject(with: Data(ops.utf8)) as? [[String: Any]])
        for op in list {
            let path = try tokens(op["path"] as? String ?? "")
            switch op["op"] as? String {
            case "add": document = try insert(op["value"] as Any, at: path, in: document, replacing: false)
            case "replace": document = try insert(op["value"] as Any, at: path, in: document, replacing: true)
            case "remove": document = try remove(at: path, in: document).document
            case "move":
                let (value, without) = try remove(at: try tokens(op["from"] as? String ?? ""), in: document)
                document = try insert(value, at: path, in: without, replacing: false)
            default: throw PatchError.bad("op \(op)")
            }
        }
        return document
    }

    static func tokens(_ pointer: String) throws -> [String] {
        guard !pointer.isEmpty else { return [] }
        guard pointer.hasPrefix("/") else { throw PatchError.bad("pointer \(pointer)") }
        return pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map {
            $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
        }
    }

    static func insert(_ value: Any, at path: [String], in document: Any, replacing: Bool) throws -> Any {
        guard let first = path.first else { return value }
        if path.count > 1 {
            if var object = document as? [String: Any], let child = object[first] {
                object[first] = try insert(value, at: Array(path.dropFirst()), in: child, replacing: replacing)
                return object
            }
            if var array = document as? [Any], let index = Int(first), array.indices.contains(index) {
                array[index] = try insert(value, at: Array(path.dropFirst()), in: array[index], replacing: replacing)
                return array
            }
            throw PatchError.bad("no parent at \(first)")
        }
        if var object = document as? [String: Any] {
            if replacing, object[first] == nil { throw PatchError.bad("replace of missing \(first)") }
            object[first] = value
            return object
        }
        if var array = document as? [Any] {
            if replacing {
                guard let index = Int(first), array.indices.contains(index) else { throw PatchError.bad("replace at \(first)") }
                array[index] = value
            } else if first == "-" {
                array.append(value)
            } else {
                guard let index = Int(first), index >= 0, index <= array.count else { throw PatchError.bad("add at \(first)") }
                array.insert(value, at: index)
            }
            return array
        }
        throw PatchError.bad("not a container at \(first)")
    }

    static func remove(at path: [String], in document: Any) throws -> (value: Any, document: Any) {
        guard let first = path.first else { throw PatchError.bad("remove of the root") }
        if var object = document as? [String: Any] {
            guard let child = object[first] else { throw PatchError.bad("remove of missing \(first)") }
            if path.count == 1 {
                object[first] = nil
                return (child, object)
            }
            let (value, rest) = try remove(at: Array(path.dropFirst()), in: child)
            object[first] = rest
            return (value, object)
        }
        if var array = document as? [Any], let index = Int(first), array.indices.contains(index) {
            if path.count == 1 { return (array.remove(at: index), array) }
            let (value, rest) = try remove(at: Array(path.dropFirst()), in: array[index])
            array[index] = rest
            return (value, array)
        }
        throw PatchError.bad("remove at \(first)")
    }

    /// Equal as JSON values (`true` is not `1`): both written with sorted keys.
    static func same(_ a: Any, _ b: Any) -> Bool {
        let options: JSONSerialization.WritingOptions = [.sortedKeys, .fragmentsAllowed]
        guard let x = try? JSONSerialization.data(withJSONObject: a, options: options),
              let y = try? JSONSerialization.data(withJSONObject: b, options: options) else { return false }
        return x == y
    }

    /// Checks that the patch from `old` to `new` applies and rebuilds `new`; returns the patch.
    @discardableResult
    static func check(_ old: StateShape, _ new: StateShape, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let ops = StatePatch.ops(from: old, to: new)
        let rebuilt = try apply(ops, to: old.json)
        let expected = try JSONSerialization.jsonObject(with: Data(new.json.utf8), options: [.fragmentsAllowed])
        #expect(same(rebuilt, expected), "patch \(ops) from \(old.json) gives \(rebuilt), not \(new.json)", sourceLocation: sourceLocation)
        return ops
    }

    // MARK: Lists of items with ids

    static func item(_ id: String, title: String = "milk", done: Bool = false) -> IdentifiedShape {
        IdentifiedShape(id: id, .object([ShapeMember("id", .string(id)), ShapeMember("title", .string(title)),
                                         ShapeMember("memo", .string("")), ShapeMember("done", .bool(done))]))
    }

    static func list(_ items: [IdentifiedShape], version: Int = 1) -> StateShape {
        .object([ShapeMember("type", .string("state")), ShapeMember("version", .int(version)), ShapeMember("items", .identified(items))])
    }

    @Test func equalShapesGiveAnEmptyPatch() {
        let shape = Self.list((0..<5).map { Self.item("i\($0)") })
        #expect(StatePatch.ops(from: shape, to: shape) == "[]")
    }

    @Test func aTickOnAThousandItemListIsOneSmallReplace() throws {
        let items = (0..<1000).map { Self.item("item-\($0)", title: "buy thing number \($0)") }
        var ticked = items
        ticked[517] = Self.item("item-517", title: "buy thing number 517", done: true)
        let ops = try Self.check(Self.list(items), Self.list(ticked, version: 2))
        #expect(ops == #"[{"op":"replace","path":"/version","value":2},{"op":"replace","path":"/items/517/done","value":true}]"#)
        let frame = HubMessage.patch(board: "groceries", version: 2, ops: ops)
        #expect(frame.utf8.count <= 300, "a tick is \(frame.utf8.count) bytes")
    }

    @Test func aMoveOfOneItemIsOneMoveWhateverTheDistance() throws {
        let items = (0..<1000).map { Self.item("item-\($0)", title: String(repeating: "long title ", count: 90)) }
        for (from, to) in [(0, 999), (999, 0), (10, 500), (500, 10), (3, 4)] {
            var moved = items
            moved.insert(moved.remove(at: from), at: to)
            let ops = try Self.check(Self.list(items), Self.list(moved, version: 2))
            let frame = HubMessage.patch(board: "groceries", version: 2, ops: ops)
            #expect(frame.utf8.count <= 600, "a move \(from)->\(to) is \(frame.utf8.count) bytes: \(ops)")
            #expect(ops.components(separatedBy: "\"op\":\"move\"").count == 2, "one move: \(ops)")
        }
    }

    @Test func addsRemovesAndEditsTogether() throws {
        let old = Self.list(["a", "b", "c", "d"].map { Self.item($0) })
        let new = Self.list([Self.item("d"), Self.item("x"), Self.item("b", title: "bread"), Self.item("a")])
        try Self.check(old, new)
    }

    @Test func repeatedIdsStillGiveAPatchThatApplies() throws {
        // Repeated ids outside the part that changed: a patch about that part.
        try Self.check(Self.list([Self.item("a"), Self.item("a")]), Self.list([Self.item("a"), Self.item("b")]))
        // Inside it, places by id mean nothing: the list is replaced whole.
        let ops = try Self.check(Self.list(["x", "a", "a", "y"].map { Self.item($0) }),
                                 Self.list(["y", "a", "a", "x"].map { Self.item($0) }))
        #expect(ops.contains(#""path":"/items","#), "\(ops)")
    }

    @Test func manyChangesReplaceTheListWhole() throws {
        let old = Self.list((0..<200).map { Self.item("i\($0)") })
        let new = Self.list((0..<200).reversed().map { Self.item("i\($0)") })
        let ops = try Self.check(old, new)
        #expect(ops.components(separatedBy: "\"op\"").count - 1 <= 2, "reversed: one replace of the list (and version): \(ops)")
    }

    // MARK: Objects and plain arrays

    @Test func objectMembersAreAddedRemovedAndEscaped() throws {
        let old = StateShape.object([ShapeMember("players", .object([
            ShapeMember("ana", .object([ShapeMember("score", .int(1))])), ShapeMember("b/o~b", .object([ShapeMember("score", .int(0))])),
        ]))])
        let new = StateShape.object([ShapeMember("players", .object([
            ShapeMember("b/o~b", .object([ShapeMember("score", .int(3))])), ShapeMember("cy", .object([ShapeMember("score", .int(0))])),
        ]))])
        let ops = try Self.check(old, new)
        #expect(ops.contains(#""/players/b~1o~0b/score""#))
    }

    @Test func plainArraysGrowAndShrinkAtTheEnd() throws {
        let a = StateShape.array(["A", "B", "C"].map { .string($0) })
        let b = StateShape.array(["A", "C"].map { .string($0) })
        try Self.check(a, b)
        try Self.check(b, a)
        try Self.check(a, .array([]))
        try Self.check(.value("null"), a)
    }

    // MARK: At random (seeded)

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func randomEditsOfAListAlwaysRebuildTheNextState(seed: UInt64) throws {
        var random = SetDeck.SplitMix64(seed: seed)   // the Set deck's seeded generator
        var items = (0..<Int(random.next() % 30)).map { Self.item("i\($0)", title: "t\($0)") }
        var nextID = items.count
        for step in 0..<300 {
            var next = items
            for _ in 0...(random.next() % 4) {
                switch random.next() % 5 {
                case 0:
                    next.insert(Self.item("i\(nextID)"), at: Int(random.next() % UInt64(next.count + 1)))
                    nextID += 1
                case 1 where !next.isEmpty:
                    next.remove(at: Int(random.next() % UInt64(next.count)))
                case 2 where !next.isEmpty:
                    let moved = next.remove(at: Int(random.next() % UInt64(next.count)))
                    next.insert(moved, at: Int(random.next() % UInt64(next.count + 1)))
                case 3 where !next.isEmpty:
                    let index = Int(random.next() % UInt64(next.count))
                    next[index] = Self.item(next[index].id, title: "edit \(step)", done: random.next() % 2 == 0)
                default:
                    break
                }
            }
            try Self.check(Self.list(items, version: step), Self.list(next, version: step + 1))
            items = next
        }
    }
}
