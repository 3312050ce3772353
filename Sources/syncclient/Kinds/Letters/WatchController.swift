import BoardCRDT

/// What the watch screen reacts to. The caller translates the outside world
/// (terminal bytes through `InputDecoder`, the replica, the connection,
/// SIGWINCH, a timer) into these.
enum WatchEvent: Equatable, Sendable {
    case input(InputEvent)
    /// The replica's selection order after any change, own or remote.
    case order([Letter])
    case connection(ConnectionState)
    /// How many people are on the board (the hub's `clients`).
    case clients(Int)
    /// A refusal to show (see `ScreenModel.refusalText`).
    case refusal(String)
    case resize(width: Int, height: Int)
    /// One animation step; send these (about every 60 ms) while
    /// `isAnimating` is true.
    case tick
}

/// What the caller must do after a letter-board event.
typealias WatchAction = ScreenAction<LetterBoard.Intent>

/// The watch screen's state machine: events in, actions out, no I/O (the
/// same shape as the hub's protocol machine). It owns this viewer's
/// `ScreenModel`, including the view state nobody else sees (V1-V4).
struct WatchController: Sendable {
    /// Settable so the key and pointer extensions (other files) can change
    /// it; callers outside the controller only read it.
    var model: ScreenModel
    private(set) var width: Int
    private(set) var height: Int
    /// False jumps straight to shown or hidden (a terminal too slow to animate).
    var animates: Bool
    /// The mouse button held down and what it was pressed on.
    var press: PointerPress?

    init(boardName: String, width: Int, height: Int, animates: Bool = true) {
        model = ScreenModel(boardName: boardName)
        self.width = width
        self.height = height
        self.animates = animates
    }

    /// True while hide or show is still moving: keep sending `.tick`.
    var isAnimating: Bool { model.view.isAnimating }

    /// The current geometry, for hits and scrolling.
    var layout: ScreenLayout { BoardScreen.layout(model, width: width, height: height) }

    /// The current frame: exactly `height` lines of `width` columns.
    func render(colour: ColourMode) -> [String] {
        BoardScreen.render(model, width: width, height: height, colour: colour)
    }

    /// Handles one event. `.send` actions come first, in order; `.redraw`
    /// at most once, whenever the screen changed.
    mutating func handle(_ event: WatchEvent) -> [WatchAction] {
        let before = model
        var actions: [WatchAction] = []
        switch event {
        case let .input(.key(key)):
            actions += handle(key: key)
        case let .input(.mouse(mouse)):
            actions += handle(mouse: mouse)
        case let .order(order):
            model.order = order
            if let drag = model.drag, model.place(of: drag.letter) != drag.from {
                // Someone else moved or removed the lifted letter: drop the drag.
                model.drag = nil
                press = nil
            }
        case let .connection(state):
            model.connection = state
        case let .clients(count):
            model.clients = count
        case let .refusal(text):
            model.refusal = text
        case let .resize(newWidth, newHeight):
            width = newWidth
            height = newHeight
            clampScroll()
            actions.append(.redraw)
        case .tick:
            model.view.tick()
        }
        if model != before, !actions.contains(.redraw) { actions.append(.redraw) }
        // Quit last, after anything that should still be sent.
        if let quit = actions.firstIndex(of: .quit) {
            actions.remove(at: quit)
            actions.append(.quit)
        }
        return actions
    }

    // MARK: - Shared by keys and pointer

    /// B9: a tap is a toggle in the UI; on the wire select and deselect differ.
    mutating func toggle(_ letter: Letter) -> WatchAction {
        model.refusal = nil
        if model.place(of: letter) != nil { return .send(.deselect(letter)) }
        model.focus = letter
        return .send(.select(letter))
    }

    /// Moves a selected letter to `place`, clamped to the order (B7).
    mutating func move(_ letter: Letter, to place: Int) -> [WatchAction] {
        guard let from = model.place(of: letter) else { return [] }
        let target = min(max(place, 1), model.order.count)
        model.focus = letter
        guard target != from else { return [] }
        model.refusal = nil
        return [.send(.move(letter, to: target))]
    }

    /// Hide, Show and Reset, from a key or a button.
    mutating func perform(_ button: ActionButton) -> [WatchAction] {
        switch button {
        case .hide:
            settle(.hidden)
            return []
        case .show:
            settle(.shown)
            return []
        case .reset:
            // V4: Reset also returns the presser's own view to all shown.
            settle(.shown)
            model.refusal = nil
            return [.send(.reset)]
        }
    }

    mutating func settle(_ resting: ViewState.Resting) {
        if animates { model.view.animate(to: resting) } else { model.view.jump(to: resting) }
    }

    /// Scrolls the letter grid by `rows` tile rows, within what there is.
    mutating func scroll(by rows: Int) {
        model.scroll = layout.scroll + rows
        clampScroll()
    }

    mutating func clampScroll() {
        model.scroll = min(max(model.scroll, 0), layout.maxScroll)
    }
}
