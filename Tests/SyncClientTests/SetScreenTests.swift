import BoardCRDT
import Testing
@testable import syncclient

/// A dealt table from a fixed shuffle, 12 cards out (S3).
func setTable(seed: UInt64 = 7, players: [String: SetTable.Player] = [:], last: SetTable.LastPick? = nil) -> SetTable.State {
    let cards = SetDeck.shuffled(seed: seed)
    return SetTable.State(game: 1, table: cards.prefix(12).map { Optional($0) }, deck: Array(cards.dropFirst(12)),
                          players: players, last: last)
}

/// The first set on the table, as places.
func firstSet(_ state: SetTable.State) -> [Int]? {
    let table = state.table
    for a in table.indices { for b in table.indices where b > a { for c in table.indices where c > b {
        if let x = table[a], let y = table[b], let z = table[c], Card.isSet(x, y, z) { return [a, b, c] }
    } } }
    return nil
}

func snapshot(_ state: SetTable.State, refusal: String? = nil, names: [String] = ["ana", "bo"]) -> LinkSnapshot<SetTable> {
    LinkSnapshot(board: state, state: .live, clients: names.count, names: names, version: 3, refusal: refusal, unacknowledged: 0)
}

@Suite struct SetScreenTests {
    private func controller(_ state: SetTable.State = setTable(), width: Int = 80, height: Int = 36) -> SetController {
        var controller = SetController(boardName: "t1", name: "ana", width: width, height: height)
        _ = controller.react(to: .snapshot(snapshot(state), previous: nil))
        return controller
    }

    private func sends(_ actions: [SetAction]) -> [SetTable.Intent] {
        actions.compactMap { if case let .send(intent) = $0 { intent } else { nil } }
    }

    private func key(_ key: Key) -> ScreenEvent<SetTable> { .input(.key(key)) }

    private func text(_ controller: SetController, colour: ColourMode = .none) -> [String] {
        controller.render(colour: colour).map(visible)
    }

    // MARK: SV1: every card, 2:3, scaled and redrawn on resize

    @Test func cardsKeepTwoToThreeAndScaleWithTheTerminal() {
        for (width, height) in [(80, 36), (80, 24), (120, 50), (200, 60), (40, 20), (30, 12)] {
            let layout = SetLayout(places: 12, scroll: 0, width: width, height: height)
            #expect(layout.cards.count == 12)
            // 2:3 on cells twice as tall as wide: width ~ 4/3 height.
            let ratio = Double(layout.cardWidth) / Double(2 * layout.cardHeight)
            #expect(abs(ratio - 2.0 / 3.0) < 0.1, "\(width)x\(height): \(layout.cardWidth)x\(layout.cardHeight)")
            // No two cards overlap, none leaves the screen sideways.
            for (i, a) in layout.cards.enumerated() {
                #expect(a.x >= 0 && a.maxX <= width)
                for b in layout.cards[(i + 1)...] {
                    #expect(!(a.x < b.maxX && b.x < a.maxX && a.y < b.maxY && b.y < a.maxY))
                }
            }
        }
        let small = SetLayout(places: 12, scroll: 0, width: 80, height: 24)
        let big = SetLayout(places: 12, scroll: 0, width: 160, height: 60)
        #expect(big.cardHeight > small.cardHeight)
        // All 12 on screen at 80x24, no scrolling.
        #expect(small.visibleRows == small.rows)

        var watch = controller(width: 80, height: 36)
        let before = watch.layout.cardHeight
        #expect(watch.react(to: .resize(width: 160, height: 60)).contains(.redraw))
        #expect(watch.layout.cardHeight > before)
        #expect(watch.render(colour: .none).count == 60)
    }

    @Test func tooManyCardsScrollAndTheCursorStaysInView() {
        var state = setTable()
        for _ in 0..<12 { state.table.append(state.deck.removeFirst()) }   // 24 places
        var watch = controller(state, width: 40, height: 14)
        let layout = watch.layout
        #expect(layout.cardHeight == SetLayout.minimumCardHeight)
        #expect(layout.rows > layout.visibleRows)
        _ = watch.react(to: key(.end))
        #expect(watch.layout.isVisible(place: 23))
        #expect(watch.layout.scroll > 0)
        _ = watch.react(to: key(.home))
        #expect(watch.layout.scroll == 0)
    }

    // MARK: SV2: features told apart, also without colour

    @Test func featuresAreToldApartWithoutColour() {
        // Shading by fill, shape by edges.
        #expect(CardArt.fill(.solid) != CardArt.fill(.striped))
        #expect(CardArt.fill(.striped) != CardArt.fill(.open))
        let rows = Card.Shape.allCases.map { CardArt.symbolRow($0, shading: .open, row: 0, height: 1, width: 6).text }
        #expect(Set(rows).count == 3)
        // Every shape keeps its fill at every size, down to the smallest symbol.
        for shape in Card.Shape.allCases {
            for (height, width) in [(1, 3), (1, 4), (2, 8), (3, 12)] {
                for row in 0..<height {
                    let solid = CardArt.symbolRow(shape, shading: .solid, row: row, height: height, width: width)
                    #expect(solid.text.contains("█"), "\(shape) \(height)x\(width) row \(row): \(solid.text)")
                    #expect(solid.offset + solid.text.count <= width)
                }
            }
        }
        // Under NO_COLOR the colour is a letter on the card and the code on its edge.
        var state = setTable()
        let card = Card(code: "2SFR")!, other = state.table[0]!
        state.table[0] = card
        state.deck[state.deck.firstIndex(of: card) ?? 0] = other
        let watch = controller(state)
        let rect = watch.layout.cards[0]
        let lines = text(watch)
        #expect(column(lines[rect.y + 1], rect.x + 1) == "R")
        #expect(lines[rect.maxY - 1].contains("2SFR"))
        #expect(lines.joined().contains("█"))
        // Two symbols drawn: two rows start with the squiggle's edge.
        let inside = (rect.y + 1..<rect.maxY - 1).filter { columns(lines[$0], rect.x, rect.width).contains("~") }
        #expect(inside.count == 2 * CardArt.symbolSize(innerWidth: rect.width - 2, innerHeight: rect.height - 2).height)
        // In colour, red is a colour escape; none at all without colour.
        #expect(watch.render(colour: .ansi256).joined().contains("38;5;160"))
        #expect(!watch.render(colour: .none).joined().contains("\u{1B}"))
    }

    @Test func everyFrameIsExactlyTheTerminalSize() {
        for colour in [ColourMode.none, .basic, .ansi256] {
            for (width, height) in [(80, 24), (100, 40), (24, 10), (10, 5)] {
                let lines = controller(width: width, height: height).render(colour: colour)
                #expect(lines.count == height)
                #expect(lines.allSatisfy { visible($0).count == width })
            }
        }
    }

    // MARK: SV6: keys

    @Test func arrowsMoveTheCursorAndSpaceChooses() {
        let state = setTable()
        var watch = controller(state)
        #expect(watch.model.cursor == 0)
        _ = watch.react(to: key(.right))
        _ = watch.react(to: key(.down))
        #expect(watch.model.cursor == 1 + watch.layout.columns)
        #expect(sends(watch.react(to: key(.character(" ")))) == [.choose(state.table[watch.model.cursor]!)])
        #expect(sends(watch.react(to: key(.enter))) == [.choose(state.table[watch.model.cursor]!)])
        _ = watch.react(to: key(.left))
        _ = watch.react(to: key(.up))
        _ = watch.react(to: key(.up))
        _ = watch.react(to: key(.left))
        #expect(watch.model.cursor == 0, "the cursor stops at the edges")
        let lines = text(watch)
        let rect = watch.layout.cards[0]
        #expect(column(lines[rect.y + rect.height / 2], rect.x) == ">")
    }

    @Test func dealNewGameWithConfirmationAndQuit() {
        var watch = controller()
        #expect(sends(watch.react(to: key(.character("d")))) == [.deal])
        #expect(sends(watch.react(to: key(.character("n")))).isEmpty)
        #expect(watch.model.confirmingNewGame)
        #expect(text(watch).joined().contains("Start a new game?"))
        #expect(sends(watch.react(to: key(.character("n")))).isEmpty, "n at the question says no")
        #expect(!watch.model.confirmingNewGame)
        _ = watch.react(to: key(.character("n")))
        #expect(sends(watch.react(to: key(.character("y")))) == [.newGame(seed: nil)])
        _ = watch.react(to: key(.character("n")))
        #expect(sends(watch.react(to: key(.escape))).isEmpty)
        #expect(watch.react(to: key(.character("q"))) == [.quit])
        #expect(watch.react(to: key(.control("c"))) == [.quit])
    }

    // MARK: SV6: mouse

    @Test func clickChoosesACardAndPressesButtons() {
        let state = setTable()
        var watch = controller(state)
        let rect = watch.layout.cards[5]
        let press = MouseEvent(action: .press, button: .left, x: rect.centre.x, y: rect.centre.y)
        #expect(sends(watch.react(to: .input(.mouse(press)))) == [.choose(state.table[5]!)])
        #expect(watch.model.cursor == 5)
        let release = MouseEvent(action: .release, button: .left, x: rect.centre.x, y: rect.centre.y)
        #expect(sends(watch.react(to: .input(.mouse(release)))).isEmpty)
        let deal = watch.layout.dealButton
        #expect(sends(watch.react(to: .input(.mouse(MouseEvent(action: .press, button: .left, x: deal.x + 2, y: deal.y))))) == [.deal])
        let newGame = watch.layout.newGameButton
        _ = watch.react(to: .input(.mouse(MouseEvent(action: .press, button: .left, x: newGame.x + 2, y: newGame.y))))
        #expect(watch.model.confirmingNewGame)
    }

    // MARK: SV3: picks, mismatch, match

    @Test func ownPickOthersPicksAndMismatchAreDrawnApart() {
        var state = setTable()
        let a = state.table[0]!, b = state.table[1]!
        state.players = ["ana": SetTable.Player(picked: [a]), "bo": SetTable.Player(picked: [a, b])]
        let watch = controller(state)
        let lines = text(watch)
        let first = watch.layout.cards[0], second = watch.layout.cards[1], third = watch.layout.cards[2]
        // Own pick: a double frame saying "you"; bo's marker B on both of his.
        #expect(column(lines[first.y], first.x) == "╔")
        #expect(columns(lines[first.y], first.x, first.width).contains("you"))
        #expect(columns(lines[first.y], first.x, first.width).contains("B"))
        #expect(column(lines[second.y], second.x) == "┌")
        #expect(columns(lines[second.y], second.x, second.width).contains("B"))
        #expect(!columns(lines[third.y], third.x, third.width).contains("B"))
        // In colour the own pick is inverse.
        #expect(watch.render(colour: .ansi256).joined().contains("1;7;38;5;25"))
        // The scores line names everyone.
        #expect(lines[1].contains("ana (you) 0 sets 0 misses"))
        #expect(lines[1].contains("bo [B] 0 sets 0 misses"))

        // A mismatch: heavy frame, "no set", a message.
        let c = state.table[2]!
        var mismatch = state
        mismatch.players["ana"] = SetTable.Player(misses: 1, picked: [a, b, c], mismatch: true)
        var later = watch
        _ = later.react(to: .snapshot(snapshot(mismatch), previous: snapshot(state)))
        let missed = text(later)
        #expect(column(missed[first.y], first.x) == "┏")
        #expect(columns(missed[first.y], first.x, first.width).contains("no set"))
        #expect(missed.joined().contains("Not a set"))
        #expect(missed[1].contains("ana (you) 0 sets 1 miss"))
    }

    @Test func aMatchIsShownForAMomentWhileItsCardsLeave() throws {
        let state = setTable()
        let places = try #require(firstSet(state))
        let cards = places.map { state.table[$0]! }
        var after = state
        for place in places { after.table[place] = after.deck.removeFirst() }
        after.matches = [SetTable.Match(player: "bo", cards: cards)]
        after.players = ["bo": SetTable.Player(score: 1)]
        after.last = SetTable.LastPick(player: "bo", cards: cards, result: .set)
        var watch = controller(state)
        #expect(watch.react(to: .snapshot(snapshot(after), previous: snapshot(state))).contains(.redraw))
        #expect(watch.isAnimating)
        var lines = text(watch)
        let rect = watch.layout.cards[places[0]]
        // First the leaving cards, marked, then the new ones.
        #expect(columns(lines[rect.y], rect.x, rect.width).contains("SET bo"))
        #expect(lines[rect.maxY - 1].contains(cards[0].code))
        #expect(lines.joined().contains("bo found a set"))
        #expect(lines[1].contains("bo [B] 1 set 0 misses"))
        var ticks = 0
        while watch.isAnimating, ticks < 100 {
            _ = watch.react(to: .tick)
            ticks += 1
            if ticks == MatchFlash.duration - MatchFlash.leavingUntil + 1 {
                lines = text(watch)
                #expect(lines[rect.maxY - 1].contains(after.table[places[0]]!.code))
            }
        }
        #expect(ticks == MatchFlash.duration)
        lines = text(watch)
        #expect(!lines.joined().contains("found a set"))
        #expect(lines[rect.maxY - 1].contains(after.table[places[0]]!.code))
    }

    // MARK: SV4, SV5: status and refusals

    @Test func statusShowsDeckSetsAndConnection() {
        let state = setTable()
        let lines = text(controller(state))
        #expect(lines[0].contains("t1 · live · 2 here · game 1 · deck 69 · \(state.setsOnTable) sets on table"))
        #expect(lines[35].contains("[ Deal 3 More Cards ]"))
        #expect(lines[35].contains("[ New Game ]"))
        var empty = state
        empty.deck = []
        #expect(text(controller(empty))[35].contains("[ Deck empty ]"))
    }

    @Test func refusalsShowUntilThePersonActsAgain() {
        let state = setTable()
        var watch = controller(state)
        _ = watch.react(to: key(.character("d")))
        let refusal = "deck empty: the deck is empty; there are no more cards to deal"
        _ = watch.react(to: .snapshot(snapshot(state, refusal: refusal), previous: snapshot(state)))
        #expect(text(watch)[34].contains(refusal))
        // Acting again clears it; the same refusal again shows again.
        _ = watch.react(to: key(.character("d")))
        #expect(!text(watch)[34].contains(refusal))
        _ = watch.react(to: .snapshot(snapshot(state, refusal: refusal), previous: snapshot(state, refusal: refusal)))
        #expect(text(watch)[34].contains(refusal))
    }

    @Test func aNewGameResetsTheCursor() {
        var watch = controller()
        _ = watch.react(to: key(.end))
        var next = setTable(seed: 8)
        next.game = 2
        _ = watch.react(to: .snapshot(snapshot(next), previous: snapshot(setTable())))
        #expect(watch.model.cursor == 0)
        #expect(text(watch)[0].contains("game 2"))
    }

    @Test func pipedOutputIsOneLinePerTableChange() {
        let state = setTable()
        let line = SetController.transcriptLine(boardName: "t1", snapshot: snapshot(state), previous: nil)
        #expect(line?.hasPrefix("t1 v3 game 1: deck 69") == true)
        #expect(SetController.transcriptLine(boardName: "t1", snapshot: snapshot(state), previous: snapshot(state)) == nil)
    }

    @Test func setPathsAreWatched() {
        #expect(WatchedKinds.kind(ofPath: "/set/t1")?.name == SetTable.name)
        #expect(WatchedKinds.kind(ofPath: "/boards/t1")?.name == LetterBoard.name)
    }
}
