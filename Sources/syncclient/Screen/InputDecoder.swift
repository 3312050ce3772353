/// Turns the raw bytes a terminal in raw mode sends into `InputEvent`s.
///
/// Reads may split a sequence anywhere, so incomplete input stays buffered
/// until the next `feed`. A lone ESC is ambiguous (the Esc key, or the start
/// of a sequence still on its way): it waits too, and `flush()` turns it into
/// the Esc key once the caller has seen no more input for a short while.
struct InputDecoder: Sendable {
    private var buffer: [UInt8] = []
    /// An unfinished sequence longer than this is garbage, not a slow writer.
    static let longestSequence = 32

    init() {}

    /// True when a lone ESC waits for `flush()` or more bytes.
    var hasPendingInput: Bool { !buffer.isEmpty }

    /// Adds `bytes` and returns every event they complete.
    mutating func feed(_ bytes: some Sequence<UInt8>) -> [InputEvent] {
        buffer.append(contentsOf: bytes)
        var events: [InputEvent] = []
        var start = 0
        while start < buffer.count {
            switch Self.decode(buffer[start...]) {
            case let .event(event, length):
                if let event { events.append(event) }
                start += length
            case .incomplete:
                if buffer.count - start > Self.longestSequence {
                    start += 1  // Drop the stuck ESC and read on.
                    continue
                }
                buffer.removeFirst(start)
                return events
            }
        }
        buffer.removeAll(keepingCapacity: true)
        return events
    }

    /// Gives up waiting: whatever is buffered is taken as typed keys (a lone
    /// ESC becomes the Esc key). Call after a short quiet spell (~50 ms).
    mutating func flush() -> [InputEvent] {
        guard let first = buffer.first else { return [] }
        let rest = Array(buffer.dropFirst())
        buffer.removeAll()
        // Only ESC can start a sequence worth keeping; a cut UTF-8 is lost.
        return first == 0x1B ? [.key(.escape)] + feed(rest) : feed(rest)
    }

    private enum Step {
        /// `length` bytes consumed; nil event for sequences we ignore.
        case event(InputEvent?, length: Int)
        case incomplete
    }

    private static func decode(_ bytes: ArraySlice<UInt8>) -> Step {
        let first = bytes[bytes.startIndex]
        switch first {
        case 0x1B: return decodeEscape(bytes)
        case 0x0D, 0x0A: return .event(.key(.enter), length: 1)
        case 0x09: return .event(.key(.tab), length: 1)
        case 0x7F, 0x08: return .event(.key(.backspace), length: 1)
        case 0x01...0x1A:
            return .event(.key(.control(Character(Unicode.Scalar(first + 0x60)))), length: 1)
        case 0x20..<0x7F:
            return .event(.key(.character(Character(Unicode.Scalar(first)))), length: 1)
        case 0xC0...0xF7: return decodeUTF8(bytes)
        default: return .event(nil, length: 1)
        }
    }

    private static func decodeUTF8(_ bytes: ArraySlice<UInt8>) -> Step {
        let first = bytes[bytes.startIndex]
        let length = first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : 2
        guard bytes.count >= length else { return .incomplete }
        let sequence = bytes.prefix(length)
        guard sequence.dropFirst().allSatisfy({ $0 & 0xC0 == 0x80 }) else { return .event(nil, length: 1) }
        let text = String(decoding: sequence, as: UTF8.self)
        return .event(text.first.map { .key(.character($0)) }, length: length)
    }

    private static func decodeEscape(_ bytes: ArraySlice<UInt8>) -> Step {
        let start = bytes.startIndex
        guard bytes.count >= 2 else { return .incomplete }
        switch bytes[start + 1] {
        case UInt8(ascii: "["):
            return decodeCSI(bytes)
        case UInt8(ascii: "O"):
            // SS3: arrows in application cursor mode.
            guard bytes.count >= 3 else { return .incomplete }
            return .event(cursorKey(bytes[start + 2]).map { .key($0) }, length: 3)
        case 0x1B:
            return .event(.key(.escape), length: 1)
        default:
            // ESC then a key is Alt+key; Alt is not used, so: Esc, then the key.
            return .event(.key(.escape), length: 1)
        }
    }

    /// `ESC [ params final`: cursor keys, `~` keys and mouse reports.
    private static func decodeCSI(_ bytes: ArraySlice<UInt8>) -> Step {
        let start = bytes.startIndex
        guard bytes.count >= 3 else { return .incomplete }
        if bytes[start + 2] == UInt8(ascii: "M") {
            // Legacy X10 report, for terminals without SGR mode: three bytes.
            guard bytes.count >= 6 else { return .incomplete }
            let code = Int(bytes[start + 3]) - 32
            let event = MouseReport.event(code: code, x: Int(bytes[start + 4]) - 33, y: Int(bytes[start + 5]) - 33,
                                          release: code & 3 == 3 && code & 64 == 0)
            return .event(event.map { .mouse($0) }, length: 6)
        }
        var index = start + 2
        while index < bytes.endIndex, (0x20...0x3F).contains(bytes[index]) { index += 1 }
        guard index < bytes.endIndex else { return .incomplete }
        let final = bytes[index]
        let length = index - start + 1
        let parameters = String(decoding: bytes[(start + 2)..<index], as: UTF8.self)
        guard (0x40...0x7E).contains(final) else { return .event(nil, length: length) }
        if parameters.hasPrefix("<"), final == UInt8(ascii: "M") || final == UInt8(ascii: "m") {
            return .event(MouseReport.sgr(parameters.dropFirst(), release: final == UInt8(ascii: "m")).map { .mouse($0) }, length: length)
        }
        if final == UInt8(ascii: "~") {
            let key: Key? = switch parameters.split(separator: ";").first {
            case "1", "7": .home
            case "4", "8": .end
            case "3": .delete
            case "5": .pageUp
            case "6": .pageDown
            default: nil
            }
            return .event(key.map { .key($0) }, length: length)
        }
        if final == UInt8(ascii: "Z") { return .event(.key(.backTab), length: length) }
        return .event(cursorKey(final).map { .key($0) }, length: length)
    }

    private static func cursorKey(_ final: UInt8) -> Key? {
        switch final {
        case UInt8(ascii: "A"): .up
        case UInt8(ascii: "B"): .down
        case UInt8(ascii: "C"): .right
        case UInt8(ascii: "D"): .left
        case UInt8(ascii: "H"): .home
        case UInt8(ascii: "F"): .end
        default: nil
        }
    }
}

/// xterm's mouse button codes: low two bits the button, +4 Shift, +8 Alt,
/// +16 Ctrl, +32 motion, +64 wheel.
enum MouseReport {
    /// Parses the `b;x;y` of `ESC [ < b ; x ; y M|m` (1-based x and y).
    static func sgr(_ parameters: Substring, release: Bool) -> MouseEvent? {
        let fields = parameters.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) }
        guard fields.count == 3, let code = fields[0], let x = fields[1], let y = fields[2] else { return nil }
        return event(code: code, x: x - 1, y: y - 1, release: release)
    }

    static func event(code: Int, x: Int, y: Int, release: Bool) -> MouseEvent? {
        guard code >= 0 else { return nil }
        let low = code & 3
        let button: MouseButton
        if code & 64 != 0 {
            button = [MouseButton.wheelUp, .wheelDown, .wheelLeft, .wheelRight][low]
        } else {
            button = [MouseButton.left, .middle, .right, .none][low]
        }
        let action: MouseEvent.Action = release ? .release : code & 32 != 0 ? .motion : .press
        return MouseEvent(action: action, button: button, x: max(x, 0), y: max(y, 0),
                          shift: code & 4 != 0, alt: code & 8 != 0, control: code & 16 != 0)
    }
}
