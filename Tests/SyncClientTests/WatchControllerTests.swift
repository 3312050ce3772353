import BoardCRDT
import Testing
@testable import syncclient

/// The watch screen's state machine: keys and pointer in, intents out.
@Suite struct WatchControllerTests {
    private func controller(order: String = "", width: Int = 80, height: Int = 24) -> WatchController {
        var controller = WatchController(boardName: "demo", width: width, height: height)
        _ = controller.handle(.order(letters(order)))
        return controller
    }

    private func pointer(_ action: MouseEvent.Action, _ x: Int, _ y: Int) -> WatchEvent {
        .input(.mouse(MouseEvent(action: action, button: .left, x: x, y: y)))
    }

    /// Only the intents among the actions.
    private func sends(_ actions: [WatchAction]) -> [LetterBoard.Intent] {
        actions.compactMap { if case let .send(intent) = $0 { intent } else { nil } }
    }

    /// A point inside a tile's first inner row, visible even when the tile
    /// is cut by the bottom of the viewport.
    private func inside(_ watch: WatchController, _ character: Character) -> (x: Int, y: Int) {
        let rect = watch.layout.tiles[Int(letter(character).index)]
        return (rect.centre.x, rect.y + 1)
    }

    /// Runs ticks until the view rests; returns how many it took.
    private func settle(_ controller: inout WatchController) -> Int {
        var ticks = 0
        while controller.isAnimating, ticks < 100 {
            _ = controller.handle(.tick)
            ticks += 1
        }
        return ticks
    }

    /// B9: a letter key is a toggle in the UI, select or deselect on the wire.
    @Test func letterKeysToggle() {
        var watch = controller(order: "FA")
        #expect(sends(watch.key("g")) == [.select(letter("G"))])
        #expect(sends(watch.key("A")) == [.deselect(letter("A"))])
        // h, s and r are letters too; lower-case q quits (K3), Q toggles Q.
        #expect(sends(watch.key("Q")) == [.select(letter("Q"))])
        #expect(sends(watch.key("h")) == [.select(letter("H"))])
        #expect(watch.handle(.input(.key(.character("q")))) == [.quit])
        // The order only changes when the replica says so.
        #expect(sends(watch.key("G")) == [.select(letter("G"))])
        _ = watch.handle(.order(letters("FAGQ")))
        #expect(sends(watch.key("G")) == [.deselect(letter("G"))])
    }

    @Test func digitsMoveTheFocusedLetter() {
        var watch = controller(order: "FDA")
        // Focus falls back to the newest pick.
        #expect(sends(watch.key("1")) == [.move(letter("A"), to: 1)])
        _ = watch.handle(.order(letters("AFD")))
        // Still A: focus follows the moved letter; a place past the end is the end.
        #expect(sends(watch.key("6")) == [.move(letter("A"), to: 3)])
        _ = watch.handle(.order(letters("FDA")))
        #expect(watch.key("3").isEmpty)
        #expect(sends(watch.key("<")) == [.move(letter("A"), to: 2)])
        _ = watch.handle(.input(.key(.tab)))
        #expect(watch.model.focusedLetter == letter("F"))
        #expect(sends(watch.handle(.input(.key(.right)))) == [.move(letter("F"), to: 2)])
        #expect(watch.key(",").isEmpty)
    }

    @Test func quitKeys() {
        var watch = controller()
        #expect(watch.handle(.input(.key(.control("c")))) == [.quit])
        #expect(watch.handle(.input(.key(.escape))) == [.quit])
    }

    /// B7: F D A, drag A onto D's place -> move A to place 2.
    @Test func dragInTopGridMovesTheLetter() {
        var watch = controller(order: "FDA")
        let cells = watch.layout.topCells
        let from = cells[2].centre, over = cells[1].centre
        var actions = watch.run([pointer(.press, from.x, from.y), pointer(.motion, over.x, over.y)])
        #expect(watch.model.drag == TopGridDrag(letter: letter("A"), from: 3, hover: 2))
        #expect(actions == [.redraw, .redraw])
        actions = watch.handle(pointer(.release, over.x, over.y))
        #expect(actions == [.send(.move(letter("A"), to: 2)), .redraw])
        #expect(watch.model.drag == nil)
    }

    @Test func dropOnAnEmptyCellMovesToTheEnd() {
        var watch = controller(order: "FDA")
        let from = watch.layout.topCells[0].centre, to = watch.layout.topCells[5].centre
        let actions = watch.run([pointer(.press, from.x, from.y), pointer(.motion, to.x, to.y), pointer(.release, to.x, to.y)])
        #expect(sends(actions) == [.move(letter("F"), to: 3)])
        #expect(watch.model.drag == nil)
    }

    @Test func clickOnTopCellOrDropOffGridDoesNothing() {
        var watch = controller(order: "FDA")
        let cell = watch.layout.topCells[1].centre
        #expect(sends(watch.click(x: cell.x, y: cell.y)).isEmpty)
        #expect(watch.model.drag == nil, "nothing stays lifted")
        let tile = watch.layout.tiles[0].centre
        let actions = watch.run([pointer(.press, cell.x, cell.y), pointer(.motion, tile.x, tile.y), pointer(.release, tile.x, tile.y)])
        #expect(sends(actions).isEmpty)
        #expect(watch.model.drag == nil)
        #expect(watch.model.order == letters("FDA"))
    }

    @Test func clickingATileToggles() {
        var watch = controller(order: "FDA")
        let e = inside(watch, "E")
        #expect(sends(watch.click(x: e.x, y: e.y)) == [.select(letter("E"))])
        let d = inside(watch, "D")
        #expect(sends(watch.click(x: d.x, y: d.y)) == [.deselect(letter("D"))])
        // The third tile row is cut by the help line; its top still clicks.
        let g = inside(watch, "G")
        #expect(sends(watch.click(x: g.x, y: g.y)) == [.select(letter("G"))])
        // Pressed on E, released on B: no toggle.
        let b = inside(watch, "B")
        #expect(watch.run([pointer(.press, e.x, e.y), pointer(.release, b.x, b.y)]).isEmpty)
    }

    @Test func hideAndShowButtonsAnimate() {
        var watch = controller()
        let hide = watch.layout.rect(of: .hide).centre
        _ = watch.click(x: hide.x, y: hide.y)
        #expect(watch.isAnimating)
        #expect(settle(&watch) == 4)
        #expect(watch.model.view == .hidden)
        #expect(watch.layout.actionBar.y == 0)
        let show = watch.layout.rect(of: .show).centre
        _ = watch.click(x: show.x, y: show.y)
        _ = settle(&watch)
        #expect(watch.model.view == .shown)
        #expect(watch.layout.topGrid.y == 0)
    }

    /// V4: the screen follows the dragged action bar, clamped, and settles
    /// in the nearer of shown and hidden.
    @Test func actionBarDragFollowsAndSettles() {
        var watch = controller()
        let bar = watch.layout.actionBar.y, distance = watch.layout.hiddenDistance
        let x = watch.layout.rect(of: .show).centre.x
        _ = watch.run([pointer(.press, x, bar), pointer(.motion, x, bar - 3)])
        #expect(watch.model.view.offset == 3 / Double(distance))
        #expect(watch.layout.actionBar.y == bar - 3)
        #expect(!watch.isAnimating)
        // Not past half way: back to shown, and Show was not clicked.
        #expect(watch.handle(pointer(.release, x, bar - 3)) == [.redraw])
        _ = settle(&watch)
        #expect(watch.model.view == .shown)

        // Far up: clamped at all hidden, settles hidden.
        _ = watch.run([pointer(.press, x, bar), pointer(.motion, x, 0), pointer(.motion, x, 0)])
        #expect(watch.model.view.offset == Double(bar) / Double(distance))
        _ = watch.handle(pointer(.release, x, 0))
        _ = settle(&watch)
        #expect(watch.model.view == .hidden)

        // From hidden, dragging down past half way shows again.
        _ = watch.run([pointer(.press, x, 0), pointer(.motion, x, distance - 2), pointer(.release, x, distance - 2)])
        _ = settle(&watch)
        #expect(watch.model.view == .shown)
    }

    /// V4: Reset also returns the presser's own view to all shown.
    @Test func resetSendsAndShowsTheView() {
        var watch = controller(order: "FDA")
        #expect(watch.key("-") == [.redraw])
        _ = settle(&watch)
        #expect(watch.model.view == .hidden)
        #expect(watch.key("!") == [.send(.reset), .redraw])
        _ = settle(&watch)
        #expect(watch.model.view == .shown)

        _ = watch.key("-")
        _ = settle(&watch)
        let reset = watch.layout.rect(of: .reset).centre
        #expect(sends(watch.click(x: reset.x, y: reset.y)) == [.reset])
        #expect(watch.model.view.target == .shown)
    }

    @Test func withoutAnimationHideJumps() {
        var watch = controller()
        watch.animates = false
        _ = watch.key("-")
        #expect(watch.model.view == .hidden)
        #expect(!watch.isAnimating)
    }

    @Test func wheelScrollsTheLetterGrid() {
        var watch = controller(height: 16)
        let wheelDown = WatchEvent.input(.mouse(MouseEvent(action: .press, button: .wheelDown, x: 5, y: 12)))
        #expect(watch.handle(wheelDown) == [.redraw])
        #expect(watch.model.scroll == 1)
        for _ in 0..<20 { _ = watch.handle(wheelDown) }
        #expect(watch.model.scroll == watch.layout.maxScroll)
        #expect(watch.handle(wheelDown).isEmpty)
    }

    @Test func refusalShowsUntilTheNextAction() {
        var watch = controller(order: "ABCDEF")
        #expect(sends(watch.key("g")) == [.select(letter("G"))])
        #expect(watch.handle(.refusal(ScreenModel.refusalText(code: BoardRefusal.boardFull.code,
                                                              message: BoardRefusal.boardFull.message))) == [.redraw])
        #expect(watch.render(colour: .none).contains { $0.contains("board full: at most 6 letters can be selected") })
        _ = watch.key("a")
        #expect(watch.model.refusal == nil)
    }

    @Test func remoteChangesRedrawAndEndAStaleDrag() {
        var watch = controller(order: "FDA")
        let from = watch.layout.topCells[2].centre
        _ = watch.handle(pointer(.press, from.x, from.y))
        #expect(watch.handle(.order(letters("FD"))) == [.redraw])
        #expect(watch.model.drag == nil)
        #expect(watch.handle(.order(letters("FD"))).isEmpty)
        #expect(watch.handle(.clients(4)) == [.redraw])
        #expect(watch.handle(.connection(.reconnecting(attempt: 1))) == [.redraw])
        #expect(watch.handle(.resize(width: 100, height: 30)) == [.redraw])
        #expect(watch.render(colour: .none).count == 30)
    }
}
