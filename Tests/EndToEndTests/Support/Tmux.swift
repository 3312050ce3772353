import Foundation
import Testing

/// One detached tmux session on its own server (`tmux -L <unique>`), running
/// one command in a pane of a fixed size. Keys and SGR mouse reports go in
/// with `send-keys -l`; the screen comes out with `capture-pane -p`. The
/// server (and so the command) is killed when this goes away.
final class TmuxSession: @unchecked Sendable {
    // Sendable: used from one test at a time.
    static let executable = URL(fileURLWithPath: "/usr/bin/env")
    let socket: String
    let width: Int
    let height: Int
    private var socketPath: String?

    /// Starts `command` (argv, run directly, no shell) in a `width` x `height` pane.
    /// The pane stays after the command exits so that its exit status can be read.
    init(_ command: [String], width: Int = 80, height: Int = 36, environment: [String: String] = [:]) throws {
        socket = "synchub-e2e-\(getpid())-\(UUID().uuidString.prefix(8))"
        self.width = width
        self.height = height
        var arguments = ["new-session", "-d", "-s", "main", "-x", "\(width)", "-y", "\(height)"]
        for (key, value) in environment.sorted(by: { $0.key < $1.key }) { arguments += ["-e", "\(key)=\(value)"] }
        arguments += command
        arguments += [";", "set-option", "-g", "remain-on-exit", "on"]
        let result = try tmux(arguments)
        guard result.status == 0 else { throw TmuxError.failed(arguments, result.errors) }
        socketPath = try? tmux(["display-message", "-p", "#{socket_path}"]).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs `tmux -L socket -f /dev/null arguments...`.
    @discardableResult
    func tmux(_ arguments: [String]) throws -> CommandResult {
        try run(Self.executable, ["tmux", "-L", socket, "-f", "/dev/null"] + arguments, timeout: 20)
    }

    /// Types `text` literally (each character as it is, escapes included).
    func type(_ text: String) {
        _ = try? tmux(["send-keys", "-t", "main", "-l", "--", text])
    }

    // MARK: SGR mouse (x, y are 1-based, as on the wire)

    func press(x: Int, y: Int) { type("\u{1B}[<0;\(x);\(y)M") }
    /// Motion with the left button held (mode 1002).
    func drag(x: Int, y: Int) { type("\u{1B}[<32;\(x);\(y)M") }
    func release(x: Int, y: Int) { type("\u{1B}[<0;\(x);\(y)m") }

    func click(x: Int, y: Int) {
        press(x: x, y: y)
        release(x: x, y: y)
    }

    /// Press at `from`, move through a few points, release at `to`.
    func dragAndDrop(from: (x: Int, y: Int), to: (x: Int, y: Int), steps: Int = 4) {
        press(x: from.x, y: from.y)
        for step in 1...steps {
            let x = from.x + (to.x - from.x) * step / steps
            let y = from.y + (to.y - from.y) * step / steps
            drag(x: x, y: y)
        }
        release(x: to.x, y: to.y)
    }

    /// The visible screen as text, one string per row.
    func capture() -> String {
        (try? tmux(["capture-pane", "-p", "-t", "main"]).output) ?? ""
    }

    var screen: TerminalScreen { TerminalScreen(capture()) }

    /// Nil while the command runs; its exit status once it has ended.
    var exitStatus: Int32? {
        guard let text = try? tmux(["display-message", "-p", "-t", "main", "#{pane_dead} #{pane_dead_status}"]).output
        else { return nil }
        let parts = text.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        guard parts.first == "1", parts.count > 1 else { return nil }
        return Int32(parts[1])
    }

    /// Polls the screen until `condition` holds; records the last screen if it never does.
    @discardableResult
    func waitFor(_ what: String, timeout: TimeInterval = 20, sourceLocation: SourceLocation = #_sourceLocation,
                 _ condition: (TerminalScreen) -> Bool) -> Bool {
        var last = TerminalScreen("")
        let ok = eventually(timeout: timeout) {
            last = screen
            return condition(last)
        }
        if !ok { Issue.record("timed out waiting for \(what); screen was:\n\(last.text)", sourceLocation: sourceLocation) }
        return ok
    }

    deinit {
        _ = try? tmux(["kill-server"])
        if let socketPath, !socketPath.isEmpty { try? FileManager.default.removeItem(atPath: socketPath) }
    }
}

enum TmuxError: Error { case failed([String], String) }

/// A captured watch screen, read back into the parts V1 names. Positions are
/// 0-based columns and rows; add 1 for SGR mouse reports.
struct TerminalScreen: Sendable {
    let text: String
    let rows: [[Character]]

    init(_ text: String) {
        self.text = text
        var lines = text.components(separatedBy: "\n")
        if lines.last == "" { lines.removeLast() }
        rows = lines.map(Array.init)
    }

    static let verticalBorders: Set<Character> = ["│", "║", "┃", "┆", "┊", "╎", "╏", "┇", "┋"]
    static let horizontalBorders: Set<Character> = ["─", "═", "━", "┄", "┈", "╌", "╍", "┅", "┉"]

    func row(_ y: Int) -> String { y >= 0 && y < rows.count ? String(rows[y]) : "" }

    /// The row of the action bar: the one with Hide, Show and Reset.
    var actionRow: Int? {
        rows.firstIndex { let line = String($0); return line.contains("Hide") && line.contains("Show") && line.contains("Reset") }
    }

    /// The row of the status bar: ` NAME · state ...`, just above the action bar.
    var statusRow: Int? {
        guard let action = actionRow, action > 0, row(action - 1).contains(" · ") else { return nil }
        return action - 1
    }

    var statusText: String? { statusRow.map { row($0).trimmingCharacters(in: .whitespaces) } }

    /// A tile or cell letter: an upper-case letter with a space either side,
    /// on a row that draws cell borders.
    private func letters(rows range: Range<Int>) -> [(letter: Character, x: Int, y: Int)] {
        var found: [(Character, Int, Int)] = []
        for y in range where y >= 0 && y < rows.count {
            let line = rows[y]
            guard line.contains(where: Self.verticalBorders.contains) else { continue }
            for x in 1..<max(line.count - 1, 1) where line[x].isUppercase && line[x].isASCII
                && line[x - 1] == " " && line[x + 1] == " " {
                found.append((line[x], x, y))
            }
        }
        return found
    }

    /// Rows of the top grid: everything above the status bar (none when hidden).
    var topGridRows: Range<Int> { 0..<(statusRow ?? 0) }

    /// Rows of the letter grid: below the action bar, above the help line.
    var letterGridRows: Range<Int> { ((actionRow ?? rows.count) + 1)..<max(rows.count - 1, 0) }

    /// The selection order as the top grid shows it (places go row by row).
    var topOrder: String {
        String(letters(rows: topGridRows).sorted { ($0.y, $0.x) < ($1.y, $1.x) }.map(\.letter))
    }

    /// Where `letter` is drawn in the top grid.
    func topCell(of letter: Character) -> (x: Int, y: Int)? {
        letters(rows: topGridRows).first { $0.letter == letter }.map { ($0.x, $0.y) }
    }

    /// The centre of the top-grid cell for `place` (1...6), found from the
    /// place labels drawn at each cell's top-left.
    func topCell(place: Int) -> (x: Int, y: Int)? {
        for y in topGridRows {
            let line = rows[y]
            for x in 1..<max(line.count - 1, 1) where Self.verticalBorders.contains(line[x - 1])
                && String(line[x]) == String(place) && line[x + 1] == " " {
                // Label at (x, y); the letter sits two rows down in the middle.
                var right = x
                while right < line.count, !Self.verticalBorders.contains(line[right]) { right += 1 }
                return ((x - 1 + right) / 2, y + 2)
            }
        }
        return nil
    }

    /// Where `letter`'s tile shows its letter in the A-Z grid, if visible.
    func tile(of letter: Character) -> (x: Int, y: Int)? {
        letters(rows: letterGridRows).first { $0.letter == letter }.map { ($0.x, $0.y) }
    }

    /// The number in `letter`'s tile's top-right corner (nil: none drawn).
    func tileNumber(of letter: Character) -> Int? {
        guard let (x, y) = tile(of: letter) else { return nil }
        // Up to the tile's top border, then one row down.
        var top = y
        while top > 0, !Self.horizontalBorders.contains(rows[top][min(x, rows[top].count - 1)]) { top -= 1 }
        let numberRow = rows[top + 1]
        var right = x
        while right < numberRow.count, !Self.verticalBorders.contains(numberRow[right]) { right += 1 }
        var digits = ""
        var cursor = right - 1
        while cursor > x, numberRow[cursor].isNumber {
            digits = String(numberRow[cursor]) + digits
            cursor -= 1
        }
        return Int(digits)
    }

    /// Where `word` starts in `row` (0-based column).
    func column(of word: String, inRow y: Int) -> Int? {
        let line = row(y)
        guard let range = line.range(of: word) else { return nil }
        return line.distance(from: line.startIndex, to: range.lowerBound)
    }

    /// True when the screen shows everything (V1) with the status bar saying "live".
    var isLive: Bool { statusText?.contains("· live") == true }
}

/// The board as the hub has it, read with `syncclient state URL --json`.
struct HubBoard: Equatable {
    var order: String
    var version: Int
    var clients: Int

    init?(_ url: String) {
        guard let result = try? syncclient(["state", url, "--json"]), result.status == 0,
              let object = jsonObject(result.output.trimmingCharacters(in: .whitespacesAndNewlines)),
              let order = object["order"] as? [String] else { return nil }
        self.order = order.joined()
        version = object["version"] as? Int ?? -1
        clients = object["clients"] as? Int ?? -1
    }
}

/// `syncclient watch URL` in a tmux pane (a real terminal), `width` x `height`.
func watchInTmux(_ url: String, width: Int = 80, height: Int = 36, extra: [String] = []) throws -> TmuxSession {
    try TmuxSession([Build.syncclient.path, "watch", url] + extra, width: width, height: height)
}
