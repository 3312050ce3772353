import BoardCRDT

/// What the held mouse button went down on; decides what its motion and
/// release mean.
enum PointerPress: Equatable, Sendable {
    /// A letter tile: toggles on release over the same tile.
    case tile(Letter)
    /// A top-grid cell holding `letter`: a drag that moves it (B7).
    case topCell(Letter, from: Int)
    /// The action bar (on `button`, if any): a click, or a drag that moves
    /// the whole screen (V4) once the pointer leaves row `y`.
    case actionBar(button: ActionButton?, y: Int, startOffset: Double, dragging: Bool)
}

/// Mouse handling: clicks, the top-grid drag and drop, the action-bar drag
/// and the wheel. Coordinates are 0-based, as `InputDecoder` gives them.
extension WatchController {
    mutating func handle(mouse: MouseEvent) -> [WatchAction] {
        switch (mouse.action, mouse.button) {
        case (.press, .wheelUp):
            scroll(by: -1)
        case (.press, .wheelDown):
            scroll(by: 1)
        case (.press, .left):
            pointerDown(x: mouse.x, y: mouse.y)
        case (.motion, _):
            pointerMoved(x: mouse.x, y: mouse.y)
        case (.release, _):
            return pointerUp(x: mouse.x, y: mouse.y)
        default:
            break
        }
        return []
    }

    private mutating func pointerDown(x: Int, y: Int) {
        cancelPress()
        switch layout.hit(x: x, y: y) {
        case let .tile(letter):
            press = .tile(letter)
        case let .button(button):
            press = .actionBar(button: button, y: y, startOffset: model.view.offset, dragging: false)
            model.pressedButton = button
        case .actionBar:
            press = .actionBar(button: nil, y: y, startOffset: model.view.offset, dragging: false)
        case let .topCell(place) where place <= model.order.count:
            let letter = model.order[place - 1]
            press = .topCell(letter, from: place)
            model.focus = letter
            model.drag = TopGridDrag(letter: letter, from: place, hover: place)
        default:
            break
        }
    }

    private mutating func pointerMoved(x: Int, y: Int) {
        switch press {
        case let .topCell(letter, from):
            if case let .topCell(place) = layout.hit(x: x, y: y) {
                model.drag = TopGridDrag(letter: letter, from: from, hover: place)
            } else {
                model.drag = TopGridDrag(letter: letter, from: from, hover: nil)
            }
        case let .actionBar(button, pressY, startOffset, dragging):
            guard dragging || y != pressY else { return }
            press = .actionBar(button: button, y: pressY, startOffset: startOffset, dragging: true)
            model.pressedButton = nil
            // The bar follows the pointer: each row up hides one more row.
            let distance = Double(max(layout.hiddenDistance, 1))
            model.view.drag(to: startOffset + Double(pressY - y) / distance)
        case .tile, nil:
            break
        }
    }

    private mutating func pointerUp(x: Int, y: Int) -> [WatchAction] {
        guard let held = press else { return [] }
        let target = layout.hit(x: x, y: y)
        press = nil
        model.pressedButton = nil
        switch held {
        case let .tile(letter):
            return target == .tile(letter) ? [toggle(letter)] : []
        case let .topCell(letter, from):
            model.drag = nil
            // A click without a drag does nothing; a drop on an empty cell
            // moves the letter to the last place.
            guard case let .topCell(place) = target, place != from else { return [] }
            return move(letter, to: place)
        case let .actionBar(button, _, _, dragging):
            if dragging {
                endBarDrag()
                return []
            }
            guard let button, target == .button(button) else { return [] }
            return perform(button)
        }
    }

    /// V4: a drag ends in the nearer of all shown and all hidden.
    private mutating func endBarDrag() {
        model.view.endDrag()
        if !animates { model.view.jump(to: model.view.target) }
    }

    /// A new press while one is held means the release got lost: undo it.
    private mutating func cancelPress() {
        if case .actionBar(_, _, _, true) = press { endBarDrag() }
        press = nil
        model.drag = nil
        model.pressedButton = nil
    }
}
