import Glibc
import WebSocketLoop

/// The real terminal: raw mode, the alternate screen, SGR mouse reporting,
/// and restoring all of it on the way out (q, Ctrl-C, SIGTERM, hub loss).
final class Terminal: @unchecked Sendable {
    // Sendable: confined to the thread that made it (the watch's, which runs its loop), checked by `owner` (debug builds).
    private var saved = termios()
    private var entered = false
    let owner = ThreadOwner("Terminal")

    init() {
        owner.claim()
    }

    /// Whether both standard input and output are terminals.
    static var isInteractive: Bool { isatty(0) == 1 && isatty(1) == 1 }

    /// Columns and rows, or 80 x 24 when unknown.
    static func size() -> (width: Int, height: Int) {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 {
            return (Int(size.ws_col), Int(size.ws_row))
        }
        return (80, 24)
    }

    func enter() {
        owner.check()
        guard tcgetattr(0, &saved) == 0 else { return }
        var raw = saved
        cfmakeraw(&raw)
        raw.c_oflag |= tcflag_t(OPOST)
        tcsetattr(0, TCSAFLUSH, &raw)
        entered = true
        // Alternate screen, hidden cursor, button + drag mouse reports in SGR form.
        write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[?1000h\u{1B}[?1002h\u{1B}[?1006h\u{1B}[2J")
    }

    func restore() {
        owner.check()
        guard entered else { return }
        entered = false
        write("\u{1B}[?1006l\u{1B}[?1002l\u{1B}[?1000l\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l")
        tcsetattr(0, TCSAFLUSH, &saved)
    }

    /// Draws a full frame from the top-left corner.
    func draw(_ lines: [String]) {
        owner.check()
        var out = "\u{1B}[H"
        for (index, line) in lines.enumerated() {
            if index > 0 { out += "\r\n" }
            out += line
        }
        write(out)
    }

    func write(_ text: String) {
        owner.check()
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(1, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { if errno == EINTR { continue } else { return } }
                offset += written
            }
        }
    }

    /// Reads standard input on its own thread and hands each chunk to `chunk`.
    static func readInput(_ chunk: @escaping @Sendable ([UInt8]) -> Void) {
        let box = Unmanaged.passRetained(InputReader(chunk)).toOpaque()
        var thread = pthread_t()
        pthread_create(&thread, nil, { raw in
            let reader = Unmanaged<InputReader>.fromOpaque(raw!).takeRetainedValue()
            var buffer = [UInt8](repeating: 0, count: 256)
            while true {
                let count = read(0, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                reader.chunk(Array(buffer[..<count]))
            }
            return nil
        }, box)
        pthread_detach(thread)
    }

    /// Waits for SIGWINCH, SIGINT and SIGTERM on their own thread (blocked
    /// everywhere else), so no work happens inside a signal handler.
    static func watchSignals(_ signal: @escaping @Sendable (Int32) -> Void) {
        var set = sigset_t()
        sigemptyset(&set)
        for number in [SIGWINCH, SIGINT, SIGTERM] { sigaddset(&set, number) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
        let box = Unmanaged.passRetained(InputReader { bytes in signal(Int32(bytes.first ?? 0)) }).toOpaque()
        var thread = pthread_t()
        pthread_create(&thread, nil, { raw in
            let handler = Unmanaged<InputReader>.fromOpaque(raw!).takeRetainedValue()
            var set = sigset_t()
            sigemptyset(&set)
            for number in [SIGWINCH, SIGINT, SIGTERM] { sigaddset(&set, number) }
            var number: Int32 = 0
            while sigwait(&set, &number) == 0 { handler.chunk([UInt8(truncatingIfNeeded: number)]) }
            return nil
        }, box)
        pthread_detach(thread)
    }
}

/// A callback carried into a pthread.
private final class InputReader: Sendable {
    // Sendable (checked by the compiler): one `let` of a Sendable closure.
    let chunk: @Sendable ([UInt8]) -> Void
    init(_ chunk: @escaping @Sendable ([UInt8]) -> Void) { self.chunk = chunk }
}
