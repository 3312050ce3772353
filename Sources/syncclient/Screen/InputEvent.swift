/// A key the person pressed, as far as the terminal tells it.
enum Key: Equatable, Sendable {
    /// A printable character: letters, digits, punctuation, space.
    case character(Character)
    /// Ctrl with a letter, by its lower-case letter: Ctrl-C is `.control("c")`.
    case control(Character)
    case enter, tab, backTab, backspace, escape, delete
    case up, down, left, right, home, end, pageUp, pageDown
}

/// Which button a mouse report is about (xterm SGR button codes).
enum MouseButton: Equatable, Sendable {
    case left, middle, right
    /// Motion with no button held (any-motion tracking only).
    case none
    case wheelUp, wheelDown, wheelLeft, wheelRight
}

/// One xterm mouse report. `x` and `y` are 0-based columns and rows, the
/// same coordinates `ScreenLayout` uses (the terminal sends them 1-based).
struct MouseEvent: Equatable, Sendable {
    enum Action: Equatable, Sendable {
        case press
        /// The pointer moved; `button` is the one held (`.none` for hover).
        case motion
        case release
    }

    var action: Action
    var button: MouseButton
    var x: Int
    var y: Int
    var shift = false
    var alt = false
    var control = false
}

/// Something that arrived on the terminal's input.
enum InputEvent: Equatable, Sendable {
    case key(Key)
    case mouse(MouseEvent)
}
