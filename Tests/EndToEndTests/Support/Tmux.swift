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

    /// Starts `command` (argv; /bin/sh only wraps it to report its exit) in a
    /// `width` x `height` pane. The pane stays after the command exits so
    /// that its exit status can be read.
    init(_ command: [String], width: Int = 80, height: Int = 36, environment: [String: String] = [:]) throws {
        socket = "synchub-e2e-\(getpid())-\(UUID().uuidString.prefix(8))"
        self.width = width
        self.height = height
        var arguments = ["new-session", "-d", "-s", "main", "-x", "\(width)", "-y", "\(height)"]
        for (key, value) in environment.sorted(by: { $0.key < $1.key }) { arguments += ["-e", "\(key)=\(value)"] }
        // Through sh, which prints the exit status into the pane when the
        // command ends (tmux's own #{pane_dead_status} is not always filled in).
        arguments += ["/bin/sh", "-c", "\"$0\" \"$@\"; echo \"[exited $?]\""] + command
        arguments += [";", "set-option", "-g", "remain-on-exit", "on"]
        // Not `Process`: the server this tmux forks would inherit the pipe
        // or socket Foundation watches for the client's exit (and read ends
        // of other tests' pipes), so the client would never seem to end.
        // posix_spawn with every descriptor above 2 closed, and waitpid.
        let status = try Self.spawnAndWait(["tmux", "-L", socket, "-f", "/dev/null"] + arguments)
        guard status == 0 else { throw TmuxError.failed(arguments, "exit status \(status)") }
        let info = (try? tmux(["display-message", "-p", "-t", "main", "#{socket_path} #{pid} #{pane_pid}"]).output) ?? ""
        let parts = info.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ")
        socketPath = parts.first.map(String.init)
        processes = parts.dropFirst().compactMap { pid_t($0) }
        // The command itself, a child of the pane's sh.
        if let shell = processes.last {
            let deadline = Date().addingTimeInterval(5)
            var children: [pid_t] = []
            while children.isEmpty, Date() < deadline {
                children = ((try? String(contentsOfFile: "/proc/\(shell)/task/\(shell)/children", encoding: .utf8)) ?? "")
                    .split(separator: " ").compactMap { pid_t($0) }
                if children.isEmpty { usleep(20_000) }
            }
            processes += children
        }
    }

    /// For failure messages: what tmux says of the pane, and the processes' states.
    var paneState: String {
        let pane = (try? tmux(["display-message", "-p", "-t", "main",
                               "dead=#{pane_dead} status=#{pane_dead_status} signal=#{pane_dead_signal}"]).output) ?? "?"
        let states = processes.map { pid in
            (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8))?
                .split(separator: "\n").first { $0.hasPrefix("State") }.map { "\(pid) \($0)" } ?? "\(pid) gone"
        }
        return pane.trimmingCharacters(in: .whitespacesAndNewlines) + " " + states.joined(separator: ", ")
    }

    /// The tmux server and the pane's command, killed for sure in `deinit`.
    private var processes: [pid_t] = []

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

    /// The visible screen with its colours: SGR sequences as tmux keeps them
    /// (one per attribute, e.g. `ESC[38;5;196m`).
    func captureWithColours() -> String {
        (try? tmux(["capture-pane", "-p", "-e", "-t", "main"]).output) ?? ""
    }

    /// Nil while the command runs; its exit status once it has ended. tmux
    /// 3.3 races here: it may drop the last output of a pane whose process has
    /// just exited, or not fill in #{pane_dead_status}; any one of the three
    /// signs will do.
    var exitStatus: Int32? {
        if let match = capture().firstMatch(of: /\[exited (\d+)\]|Pane is dead \(status (\d+)/),
           let digits = match.1 ?? match.2 {
            return Int32(digits)
        }
        let pane = (try? tmux(["display-message", "-p", "-t", "main", "#{pane_dead}:#{pane_dead_status}"]).output) ?? ""
        let parts = pane.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ":")
        guard parts.count == 2, parts[0] == "1" else { return nil }
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
        // kill-server hangs up the pane; make sure nothing outlives the test.
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, processes.contains(where: { kill($0, 0) == 0 && !isZombie($0) }) { usleep(50_000) }
        for pid in processes where kill(pid, 0) == 0 { kill(pid, SIGKILL) }
        if let socketPath, !socketPath.isEmpty { try? FileManager.default.removeItem(atPath: socketPath) }
    }

    /// True when `pid` has exited but is not reaped yet (state Z).
    private func isZombie(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }
}

enum TmuxError: Error { case failed([String], String) }

extension TmuxSession {
    /// Runs `argv` (looked up in PATH) with /dev/null for 0, 1 and 2 and no
    /// other inherited descriptor; returns its exit status.
    static func spawnAndWait(_ argv: [String]) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in 0...2 {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        // glibc 2.34+ has it, but the Glibc module does not import it.
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        } else {
            // Older C library: close what is open now, one by one.
            let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            for fd in open.compactMap(Int32.init) where fd > 2 && fcntl(fd, F_GETFD) != -1 {
                posix_spawn_file_actions_addclose(&actions, fd)
            }
        }
        // The test runner's threads block most signals (and ignore some); the
        // tmux server and the watch it runs must get SIGCHLD, SIGHUP, SIGWINCH...
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawnp(&pid, argv[0], &actions, &attributes, &cArguments, environ)
        guard spawned == 0 else { throw TmuxError.failed(argv, "posix_spawnp: \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        // WIFEXITED / WEXITSTATUS by hand (macros are not imported).
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}

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
