import BoardCRDT

/// A top-grid drag in progress (B7): `letter` was lifted from place `from`
/// and hovers over place `hover` (nil when the pointer is off the top grid).
struct TopGridDrag: Equatable, Sendable {
    var letter: Letter
    var from: Int
    var hover: Int?
}

/// Everything `BoardScreen` needs to draw one frame. A plain value: the
/// `WatchController` owns one and changes it; tests build them by hand.
struct ScreenModel: Equatable, Sendable {
    var boardName: String
    var connection: ConnectionState = .connecting
    /// People on the board, nil until the hub has said.
    var clients: Int?
    /// The latest refusal (B5, C4), shown until this person acts again.
    var refusal: String?
    /// The shared selection order (B2): place n holds `order[n - 1]`.
    var order: [Letter] = []
    /// The letter the keyboard moves; falls back to the newest pick.
    var focus: Letter?
    var view: ViewState = .shown
    /// Letter-grid scroll, in rows of tiles; clamped by the layout.
    var scroll: Int = 0
    var drag: TopGridDrag?
    /// The Action-bar button the pointer is holding down, drawn pressed.
    var pressedButton: ActionButton?
    /// Full key list (true) or just a hint to press `?` (false).
    var showsHelp: Bool = true

    init(boardName: String) {
        self.boardName = boardName
    }

    /// The letter keyboard moves apply to: the focused letter while it is
    /// selected, otherwise the last letter in the order.
    var focusedLetter: Letter? {
        if let focus, order.contains(focus) { return focus }
        return order.last
    }

    /// The 1-based place of `letter` in the order, nil when unselected.
    func place(of letter: Letter) -> Int? {
        order.firstIndex(of: letter).map { $0 + 1 }
    }

    /// The status bar's words for a refusal: "board full: at most 6 letters
    /// can be selected". `code` is the wire code (board_full, bad_place...).
    static func refusalText(code: String, message: String) -> String {
        let title = HubWords.printable(String(code.prefix(40).map { $0 == "_" ? " " : $0 }))
        return title.isEmpty ? HubWords.printable(message) : "\(title): \(HubWords.printable(message))"
    }

}
