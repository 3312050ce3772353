import BoardCRDT

/// Draws the Set table for a terminal (SV1-SV6): pure, from a
/// `SetScreenModel` and a layout to lines of text.
enum SetScreen {
    static let helpTexts = [
        "arrows move  Space/Enter choose  click a card  d deal  n new game  q quit",
        "arrows Space choose d deal n new q quit",
        "Space choose q quit",
    ]

    static func render(_ model: SetScreenModel, layout: SetLayout, colour: ColourMode) -> [String] {
        draw(model, layout: layout, colour: colour).lines(colour: colour)
    }

    static func draw(_ model: SetScreenModel, layout: SetLayout, colour: ColourMode) -> Canvas {
        var canvas = Canvas(width: layout.width, height: layout.height)
        if layout.isTooSmall {
            canvas.write("terminal too small: need \(SetLayout.minimumWidth)x\(SetLayout.minimumHeight)", x: 0, y: 0, style: .plain)
            return canvas
        }
        drawHeader(model, layout: layout, on: &canvas)
        for place in layout.cards.indices where layout.isVisible(place: place) {
            drawPlace(place, model: model, layout: layout, colour: colour, on: &canvas)
        }
        drawScrollMarks(layout, on: &canvas)
        drawMessage(model, layout: layout, on: &canvas)
        drawButtons(model, layout: layout, colour: colour, on: &canvas)
        return canvas
    }

    // MARK: Header: status and scores (SV4)

    /// ` t1 · live · 2 here · game 1 · deck 69 · 4 sets on table`
    static func statusText(_ model: SetScreenModel) -> String {
        var text = " \(model.boardName) · \(model.connection.label)"
        if let clients = model.clients { text += " · \(clients) here" }
        let table = model.table
        guard table.game > 0 else { return text + " · no game yet" }
        text += " · game \(table.game) · deck \(table.deck.count) · \(table.setsOnTable) sets on table"
        if table.over { text += " · GAME OVER" }
        return text
    }

    /// ` ana (you) 2 sets 0 misses · bo 1 set 1 miss`
    static func scoresText(_ model: SetScreenModel) -> String {
        let people = model.everyone
        guard !people.isEmpty else { return " no players yet" }
        return " " + people.map { name in
            let player = model.table.players[name] ?? SetTable.Player()
            let you = name == model.ownName ? " (you)" : ""
            let marker = model.markers[name].map { " [\($0)]" } ?? ""
            let sets = player.score == 1 ? "1 set" : "\(player.score) sets"
            let misses = player.misses == 1 ? "1 miss" : "\(player.misses) misses"
            return "\(name.isEmpty ? "you" : name)\(you)\(marker) \(sets) \(misses)"
        }.joined(separator: " · ")
    }

    private static func drawHeader(_ model: SetScreenModel, layout: SetLayout, on canvas: inout Canvas) {
        canvas.fill(Rect(x: 0, y: 0, width: layout.width, height: 1), style: .statusBar)
        canvas.write(statusText(model), x: 0, y: 0, style: .statusBar)
        canvas.write(scoresText(model), x: 0, y: 1, style: .plain)
    }

    // MARK: Cards (SV1-SV3)

    private static func drawPlace(_ place: Int, model: SetScreenModel, layout: SetLayout, colour: ColourMode, on canvas: inout Canvas) {
        let rect = layout.cards[place]
        let flashing = model.flash?.places.contains(place) == true
        let shown = model.flash?.leavingCard(at: place) ?? model.card(at: place)
        let isCursor = place == model.cursor
        guard let card = shown else {
            // A hole (S5): an empty place, dashed, still reachable by the cursor.
            canvas.outline(rect, lines: .dashed, style: isCursor ? .cursor : .cardFrame)
            if isCursor { markCursor(rect, on: &canvas) }
            return
        }
        let own = model.ownPlayer
        let ownPicked = !flashing && own?.picked.contains(card) == true
        let ownMismatch = ownPicked && own?.mismatch == true
        var lines = BoxLines.light, style = Style.cardFrame
        if flashing {
            (lines, style) = (.double, .match)
        } else if ownMismatch {
            (lines, style) = (.heavy, .mismatch)
        } else if ownPicked {
            (lines, style) = (.double, .ownPick)
        } else if isCursor {
            (lines, style) = (.light, .cursor)
        }
        canvas.outline(rect, lines: lines, style: style)
        CardArt.drawSymbols(card, in: rect, colour: colour, on: &canvas)

        // Top edge: what is going on with this card, in words and markers.
        var label = ""
        if flashing, let flash = model.flash {
            label = flash.showsLeavingCards ? "SET \(flash.player)" : "new"
        } else if ownMismatch {
            label = "no set"
        } else if ownPicked {
            label = "you"
        }
        let others = flashing ? [] : model.otherPicks(of: card).map { (model.markers[$0.name] ?? "?") + ($0.mismatch ? "x" : "") }
        if !label.isEmpty { canvas.write(label, x: rect.x + 1, y: rect.y, style: style, limit: rect.width - 2) }
        if !others.isEmpty {
            let text = others.joined(separator: " ")
            let x = max(rect.x + 1 + (label.isEmpty ? 0 : label.count + 1), rect.maxX - 1 - text.count)
            canvas.write(text, x: x, y: rect.y, style: .otherPick, limit: rect.maxX - 1 - x)
        }
        // Bottom edge: the card's code, e.g. 2SFR (what `state --json` shows).
        if rect.width >= 6 {
            let code = card.code
            canvas.write(code, x: rect.x + (rect.width - code.count) / 2, y: rect.maxY - 1, style: style)
        }
        if isCursor { markCursor(rect, on: &canvas) }
    }

    /// The cursor: arrows on the card's side edges, visible without colour.
    private static func markCursor(_ rect: Rect, on canvas: inout Canvas) {
        let y = rect.y + rect.height / 2
        canvas.put(">", x: rect.x, y: y, style: .cursor)
        canvas.put("<", x: rect.maxX - 1, y: y, style: .cursor)
    }

    private static func drawScrollMarks(_ layout: SetLayout, on canvas: inout Canvas) {
        guard layout.rows > layout.visibleRows else { return }
        var marks = ""
        if layout.scroll > 0 { marks += "^" }
        if layout.scroll + layout.visibleRows < layout.rows { marks += "v" }
        // At the status bar's right end, clear of the cards.
        let text = " more \(marks) "
        canvas.write(text, x: layout.width - text.count, y: 0, style: .statusBar)
    }

    // MARK: Footer: messages and buttons (SV4-SV6)

    /// The message row: a confirmation, a refusal, or the latest pick.
    static func message(_ model: SetScreenModel) -> (text: String, style: Style)? {
        if model.confirmingNewGame { return ("Start a new game? Every score is wiped. y = yes, n = no", .refusal) }
        if let refusal = model.refusal { return (refusal, .refusal) }
        if let flash = model.flash {
            let who = flash.player == model.ownName ? "You" : flash.player
            return ("\(who) found a set: " + flash.cards.map(\.code).joined(separator: " "), .match)
        }
        if let own = model.ownPlayer, own.mismatch {
            return ("Not a set: " + own.picked.map(\.code).joined(separator: " ") + ". Choose any card to start again.", .mismatch)
        }
        if model.table.over { return ("The game is over. Press n for a new game.", .help) }
        return nil
    }

    private static func drawMessage(_ model: SetScreenModel, layout: SetLayout, on canvas: inout Canvas) {
        guard let message = message(model) else { return }
        canvas.write(" " + message.text, x: 0, y: layout.messageRow, style: message.style)
    }

    private static func drawButtons(_ model: SetScreenModel, layout: SetLayout, colour: ColourMode, on canvas: inout Canvas) {
        let deckEmpty = model.table.game > 0 && model.table.deck.isEmpty
        let deal = deckEmpty ? SetLayout.emptyDeckTitle : SetLayout.dealTitle
        canvas.write(deal, x: layout.dealButton.x, y: layout.buttonRow, style: deckEmpty ? .disabledButton : .actionBar)
        canvas.write(SetLayout.newGameTitle, x: layout.newGameButton.x, y: layout.buttonRow, style: .actionBar)
        let x = layout.newGameButton.maxX + 2
        let room = max(0, layout.width - x)
        let help = helpTexts.first { $0.count <= room } ?? ""
        canvas.write(help, x: x, y: layout.buttonRow, style: .help, limit: room)
    }
}
