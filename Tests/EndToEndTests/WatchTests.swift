import Foundation
import Testing

/// `syncclient watch` run for real: inside tmux (a real terminal, 80 x 36)
/// against the real hub. Keys and SGR mouse reports go in with send-keys, the
/// screen is read back with capture-pane (issue 4, "How it is shown").
/// Every wait is generous and nothing is timed: CI is a noisy 2-core machine.
@Suite(.serialized) struct WatchTests {
    /// Selects `letters` one by one with the one-shot client.
    private func select(_ url: String, _ letters: String) throws {
        for letter in letters {
            let result = try syncclient(["select", url, String(letter)])
            #expect(result.status == 0, "select \(letter): \(result.errors)")
        }
    }

    private func hubOrder(_ url: String) -> String? { HubBoard(url)?.order }

    /// Waits until the hub's order is `order`.
    private func expectHub(_ url: String, order: String, sourceLocation: SourceLocation = #_sourceLocation) {
        var last: String?
        let ok = eventually(timeout: 20) {
            last = hubOrder(url)
            return last == order
        }
        #expect(ok, "hub order \(last ?? "nil"), expected \(order)", sourceLocation: sourceLocation)
    }

    // MARK: Letters (B4, B6, B9) and the tile numbers (V1)

    @Test func letterKeysAndClicksToggleTilesB4B6() throws {
        let hub = try HubProcess()
        let url = hub.board("keys")
        let watch = try watchInTmux(url)
        watch.waitFor("live") { $0.isLive }

        // B4: each pick joins the end; its number shows in its tile's top-right
        // and the letter in the top grid. Either case toggles.
        watch.type("F")
        watch.type("d")
        watch.type("A")
        watch.waitFor("F D A selected") { $0.topOrder == "FDA" }
        let screen = watch.screen
        #expect(screen.tileNumber(of: "F") == 1)
        #expect(screen.tileNumber(of: "D") == 2)
        #expect(screen.tileNumber(of: "A") == 3)
        #expect(screen.tileNumber(of: "B") == nil)
        expectHub(url, order: "FDA")

        // B6: the same key again deselects; higher numbers move down.
        watch.type("D")
        watch.waitFor("D deselected") { $0.topOrder == "FA" && $0.tileNumber(of: "A") == 2 }
        #expect(watch.screen.tileNumber(of: "D") == nil)
        expectHub(url, order: "FA")

        // Shift-Q toggles Q (lower-case q quits, K3).
        watch.type("Q")
        watch.waitFor("Q selected") { $0.topOrder == "FAQ" }
        expectHub(url, order: "FAQ")

        // A click on a tile toggles it.
        guard let b = watch.screen.tile(of: "B") else {
            Issue.record("tile B not found:\n\(watch.capture())")
            return
        }
        watch.click(x: b.x + 1, y: b.y + 1)
        watch.waitFor("B selected by a click") { $0.topOrder == "FAQB" && $0.tileNumber(of: "B") == 4 }
        expectHub(url, order: "FAQB")
        watch.click(x: b.x + 1, y: b.y + 1)
        watch.waitFor("B deselected by a click") { $0.topOrder == "FAQ" && $0.tileNumber(of: "B") == nil }
        expectHub(url, order: "FAQ")

        // q quits with status 0 and gives the terminal back (alternate screen left).
        watch.type("q")
        let quit = eventually(timeout: 20) { watch.exitStatus != nil }
        #expect(quit, "watch did not quit on q: \(watch.paneState)\n\(watch.capture())")
        #expect(watch.exitStatus == 0)
        #expect(watch.screen.actionRow == nil, "the board stayed on screen after q:\n\(watch.capture())")
    }

    // MARK: Drag and drop in the top grid (B7)

    @Test func dragInTopGridReordersB7() throws {
        let hub = try HubProcess()
        let url = hub.board("drag")
        try select(url, "FDA")
        let watch = try watchInTmux(url)
        watch.waitFor("F D A on screen") { $0.isLive && $0.topOrder == "FDA" }

        // B7's own example: F D A -> drag A onto D's place -> F A D.
        let screen = watch.screen
        guard let a = screen.topCell(of: "A"), let d = screen.topCell(of: "D") else {
            Issue.record("top-grid letters not found:\n\(screen.text)")
            return
        }
        watch.dragAndDrop(from: (a.x + 1, a.y + 1), to: (d.x + 1, d.y + 1))
        watch.waitFor("F A D after the drag") { $0.topOrder == "FAD" }
        #expect(watch.screen.tileNumber(of: "A") == 2)
        #expect(watch.screen.tileNumber(of: "D") == 3)
        #expect(watch.screen.tileNumber(of: "F") == 1)
        expectHub(url, order: "FAD")

        // Dropped on an empty cell, a letter goes to the last place.
        guard let f = watch.screen.topCell(of: "F"), let empty = watch.screen.topCell(place: 5) else {
            Issue.record("cells not found:\n\(watch.capture())")
            return
        }
        watch.dragAndDrop(from: (f.x + 1, f.y + 1), to: (empty.x + 1, empty.y + 1))
        watch.waitFor("A D F after dropping F on an empty cell") { $0.topOrder == "ADF" }
        expectHub(url, order: "ADF")

        // A press and release on the same cell (no drag) changes nothing.
        // The key B typed after it is the marker: watch handles its input in
        // order and the hub takes its operations in order, so once B is in,
        // whatever the click sent is in too; B is the very next version.
        let before = try #require(HubBoard(url))
        #expect(before.order == "ADF")
        guard let top = watch.screen.topCell(of: "D") else {
            Issue.record("D not found:\n\(watch.capture())")
            return
        }
        watch.click(x: top.x + 1, y: top.y + 1)
        watch.type("B")
        watch.waitFor("B after the click") { $0.topOrder == "ADFB" }
        expectHub(url, order: "ADFB")
        #expect(HubBoard(url)?.version == before.version + 1, "the click changed nothing at the hub")
    }

    // MARK: Hide and Show (V3, V4)

    private func isHidden(_ screen: TerminalScreen) -> Bool {
        // V3: the action bar at the very top; no top grid, no status bar.
        screen.actionRow == 0 && screen.statusRow == nil && screen.topOrder.isEmpty
            && screen.tile(of: "A") != nil
    }

    /// All shown: the action bar back on its own row (so no animation is
    /// still under way), the status bar live above it, the top grid showing `order`.
    private func isShown(_ screen: TerminalScreen, order: String, barRow: Int) -> Bool {
        screen.actionRow == barRow && screen.isLive && screen.topOrder == order
            && screen.topCell(place: 1) != nil
    }

    @Test func hideAndShowByKeysButtonsAndDragV3V4() throws {
        let hub = try HubProcess()
        let url = hub.board("hide")
        try select(url, "CAB")
        let start = try #require(HubBoard(url))
        let watch = try watchInTmux(url)
        watch.waitFor("shown with C A B") { $0.isLive && $0.topOrder == "CAB" }
        let barRow = try #require(watch.screen.actionRow)
        #expect(barRow > 1, "the top grid and status bar sit above the action bar")

        // Keys: - hides, + shows.
        watch.type("-")
        watch.waitFor("hidden by -") { isHidden($0) }
        #expect(watch.screen.tileNumber(of: "C") == 1, "the letter grid still shows the numbers")
        watch.type("+")
        watch.waitFor("shown by +") { isShown($0, order: "CAB", barRow: barRow) }

        // The Hide and Show buttons.
        let bar = barRow
        guard let hide = watch.screen.column(of: "Hide", inRow: bar) else {
            Issue.record("no action bar:\n\(watch.capture())")
            return
        }
        watch.click(x: hide + 2, y: bar + 1)
        watch.waitFor("hidden by the Hide button") { isHidden($0) }
        guard let show = watch.screen.column(of: "Show", inRow: 0) else {
            Issue.record("no Show button:\n\(watch.capture())")
            return
        }
        watch.click(x: show + 2, y: 1)
        watch.waitFor("shown by the Show button") { isShown($0, order: "CAB", barRow: barRow) }

        // V4: dragging the action bar up hides, down shows (ends like Hide / Show).
        let shownBar = barRow
        let x = (watch.screen.column(of: "Show", inRow: shownBar) ?? 40) + 2
        watch.dragAndDrop(from: (x, shownBar + 1), to: (x, 1), steps: 7)
        watch.waitFor("hidden by dragging the bar up") { isHidden($0) }
        #expect(hubOrder(url) == "CAB", "hiding is this viewer's own view state")
        watch.dragAndDrop(from: (x, 1), to: (x, shownBar + 1), steps: 7)
        watch.waitFor("shown by dragging the bar down") { isShown($0, order: "CAB", barRow: barRow) }

        // V4: while held, the whole screen follows the pointer row for row...
        // (SGR rows are 1-based: row r is y = r + 1.)
        watch.press(x: x, y: shownBar + 1)
        watch.drag(x: x, y: shownBar)
        watch.drag(x: x, y: shownBar - 2)
        watch.waitFor("the bar three rows up, following the pointer") { $0.actionRow == shownBar - 3 }
        // ...and let go short of half way, it returns to all shown.
        watch.release(x: x, y: shownBar - 2)
        watch.waitFor("shown again after a short drag") { isShown($0, order: "CAB", barRow: barRow) }

        // V4: Reset empties the board (B8) and returns the presser's view to all shown.
        watch.type("-")
        watch.waitFor("hidden again") { isHidden($0) }
        guard let reset = watch.screen.column(of: "Reset", inRow: 0) else { return }
        watch.click(x: reset + 2, y: 1)
        watch.waitFor("shown and empty after Reset") { isShown($0, order: "", barRow: barRow) }
        expectHub(url, order: "")
        // The reset is the board's only change since C A B: hiding, showing
        // and dragging the bar are this viewer's own view state (V3, V4).
        #expect(HubBoard(url)?.version == start.version + 1, "only the reset reached the hub")
    }

    // MARK: Two watchers (C1, C2)

    @Test func twoWatchersShowTheSameOrderAfterConcurrentPlayC1C2() throws {
        let hub = try HubProcess()
        let url = hub.board("pair")
        // P and R are markers: each watcher deselects one once it has typed
        // all its keys, and no other key touches them.
        try select(url, "PR")
        let left = try watchInTmux(url, extra: ["--name", "left"])
        let right = try watchInTmux(url, extra: ["--name", "right"])
        left.waitFor("left live") { $0.isLive && $0.topOrder == "PR" }
        right.waitFor("right live") { $0.isLive && $0.topOrder == "PR" }

        // Keys go to both at once, from two threads.
        let rounds: [(String, String)] = [
            ("A", "B"), ("C", "D"), ("E", "F"), ("G", "H"),   // 8 picks for the 4 free places (C4)
            ("1", "<"), ("a", "f"), ("Z", "Y"), (">", "3"), ("c", "d"),
            ("p", "r"),                                       // the markers, last
        ]
        let watchers = [left, right]
        for (one, other) in rounds {
            let keys = [one, other]
            DispatchQueue.concurrentPerform(iterations: 2) { index in watchers[index].type(keys[index]) }
        }

        // C1/C2: both screens and the hub agree, whatever the interleaving
        // was. A watcher handles its keys in order and the hub relays its
        // operations in order, so once left no longer shows R, left has all
        // of right's operations (and right has all of left's once P is gone
        // from it); once the hub shows neither, it has them all. Nothing can
        // change after that, so this is not a look before the keys landed.
        var agreed: (String, String, HubBoard?) = ("", "", nil)
        func final() -> (String, String, HubBoard?) { (left.screen.topOrder, right.screen.topOrder, HubBoard(url)) }
        let ok = eventually(timeout: 45) {
            agreed = final()
            guard let hub = agreed.2 else { return false }
            return agreed.0 == agreed.1 && agreed.1 == hub.order && !hub.order.contains(where: "PR".contains)
        }
        #expect(ok, "left \(agreed.0), right \(agreed.1), hub \(String(describing: agreed.2))\n\(left.capture())\n\(right.capture())")
        let again = final()
        #expect(again.0 == agreed.0 && again.1 == agreed.1 && again.2 == agreed.2, "still agreed: \(again)")
        #expect(left.screen.isLive && right.screen.isLive)
        #expect(agreed.0.count <= 6, "B5: never more than 6")
        #expect(Set(agreed.0).count == agreed.0.count, "B2: distinct letters")

        // And one more change from outside shows on both.
        _ = try syncclient(["reset", url])
        left.waitFor("left empty after reset") { $0.topOrder.isEmpty && $0.isLive }
        right.waitFor("right empty after reset") { $0.topOrder.isEmpty && $0.isLive }
        _ = try syncclient(["select", url, "K"])
        left.waitFor("left shows K") { $0.topOrder == "K" }
        right.waitFor("right shows K") { $0.topOrder == "K" }
    }

    // MARK: Capacity (B5)

    @Test func seventhPickShowsBoardFullB5() throws {
        let hub = try HubProcess()
        let url = hub.board("full")
        try select(url, "ABCDEF")
        let watch = try watchInTmux(url)
        watch.waitFor("six selected") { $0.isLive && $0.topOrder == "ABCDEF" }

        let full = try #require(HubBoard(url))
        watch.type("G")
        watch.waitFor("the board-full refusal in the status bar") { ($0.statusText ?? "").contains("board full") }
        #expect(watch.screen.topOrder == "ABCDEF", "B5: the order does not change")
        #expect(watch.screen.tileNumber(of: "G") == nil)

        // The refusal clears once the person acts again. The deselect typed
        // after G is the marker: once it is in at the hub, so is anything G
        // sent, and it is the very next version (G changed nothing).
        watch.type("a")
        watch.waitFor("A deselected and the refusal gone") {
            $0.topOrder == "BCDEF" && !($0.statusText ?? "board full").contains("board full")
        }
        expectHub(url, order: "BCDEF")
        #expect(HubBoard(url)?.version == full.version + 1, "B5: the refused G changed nothing")
        #expect(watch.screen.tileNumber(of: "G") == nil)
    }

    // MARK: The hub restarting

    @Test func hubRestartShowsReconnectingThenTheSameBoard() throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("synchub-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: data) }

        let first = try HubProcess(dataDirectory: data.path)
        let port = first.port
        let url = first.board("restart")
        try select(url, "FDA")
        _ = try syncclient(["move", url, "A", "2"])
        let watch = try watchInTmux(url)
        watch.waitFor("F A D live") { $0.isLive && $0.topOrder == "FAD" }

        #expect(first.stop() == 0, "SIGTERM shuts the hub down cleanly")
        watch.waitFor("reconnecting") { ($0.statusText ?? "").contains("reconnecting") }
        #expect(watch.screen.topOrder == "FAD", "the board stays on screen while away")

        // Own operations show at once, even while away, and are sent on reconnect.
        watch.type("K")
        watch.waitFor("K shown while away") { $0.topOrder == "FADK" }

        // The same port and data dir (retried: the old socket may linger a moment).
        var second: HubProcess?
        _ = eventually(timeout: 20) {
            second = try? HubProcess(dataDirectory: data.path, port: port)
            return second != nil
        }
        guard let second else {
            Issue.record("the hub did not start again on port \(port)")
            return
        }
        watch.waitFor("live again with the same board") { $0.isLive && $0.topOrder == "FADK" }
        expectHub(url, order: "FADK")
        #expect(second.port == port)
        second.stop()
    }

    // MARK: Not a terminal

    @Test func pipedWatchPrintsOneLinePerChange() throws {
        let hub = try HubProcess()
        let url = hub.board("piped")
        let lines = LineReader()
        let process = Process()
        process.executableURL = Build.syncclient
        process.arguments = ["watch", url]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = lines.pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }

        let steps: [([String], String)] = [
            ([], "(empty)"),
            (["select", url, "F"], "1:F"),
            (["select", url, "D"], "1:F 2:D"),
            (["select", url, "A"], "1:F 2:D 3:A"),
            (["move", url, "A", "2"], "1:F 2:A 3:D"),
            (["deselect", url, "F"], "1:A 2:D"),
            (["select", url, "A"], "1:A 2:D"),   // B9: no change, so no new line
            (["reset", url], "(empty)"),
            // The marker: its line comes after any line the steps above
            // could still print, so the lines are complete once it is in.
            (["select", url, "Z"], "1:Z"),
        ]
        var expected: [String] = []
        for (command, order) in steps {
            if !command.isEmpty {
                let result = try syncclient(command)
                #expect(result.status == 0, "\(command): \(result.errors)")
            }
            if expected.last != order { expected.append(order) }
            let ok = eventually(timeout: 20) { lines.lines.count >= expected.count }
            #expect(ok, "after \(command): \(lines.lines)")
        }
        let marked = eventually(timeout: 20) { lines.lines.last?.hasSuffix(": 1:Z") == true }
        #expect(marked, "the marker line never came: \(lines.lines)")
        process.terminate()

        let printed = lines.lines
        #expect(printed.map { $0.components(separatedBy: ": ").dropFirst().joined(separator: ": ") } == expected)
        // Each line is one change: the versions go 0, 1, 2... with none
        // skipped (the B9 repeat is no change, so no version and no line).
        var versions: [Int] = []
        for line in printed {
            let match = line.wholeMatch(of: /piped v(\d+): (\(empty\)|[1-6]:[A-Z]( [1-6]:[A-Z])*)/)
            #expect(match != nil, "line \(line)")
            if let match, let version = Int(match.1) { versions.append(version) }
        }
        #expect(versions == Array(0..<expected.count), "versions: \(printed)")
    }
}

/// Collects the lines a pipe delivers, as they come.
final class LineReader: @unchecked Sendable {
    // Sendable: `buffer` is guarded by `lock`.
    let pipe = Pipe()
    private let lock = NSLock()
    private var buffer = ""

    init() {
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self else { return }
            if data.isEmpty {
                handle.readabilityHandler = nil
                return
            }
            lock.lock()
            buffer += String(decoding: data, as: UTF8.self)
            lock.unlock()
        }
    }

    /// Complete lines so far.
    var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        var parts = buffer.components(separatedBy: "\n")
        parts.removeLast()
        return parts
    }

    deinit { pipe.fileHandleForReading.readabilityHandler = nil }
}
