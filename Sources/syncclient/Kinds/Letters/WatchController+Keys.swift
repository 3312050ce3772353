import BoardCRDT

/// Keyboard bindings (the help line lists them, `BoardScreen.helpTexts`).
///
/// Every letter toggles its tile, in either case, except lower-case `q`,
/// which quits (`watch` runs until `q`: K3, docs/rules/README.md); `Q` toggles Q. Other
/// commands live on keys that are not letters: digits move, punctuation
/// hides, shows and resets; Esc and Ctrl-C quit too.
extension WatchController {
    mutating func handle(key: Key) -> [WatchAction] {
        switch key {
        case let .character(character):
            return handle(character: character)
        case .control("c"), .control("d"), .escape:
            return [.quit]
        case .tab:
            focusNext(by: 1)
        case .backTab:
            focusNext(by: -1)
        case .left:
            return nudge(by: -1)
        case .right:
            return nudge(by: 1)
        case .up:
            scroll(by: -1)
        case .down:
            scroll(by: 1)
        case .pageUp:
            scroll(by: -pageRows)
        case .pageDown:
            scroll(by: pageRows)
        case .home:
            scroll(by: -ScreenLayout.tileRows)
        case .end:
            scroll(by: ScreenLayout.tileRows)
        case .control, .enter, .backspace, .delete:
            break
        }
        return []
    }

    private mutating func handle(character: Character) -> [WatchAction] {
        if character == "q" { return [.quit] }
        if let letter = Letter(String(character).uppercased()) {
            return [toggle(letter)]
        }
        if let digit = character.wholeNumberValue, (1...LetterBoard.capacity).contains(digit) {
            guard let letter = model.focusedLetter else { return [] }
            return move(letter, to: digit)
        }
        switch character {
        case "<", ",": return nudge(by: -1)
        case ">", ".": return nudge(by: 1)
        case "-", "_": return perform(.hide)
        case "+", "=": return perform(.show)
        case "!": return perform(.reset)
        case "?": model.showsHelp.toggle()
        default: break
        }
        return []
    }

    /// Moves the focused letter one place left (-1) or right (+1).
    private mutating func nudge(by step: Int) -> [WatchAction] {
        guard let letter = model.focusedLetter, let place = model.place(of: letter) else { return [] }
        let target = place + step
        guard (1...model.order.count).contains(target) else { return [] }
        return move(letter, to: target)
    }

    /// Tab walks the focus along the selection order, wrapping around.
    private mutating func focusNext(by step: Int) {
        let order = model.order
        guard !order.isEmpty else { return }
        let current = model.focusedLetter.flatMap { order.firstIndex(of: $0) } ?? order.count - 1
        model.focus = order[((current + step) % order.count + order.count) % order.count]
    }

    /// Tile rows that fit the letter viewport, for Page Up and Page Down.
    private var pageRows: Int {
        let layout = self.layout
        return max(1, layout.letterViewport.height / (layout.tileHeight + 1))
    }
}
