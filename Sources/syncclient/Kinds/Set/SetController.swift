import BoardCRDT

typealias SetAction = ScreenAction<SetTable.Intent>

/// The Set screen's state machine: the link's snapshots, keys, clicks,
/// resizes and ticks in; intents to send, redraws and quit out. No I/O:
/// tests drive it without a terminal.
struct SetController: Sendable {
    var model: SetScreenModel
    private(set) var width: Int
    private(set) var height: Int
    /// A choose or deal was just sent: the next snapshot's refusal is its
    /// answer even when it reads like the one before.
    private var justSent = false

    init(boardName: String, name: String?, width: Int, height: Int) {
        model = SetScreenModel(boardName: boardName, me: name)
        self.width = width
        self.height = height
    }

    var isAnimating: Bool { model.flash != nil }

    var layout: SetLayout {
        SetLayout(places: model.table.table.count, scroll: model.scroll,
                  deckEmpty: model.table.game > 0 && model.table.deck.isEmpty, width: width, height: height)
    }

    func render(colour: ColourMode) -> [String] {
        SetScreen.render(model, layout: layout, colour: colour)
    }

    mutating func react(to event: ScreenEvent<SetTable>) -> [SetAction] {
        let before = model
        var actions: [SetAction] = []
        switch event {
        case let .snapshot(snapshot, previous):
            update(snapshot, previous: previous)
        case let .input(.key(key)):
            actions += handle(key: key)
        case let .input(.mouse(mouse)):
            actions += handle(mouse: mouse)
        case let .resize(newWidth, newHeight):
            width = newWidth
            height = newHeight
            followCursor()
            actions.append(.redraw)
        case .picture:
            break  // this kind shows no pictures
        case .tick:
            if var flash = model.flash {
                flash.ticksLeft -= 1
                model.flash = flash.ticksLeft > 0 ? flash : nil
            }
        }
        if actions.contains(where: { if case .send = $0 { true } else { false } }) { justSent = true }
        if model != before, !actions.contains(.redraw) { actions.append(.redraw) }
        if let quit = actions.firstIndex(of: .quit) {
            actions.remove(at: quit)
            actions.append(.quit)
        }
        return actions
    }

    // MARK: The link's news

    private mutating func update(_ snapshot: LinkSnapshot<SetTable>, previous: LinkSnapshot<SetTable>?) {
        let old = previous?.board ?? model.table
        let new = snapshot.board
        model.connection = snapshot.state
        model.clients = snapshot.clients
        model.names = snapshot.names
        if new.game != old.game {
            model.flash = nil
            model.cursor = 0
            model.scroll = 0
        } else if let last = new.last, last != old.last, last.result == .set {
            // SV3: a match, shown for a moment where its cards were.
            let places = last.cards.compactMap { old.place(of: $0) }
            if !places.isEmpty {
                model.flash = MatchFlash(player: last.player, cards: last.cards, places: places, ticksLeft: MatchFlash.duration)
            }
        }
        model.table = new
        model.cursor = min(model.cursor, max(0, new.table.count - 1))
        if let refusal = snapshot.refusal, refusal != previous?.refusal || justSent {
            model.refusal = refusal
        }
        justSent = false
        followCursor()
    }

    // MARK: Keys (SV6)

    mutating func handle(key: Key) -> [SetAction] {
        if model.confirmingNewGame {
            model.confirmingNewGame = false
            switch key {
            case .character("y"), .character("Y"):
                model.refusal = nil
                return [.send(.newGame(seed: nil))]
            case .character("q"), .control("c"), .control("d"):
                return [.quit]
            default:
                return []       // n, Esc or anything else: no new game.
            }
        }
        switch key {
        case .character("q"), .control("c"), .control("d"), .escape:
            return [.quit]
        case .character(" "), .enter:
            return choose(at: model.cursor)
        case .character("d"), .character("D"):
            return deal()
        case .character("n"), .character("N"):
            model.confirmingNewGame = true
        case .left, .character("h"):
            moveCursor(by: -1)
        case .right, .character("l"):
            moveCursor(by: 1)
        case .up, .character("k"):
            moveCursor(by: -layout.columns)
        case .down, .character("j"):
            moveCursor(by: layout.columns)
        case .home:
            moveCursor(to: 0)
        case .end:
            moveCursor(to: model.table.table.count - 1)
        default:
            break
        }
        return []
    }

    private mutating func moveCursor(by step: Int) {
        let target = model.cursor + step
        guard target >= 0, target < model.table.table.count else { return }
        moveCursor(to: target)
    }

    private mutating func moveCursor(to place: Int) {
        model.cursor = min(max(place, 0), max(0, model.table.table.count - 1))
        followCursor()
    }

    /// Scrolls so that the cursor's row of cards is on screen (SV1).
    private mutating func followCursor() {
        let layout = self.layout
        let row = layout.row(of: model.cursor)
        if row < layout.scroll {
            model.scroll = row
        } else if row >= layout.scroll + layout.visibleRows {
            model.scroll = row - layout.visibleRows + 1
        } else {
            model.scroll = layout.scroll
        }
    }

    // MARK: Intents

    mutating func choose(at place: Int) -> [SetAction] {
        guard let card = model.card(at: place) else { return [] }
        model.cursor = place
        model.refusal = nil
        return [.send(.choose(card))]
    }

    mutating func deal() -> [SetAction] {
        model.refusal = nil
        return [.send(.deal)]
    }

    // MARK: Mouse (SV6)

    mutating func handle(mouse: MouseEvent) -> [SetAction] {
        switch (mouse.action, mouse.button) {
        case (.press, .left):
            if model.confirmingNewGame {
                model.confirmingNewGame = false
                return []
            }
            switch layout.hit(x: mouse.x, y: mouse.y) {
            case let .place(place)?: return choose(at: place)
            case .deal?: return deal()
            case .newGame?: model.confirmingNewGame = true
            case nil: break
            }
        case (.press, .wheelUp):
            model.scroll = max(0, layout.scroll - 1)
        case (.press, .wheelDown):
            model.scroll = layout.scroll + 1
            model.scroll = layout.scroll
        default:
            break
        }
        return []
    }
}
