/// Which colours the terminal gets. `none` writes no escape sequence at all:
/// NO_COLOR is set, TERM is dumb or missing, or output is being captured.
enum ColourMode: Equatable, Sendable {
    case none
    /// The 16 basic ANSI colours (TERM=xterm, vt220 with colour ...).
    case basic
    /// xterm's 256-colour palette: the original's greys and pinks.
    case ansi256

    /// Picks the mode from the environment, following no-color.org: a
    /// NO_COLOR that is present and not empty turns colour off.
    static func detect(environment: [String: String]) -> ColourMode {
        if let noColour = environment["NO_COLOR"], !noColour.isEmpty { return .none }
        guard let term = environment["TERM"], !term.isEmpty, term != "dumb" else { return .none }
        let colourTerm = environment["COLORTERM"] ?? ""
        if term.contains("256") || colourTerm == "truecolor" || colourTerm == "24bit" { return .ansi256 }
        return .basic
    }
}

/// What a character on screen is part of; the palette turns it into SGR.
enum Style: Equatable, Sendable {
    case plain
    /// Outlines of cells and unselected tiles.
    case outline
    /// A top-grid cell's place number: present, but quiet.
    case placeLabel
    case topLetter
    /// The top-grid cell the keyboard moves (its outline).
    case focus
    /// The lifted letter's old cell while a drag is in progress.
    case lifted
    /// The cell a dragged letter would land on.
    case dropTarget
    case tileLetter
    case selectedTile
    /// A selected tile's number in its top-right corner.
    case tileNumber
    case statusBar
    /// The refusal inside the status bar: it must be noticed.
    case refusal
    case actionBar
    case pressedButton
    case help
    // The Set table (SV2, SV3).
    /// A card's outline nobody has picked.
    case cardFrame
    case setRed
    case setGreen
    case setPurple
    /// The viewer's own pick: inverse and bold.
    case ownPick
    /// The viewer's own three cards that are no set.
    case mismatch
    /// Another player's pick marker (their initial on the card's top edge).
    case otherPick
    /// The card the keyboard cursor is on.
    case cursor
    /// A match, shown to everyone for a moment while its cards leave.
    case match
    /// A button that does nothing now (Deal with the deck empty).
    case disabledButton
    /// A shop's price before its discount: struck through (PV2, PV8).
    case struck
    /// A shop's price, its badges, a sold-out mark.
    case price
    case badge
    case soldOut
    /// One cell of a picture (`Canvas.draw(_:in:colour:)`): xterm colours in
    /// front and behind; nil behind leaves the terminal's background.
    case halfBlock(foreground: UInt8, background: UInt8?)
}

/// SGR sequences for each `Style` in each `ColourMode`.
enum Palette {
    static let reset = "\u{1B}[0m"

    /// The parameters after `ESC [` and before `m`; nil means the terminal's
    /// default look.
    static func parameters(for style: Style, in mode: ColourMode) -> String? {
        switch mode {
        case .none: return nil
        case .ansi256: return parameters256(style)
        case .basic: return parametersBasic(style)
        }
    }

    /// The escape sequence that switches to `style` (empty in `.none`).
    static func sequence(for style: Style, in mode: ColourMode) -> String {
        guard mode != .none else { return "" }
        guard let parameters = parameters(for: style, in: mode) else { return reset }
        return "\u{1B}[0;\(parameters)m"
    }

    private static func parameters256(_ style: Style) -> String? {
        switch style {
        case .plain, .tileLetter, .topLetter: nil
        case .outline: "38;5;240"
        case .placeLabel: "38;5;245"
        case .focus: "1;38;5;25"
        case .lifted: "38;5;250"
        case .dropTarget: "1;38;5;162"
        case .selectedTile: "1;30;48;5;153"
        case .tileNumber: "1;38;5;160;48;5;153"
        case .statusBar: "30;48;5;250"
        case .refusal: "1;38;5;88;48;5;250"
        case .actionBar: "30;48;5;218"
        case .pressedButton: "1;37;48;5;162"
        case .help: "38;5;244"
        case .cardFrame: "38;5;245"
        case .setRed: "1;38;5;160"
        case .setGreen: "1;38;5;28"
        case .setPurple: "1;38;5;91"
        case .ownPick: "1;7;38;5;25"
        case .mismatch: "1;38;5;196"
        case .otherPick: "1;30;48;5;222"
        case .cursor: "1;38;5;33"
        case .match: "1;30;48;5;156"
        case .disabledButton: "38;5;246;48;5;252"
        case .struck: "9;38;5;244"
        case .price: "1;38;5;160"
        case .badge: "38;5;130"
        case .soldOut: "1;38;5;88"
        case let .halfBlock(foreground, background): "38;5;\(foreground)" + (background.map { ";48;5;\($0)" } ?? "")
        }
    }

    private static func parametersBasic(_ style: Style) -> String? {
        switch style {
        case .plain, .tileLetter, .topLetter, .outline: nil
        case .placeLabel, .lifted, .help: "2"
        case .focus: "1;34"
        case .dropTarget: "1;35"
        case .selectedTile: "1;30;46"
        case .tileNumber: "1;31;46"
        case .statusBar: "30;47"
        case .refusal: "1;31;47"
        case .actionBar: "30;45"
        case .pressedButton: "1;37;41"
        case .cardFrame: "2"
        case .setRed: "1;31"
        case .setGreen: "1;32"
        case .setPurple: "1;35"
        case .ownPick: "1;7;34"
        case .mismatch: "1;31"
        case .otherPick: "1;30;43"
        case .cursor: "1;36"
        case .match: "1;30;42"
        case .disabledButton: "2;30;47"
        case .struck: "9;2"
        case .price: "1;31"
        case .badge: "33"
        case .soldOut: "1;31"
        case let .halfBlock(foreground, background):
            "3\(XtermColour.basic(foreground))" + (background.map { ";4\(XtermColour.basic($0))" } ?? "")
        }
    }
}
