import BoardCRDT
import Testing
@testable import syncclient

/// A stock with the given counts, the rest at J1's 10.
func stock(_ counts: [Fruit: Int] = [:], made: [Juice: Int] = [:], recent: [FruitStock.MadeJuice] = []) -> FruitStock.State {
    var state = FruitStock.State(made: made, recent: recent)
    for (fruit, count) in counts { state.stock[fruit] = count }
    return state
}

func stockSnapshot(_ state: FruitStock.State, refusal: String? = nil, names: [String] = ["ana", "bo"],
                   connection: ConnectionState = .live,
                   settled: [ReplicaSession<FruitStock>.Settled] = []) -> LinkSnapshot<FruitStock> {
    LinkSnapshot(board: state, state: connection, clients: names.count, names: names, version: 5, refusal: refusal, unacknowledged: 0,
                 settled: settled)
}

/// The hub acknowledged `juice`'s make with this final outcome.
func settledMake(_ juice: Juice, _ outcome: Outcome<StockRefusal>? = .applied) -> ReplicaSession<FruitStock>.Settled {
    ReplicaSession<FruitStock>.Settled(change: .make(juice), outcome: outcome)
}

/// The juice bar's screens (docs/rules/stock.md JV1-JV5), driven without a terminal.
@Suite struct StockScreenTests {
    private func controller(_ state: FruitStock.State = stock(), width: Int = 80, height: Int = 24) -> StockController {
        var controller = StockController(boardName: "bar", name: "ana", width: width, height: height)
        _ = controller.react(to: .snapshot(stockSnapshot(state), previous: nil))
        return controller
    }

    private func sends(_ actions: [StockAction]) -> [FruitStock.Intent] {
        actions.compactMap { if case let .send(intent) = $0 { intent } else { nil } }
    }

    private func key(_ key: Key) -> ScreenEvent<FruitStock> { .input(.key(key)) }
    private func char(_ character: Character) -> ScreenEvent<FruitStock> { .input(.key(.character(character))) }

    private func click(_ rect: Rect) -> ScreenEvent<FruitStock> {
        .input(.mouse(MouseEvent(action: .press, button: .left, x: rect.centre.x, y: rect.centre.y)))
    }

    private func text(_ controller: StockController) -> [String] {
        controller.render(colour: .none).map(visible)
    }

    private func screen(_ controller: StockController) -> String { text(controller).joined(separator: "\n") }

    /// Feeds a new stock to the controller as the link would, after `previous`.
    private func arrive(_ state: FruitStock.State, refusal: String? = nil, after previous: FruitStock.State,
                        previousRefusal: String? = nil, to controller: inout StockController) -> [StockAction] {
        controller.react(to: .snapshot(stockSnapshot(state, refusal: refusal), previous: stockSnapshot(previous, refusal: previousRefusal)))
    }

    // MARK: JV1: every fruit with its count, one button per juice with can_make, live

    @Test func orderScreenShowsEveryFruitAndEveryJuiceWithCanMake() {
        let state = stock([.banana: 9, .kiwi: 9, .mango: 8])
        let watch = controller(state)
        let lines = text(watch)
        #expect(lines.count == 24)
        #expect(lines.allSatisfy { $0.count == 80 })
        let layout = watch.layout
        for (index, fruit) in Fruit.allCases.enumerated() {
            let rect = layout.fruits[index]
            let row = columns(lines[rect.y], rect.x, rect.width)
            #expect(row.hasPrefix(fruit.rawValue) && row.hasSuffix(" \(state.count(of: fruit))"), "\(row)")
        }
        for (index, juice) in Juice.allCases.enumerated() {
            let rect = layout.juices[index]
            let button = columns(lines[rect.y], rect.x, rect.width)
            #expect(button.hasPrefix("[ \(index + 1) \(juice.title)"), "\(button)")
            #expect(button.hasSuffix("can make \(state.canMake(juice)) ]"), "\(button)")
        }
        // The example of the rules: banana 9 -> 4 banana juices, 1 strawberry-banana.
        #expect(screen(watch).contains("Banana juice") && lines[layout.juices[1].y].contains("can make 4 ]"))
        #expect(lines[layout.juices[4].y].contains("can make 1 ]"))
        #expect(screen(watch).contains("[ Add stock ]") && screen(watch).contains("[ Reset stock ]"))
    }

    @Test func countsChangeLiveWhenAnySnapshotArrives() {
        var watch = controller()
        let layout = watch.layout
        let next = stock([.mango: 13])
        let actions = arrive(next, after: stock(), to: &watch)
        #expect(actions == [.redraw])
        let lines = text(watch)
        #expect(columns(lines[layout.fruits[4].y], layout.fruits[4].x, layout.fruits[4].width).hasSuffix(" 13"))
        #expect(lines[layout.juices[5].y].contains("can make 4 ]"))
        // The same counts again: nothing to redraw.
        #expect(arrive(next, after: next, to: &watch).isEmpty)
    }

    @Test func headerShowsConnectionPeopleAndRecentMakes() {
        let state = stock([.mango: 7], made: [.mango: 1, .kiwi: 2],
                          recent: [.init(who: "bo", juice: .kiwi), .init(who: "bo", juice: .kiwi), .init(who: "ana", juice: .mango)])
        var watch = controller(state)
        let shown = screen(watch)
        #expect(text(watch)[0].contains("bar · live · 2 here"))
        #expect(shown.contains("here: ana (you), bo"))
        #expect(shown.contains("Recent makes (3 made in all)"))
        // Newest first.
        let ana = shown.range(of: "ana: Mango juice"), bo = shown.range(of: "bo: Kiwi juice")
        #expect(ana != nil && bo != nil && ana!.lowerBound < bo!.lowerBound)
        _ = watch.react(to: .snapshot(stockSnapshot(state, connection: .reconnecting(attempt: 2)), previous: stockSnapshot(state)))
        #expect(text(watch)[0].contains("reconnecting (try 2)"))
    }

    // MARK: JV2: a make, then "<Juice> is ready. Enjoy!" with OK

    @Test func aNumberKeyMakesTheJuiceAndSaysItIsReady() {
        var watch = controller()
        let actions = watch.react(to: char("6"))
        #expect(sends(actions) == [.make(.mango)])
        #expect(actions.last == .redraw)
        #expect(watch.model.dialog == .making(.mango), "on its way: not ready before the hub says so")
        // The link applies it at once: the counts follow, still "making".
        let made = stock([.mango: 7], made: [.mango: 1], recent: [.init(who: "ana", juice: .mango)])
        _ = arrive(made, after: stock(), to: &watch)
        #expect(screen(watch).contains("Making mango juice..."))
        #expect(!screen(watch).contains("is ready"))
        // The hub acknowledged it as made: final, so now JV2.
        _ = watch.react(to: .snapshot(stockSnapshot(made, settled: [settledMake(.mango)]), previous: stockSnapshot(made)))
        let shown = screen(watch)
        #expect(shown.contains("Mango juice is ready. Enjoy!"))
        #expect(shown.contains("[ OK ]"))
        // The counts stay in view under the box.
        let mango = watch.layout.fruits[4]
        #expect(columns(text(watch)[mango.y], mango.x, mango.width).hasSuffix(" 7"))
        // Enter is OK.
        #expect(sends(watch.react(to: key(.enter))).isEmpty)
        #expect(watch.model.dialog == nil)
        #expect(!screen(watch).contains("is ready"))
    }

    @Test func arrowsTabAndEnterMakeTheFocusedJuice() {
        var watch = controller()
        _ = watch.react(to: key(.down))
        _ = watch.react(to: key(.tab))
        _ = watch.react(to: key(.right))
        #expect(watch.model.focusedOrderItem == .juice(.pineapple))
        let layout = watch.layout
        #expect(column(text(watch)[layout.juices[3].y], layout.juices[3].x - 1) == ">")
        _ = watch.react(to: key(.up))
        #expect(sends(watch.react(to: key(.character(" ")))) == [.make(.kiwi)])
        #expect(screen(watch).contains("Making kiwi juice..."))
        _ = watch.react(to: .snapshot(stockSnapshot(stock(), settled: [settledMake(.kiwi)]), previous: stockSnapshot(stock())))
        #expect(screen(watch).contains("Kiwi juice is ready. Enjoy!"))
        // While the box is up, number keys make nothing.
        #expect(sends(watch.react(to: char("2"))).isEmpty)
        _ = watch.react(to: char("o"))
        // Around the ring: backwards from the first juice is Reset stock.
        _ = watch.react(to: key(.home))
        _ = watch.react(to: key(.backTab))
        #expect(watch.model.focusedOrderItem == .resetStock)
    }

    @Test func aClickOnAJuiceMakesItAndOnOKCloses() {
        var watch = controller()
        let layout = watch.layout
        #expect(sends(watch.react(to: click(layout.juices[6]))) == [.make(.mangoKiwi)])
        _ = watch.react(to: .snapshot(stockSnapshot(stock(), settled: [settledMake(.mangoKiwi)]), previous: stockSnapshot(stock())))
        let box = layout.dialogBox(.ready(.mangoKiwi), on: .order)
        #expect(text(watch)[box.box.y + 1].contains("Mango-kiwi juice is ready. Enjoy!"))
        #expect(columns(text(watch)[box.buttons[0].y], box.buttons[0].x, 6) == "[ OK ]")
        #expect(sends(watch.react(to: click(box.buttons[0]))).isEmpty)
        #expect(watch.model.dialog == nil)
    }

    // MARK: JV3: not enough fruit, Yes to the editor, No closes

    @Test func shortFruitAsksToEditTheStockAndSendsNothing() {
        var watch = controller()
        // Strawberry juice takes 16 strawberries; there are 10.
        let actions = watch.react(to: char("1"))
        #expect(sends(actions).isEmpty)
        let shown = screen(watch)
        #expect(shown.contains("Not enough fruit. Edit the stock?"))
        #expect(shown.contains("not enough fruit: strawberry 10 of 16"))
        #expect(shown.contains("[ Yes ]") && shown.contains("[ No ]"))
        #expect(!shown.contains("is ready"))
        // No (n) closes; Esc too.
        _ = watch.react(to: char("n"))
        #expect(watch.model.dialog == nil && watch.model.page == .order)
        _ = watch.react(to: char("1"))
        _ = watch.react(to: key(.escape))
        #expect(watch.model.dialog == nil && watch.model.page == .order)
        // Yes opens the editor on the fruit that is short.
        _ = watch.react(to: char("1"))
        _ = watch.react(to: char("y"))
        #expect(watch.model.page == .editor)
        #expect(watch.model.editorFocus == .plus(.strawberry))
        #expect(screen(watch).contains("Add stock"))
    }

    @Test func theQuestionsButtonsWorkByClickAndByEnter() {
        var watch = controller(stock([.kiwi: 2]))
        let layout = watch.layout
        _ = watch.react(to: char("3"))
        let box = layout.dialogBox(watch.model.dialog!, on: .order)
        #expect(columns(text(watch)[box.buttons[1].y], box.buttons[1].x, 6) == "[ No ]")
        _ = watch.react(to: click(box.buttons[1]))
        #expect(watch.model.dialog == nil && watch.model.page == .order)
        _ = watch.react(to: char("3"))
        _ = watch.react(to: click(box.buttons[0]))
        #expect(watch.model.page == .editor && watch.model.editorFocus == .plus(.kiwi))
        _ = watch.react(to: key(.escape))
        _ = watch.react(to: char("3"))
        _ = watch.react(to: key(.right))
        _ = watch.react(to: key(.enter))       // No
        #expect(watch.model.page == .order && watch.model.dialog == nil)
        _ = watch.react(to: char("3"))
        _ = watch.react(to: key(.enter))       // Yes, the default
        #expect(watch.model.page == .editor)
    }

    // MARK: JC2: shown as on its way, then taken back by the total order

    @Test func aMakeTheTotalOrderTakesBackBecomesTheQuestion() {
        let full = stock([.strawberry: 16])
        var watch = controller(full)
        #expect(sends(watch.react(to: char("1"))) == [.make(.strawberry)])
        let made = stock([.strawberry: 0], made: [.strawberry: 1], recent: [.init(who: "ana", juice: .strawberry)])
        _ = arrive(made, after: full, to: &watch)
        #expect(screen(watch).contains("Making strawberry juice..."))
        #expect(!screen(watch).contains("is ready"), "never told ready before the hub's final answer")
        // Bo's make was ordered first: the replay refuses ana's and takes it back.
        let bos = stock([.strawberry: 0], made: [.strawberry: 1], recent: [.init(who: "bo", juice: .strawberry)])
        let refusal = "not enough fruit: your strawberry juice was refused: not enough fruit: strawberry 0 of 16"
        _ = arrive(bos, refusal: refusal, after: made, to: &watch)
        let shown = screen(watch)
        #expect(!shown.contains("is ready"))
        #expect(shown.contains("Not enough fruit. Edit the stock?"))
        #expect(shown.contains("your strawberry juice was refused: not enough fruit: strawberry 0 of 16"))
        #expect(watch.model.dialog == .notEnough(.strawberry,
                                                 detail: "your strawberry juice was refused: not enough fruit: strawberry 0 of 16"))
        // No closes it; the recent makes under it show bo's.
        _ = watch.react(to: char("n"))
        #expect(screen(watch).contains("bo: Strawberry juice"))
        // Also after OK was pressed: the person is told.
        var later = controller(full)
        _ = later.react(to: char("1"))
        _ = later.react(to: key(.enter))
        _ = arrive(bos, refusal: refusal, after: made, to: &later)
        #expect(later.model.dialog == .notEnough(.strawberry,
                                                 detail: "your strawberry juice was refused: not enough fruit: strawberry 0 of 16"))
    }

    /// The hub's final answer settles it: a make it refused (another's was
    /// ordered first) opens JV3 with the reason, and "ready" never shows.
    @Test func aMakeTheHubSettlesAsRefusedAsksToEditTheStock() {
        let full = stock([.strawberry: 16])
        var watch = controller(full)
        _ = watch.react(to: char("1"))
        let bos = stock([.strawberry: 0], made: [.strawberry: 1], recent: [.init(who: "bo", juice: .strawberry)])
        let refused = StockRefusal.notEnoughFruit(.strawberry, [.init(fruit: .strawberry, have: 0, need: 16)])
        _ = watch.react(to: .snapshot(stockSnapshot(bos, settled: [settledMake(.strawberry, .refused(refused))]),
                                      previous: stockSnapshot(full)))
        #expect(watch.model.dialog == .notEnough(.strawberry,
                                                 detail: "your strawberry juice was refused: not enough fruit: strawberry 0 of 16"))
        #expect(!screen(watch).contains("is ready"))
        // A settled make whose outcome is unknown here is not called ready either.
        var unknown = controller(full)
        _ = unknown.react(to: char("1"))
        _ = unknown.react(to: .snapshot(stockSnapshot(full, settled: [settledMake(.strawberry, nil)]), previous: stockSnapshot(full)))
        #expect(unknown.model.dialog == nil)
        #expect(unknown.model.refusal == "Strawberry juice: sent; see the recent makes")
    }

    @Test func takenBackNamesTheRightJuice() {
        #expect(StockController.takenBack("not enough fruit: your mango juice was refused: not enough fruit: mango 1 of 3")?.0 == .mango)
        #expect(StockController.takenBack("not enough fruit: your mango-kiwi juice was refused: not enough fruit: kiwi 0 of 1")?.0
                == .mangoKiwi)
        #expect(StockController.takenBack("not enough fruit: your strawberry-banana juice was refused: not enough fruit: " +
                                          "banana 0 of 1")?.0 == .strawberryBanana)
        #expect(StockController.takenBack("out of range: kiwi is 999; +1 would take it outside 0 to 999") == nil)
        #expect(StockController.takenBack("out of range: your change was refused: kiwi is 999; +1 would take it outside 0 to 999") == nil)
        // A link that names no juice: the shortfall tells which.
        let cases: [(String, Juice)] = [("strawberry 4 of 16", .strawberry), ("banana 1 of 2", .banana), ("kiwi 2 of 3", .kiwi),
                                        ("pineapple 0 of 2", .pineapple), ("strawberry 0 of 10, banana 0 of 1", .strawberryBanana),
                                        ("banana 0 of 1", .strawberryBanana), ("mango 1 of 3", .mango), ("mango 1 of 2", .mangoKiwi),
                                        ("kiwi 0 of 1", .mangoKiwi)]
        for (short, juice) in cases {
            let taken = StockController.takenBack("not enough fruit: your change was refused: not enough fruit: " + short)
            #expect(taken?.0 == juice, "\(short)")
            #expect(taken?.1 == "\(FruitStock.summary(of: .make(juice))) was refused: not enough fruit: \(short)")
        }
    }

    @Test func otherRefusalsGoOnTheMessageRow() {
        var watch = controller(stock([.kiwi: 999]))
        _ = watch.react(to: char("e"))
        let refusal = "out of range: kiwi is 999; +1 would take it outside 0 to 999"
        _ = arrive(stock([.kiwi: 999]), refusal: refusal, after: stock([.kiwi: 999]), to: &watch)
        #expect(text(watch)[watch.layout.messageRow].contains(refusal))
        #expect(watch.model.dialog == nil)
    }

    // MARK: JV4: the editor, "Add stock", Close, - and + never below 0

    @Test func theEditorStepsByOneAndNeverBelowZero() {
        var watch = controller(stock([.banana: 0, .kiwi: 999]))
        _ = watch.react(to: char("e"))
        #expect(watch.model.page == .editor)
        let layout = watch.layout
        let lines = text(watch)
        #expect(lines[layout.editorTitleRow].contains("Add stock"))
        #expect(columns(lines[layout.closeButton.y], layout.closeButton.x, layout.closeButton.width) == "[ Close ]")
        for (index, fruit) in Fruit.allCases.enumerated() {
            let y = layout.editorRows[index].y
            #expect(lines[y].contains(fruit.rawValue))
            #expect(columns(lines[y], layout.minusButtons[index].x, 5) == "[ - ]")
            #expect(columns(lines[y], layout.plusButtons[index].x, 5) == "[ + ]")
            #expect(columns(lines[y], layout.countCells[index].x, layout.countCells[index].width).trimmingCharacters(in: .whitespaces)
                    == String(watch.model.stock.count(of: fruit)))
        }
        // + and - on the focused fruit (strawberry first).
        #expect(sends(watch.react(to: char("+"))) == [.restock(.strawberry, by: 1)])
        #expect(sends(watch.react(to: char("-"))) == [.restock(.strawberry, by: -1)])
        // Down to banana, at 0: - is not sent, by key, by Enter, by click.
        _ = watch.react(to: key(.down))
        #expect(watch.model.editorFocus == .plus(.banana))
        #expect(sends(watch.react(to: char("-"))).isEmpty)
        _ = watch.react(to: key(.left))
        #expect(watch.model.editorFocus == .minus(.banana))
        #expect(sends(watch.react(to: key(.enter))).isEmpty)
        #expect(sends(watch.react(to: click(layout.minusButtons[1]))).isEmpty)
        #expect(sends(watch.react(to: click(layout.plusButtons[1]))) == [.restock(.banana, by: 1)])
        // Kiwi at 999: + is not sent.
        #expect(sends(watch.react(to: click(layout.plusButtons[3]))).isEmpty)
        #expect(sends(watch.react(to: click(layout.minusButtons[3]))) == [.restock(.kiwi, by: -1)])
        // Clicking Close returns to the order screen.
        _ = watch.react(to: click(layout.closeButton))
        #expect(watch.model.page == .order)
        #expect(!screen(watch).contains("[ Close ]"))
    }

    @Test func theEditorsCountsChangeLiveAndCloseByKeys() {
        var watch = controller()
        _ = watch.react(to: key(.end))
        _ = watch.react(to: key(.up))
        #expect(watch.model.focusedOrderItem == .editStock)
        _ = watch.react(to: key(.enter))
        #expect(watch.model.page == .editor)
        _ = arrive(stock([.pineapple: 11]), after: stock(), to: &watch)
        let layout = watch.layout
        #expect(columns(text(watch)[layout.countCells[2].y], layout.countCells[2].x, 5).trimmingCharacters(in: .whitespaces) == "11")
        // Up from strawberry wraps to Close; Enter there closes.
        _ = watch.react(to: key(.up))
        #expect(watch.model.editorFocus == .close)
        _ = watch.react(to: key(.enter))
        #expect(watch.model.page == .order)
        // Tab walks -, + of every fruit, then Close.
        _ = watch.react(to: char("a"))
        watch.model.editorFocus = .minus(.strawberry)
        for _ in 0..<(Fruit.allCases.count * 2) { _ = watch.react(to: key(.tab)) }
        #expect(watch.model.editorFocus == .close)
        _ = watch.react(to: char("c"))
        #expect(watch.model.page == .order)
    }

    // MARK: r: reset, only after Yes

    @Test func resetAsksFirst() {
        var watch = controller(stock([.mango: 1]))
        _ = watch.react(to: char("r"))
        #expect(screen(watch).contains("Reset the stock?"))
        // Enter starts on No.
        #expect(sends(watch.react(to: key(.enter))).isEmpty)
        #expect(watch.model.dialog == nil)
        _ = watch.react(to: char("r"))
        #expect(sends(watch.react(to: char("n"))).isEmpty)
        _ = watch.react(to: char("r"))
        #expect(sends(watch.react(to: char("y"))) == [.resetStock])
        // From the button, and from the editor.
        #expect(sends(watch.react(to: click(watch.layout.resetButton))).isEmpty)
        #expect(watch.model.dialog == .confirmReset)
        _ = watch.react(to: char("y"))
        _ = watch.react(to: char("e"))
        _ = watch.react(to: char("r"))
        #expect(watch.model.dialog == .confirmReset && watch.model.page == .editor)
        #expect(sends(watch.react(to: char("Y"))) == [.resetStock])
    }

    // MARK: q, sizes, piped output

    @Test func qQuitsFromEveryState() {
        for setup in [[], ["1"], ["e"], ["r"], ["6"]] as [[Character]] {
            var watch = controller()
            for character in setup { _ = watch.react(to: char(character)) }
            #expect(watch.react(to: char("q")) == [.quit], "after \(setup)")
        }
    }

    @Test func everyFrameIsExactlyTheTerminalsSize() {
        for (width, height) in [(80, 24), (100, 40), (66, 17), (40, 20), (50, 30), (30, 10), (36, 19)] {
            for page in ["", "e", "1", "6", "r"] {
                var watch = controller(width: width, height: height)
                for character in page { _ = watch.react(to: char(character)) }
                let lines = watch.render(colour: .ansi256)
                #expect(lines.count == height)
                #expect(lines.map(visible).allSatisfy { $0.count == width }, "\(width)x\(height) \(page)")
            }
        }
        var narrow = controller(width: 40, height: 22)
        #expect(!narrow.layout.isWide && !narrow.layout.isTooSmall)
        #expect(screen(narrow).contains("[ 7 Mango-kiwi juice"))
        #expect(narrow.react(to: .resize(width: 30, height: 10)) == [.redraw])
        #expect(screen(narrow).contains("terminal too small"))
        // Without colour, no escape at all.
        #expect(!controller().render(colour: .none).joined().contains("\u{1B}"))
    }

    @Test func pipedOutputIsOneLinePerChange() {
        let before = stockSnapshot(stock())
        let after = stockSnapshot(stock([.mango: 7], made: [.mango: 1], recent: [.init(who: "ana", juice: .mango)]))
        #expect(StockController.transcriptLine(boardName: "bar", snapshot: before, previous: nil)
                == "bar v5: strawberry 10 banana 10 pineapple 10 kiwi 10 mango 10 | made 0")
        #expect(StockController.transcriptLine(boardName: "bar", snapshot: after, previous: before)
                == "bar v5: strawberry 10 banana 10 pineapple 10 kiwi 10 mango 7 | made 1 | ana Mango juice")
        #expect(StockController.transcriptLine(boardName: "bar", snapshot: after, previous: after) == nil)
    }

    @Test func stockShowPrintsATable() {
        let line = #"{"type":"state","board":"bar","kind":"stock","version":5,"clients":1,"names":["ana"],"stock":{"strawberry":10,"# +
                   #""banana":9,"pineapple":10,"kiwi":9,"mango":8},"can_make":{"strawberry":0,"banana":4,"kiwi":3,"pineapple":5,"# +
                   #""strawberry_banana":1,"mango":2,"mango_kiwi":4},"made":{"mango_kiwi":1},"recent":[{"who":"ana","# +
                   #""juice":"mango_kiwi"}]}"#
        let table = StockShowCommand.table(stateLine: line) ?? ""
        #expect(table.contains("banana           9"))
        #expect(table.contains("Mango-kiwi juice                 4     1"))
        #expect(table.contains("Strawberry juice                 0     0"))
        #expect(StockShowCommand.table(stateLine: "{}") == nil)
    }

    @Test func juiceAndFruitArguments() throws {
        #expect(try juiceArgument("mango_kiwi") == .mangoKiwi)
        #expect(try juiceArgument("Mango-Kiwi") == .mangoKiwi)
        #expect(try juiceArgument("Strawberry-banana juice") == .strawberryBanana)
        #expect(try juiceArgument("1") == .strawberry)
        #expect(throws: (any Error).self) { try juiceArgument("apple") }
        #expect(try fruitArgument("Kiwi") == .kiwi)
        #expect(throws: (any Error).self) { try fruitArgument("apple") }
    }
}
