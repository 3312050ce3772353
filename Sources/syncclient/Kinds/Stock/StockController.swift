import BoardCRDT
import SyncWire

typealias StockAction = ScreenAction<FruitStock.Intent>

/// The juice bar's screens as a state machine (JV1-JV5): the link's
/// snapshots, keys, clicks and resizes in; intents to send, redraws and quit
/// out. No I/O: tests drive it without a terminal.
///
/// The link applies a make at once (the counts drop), and the screen says
/// "Making mango juice…"; "<Juice> is ready. Enjoy!" comes only when the
/// hub acknowledged the make with its final outcome applied (the link's
/// `settled`), so nobody is told "ready" of a juice that is then taken
/// back. If the total order refuses it (JC2), the counts come back and
/// "your mango juice was refused: not enough fruit: mango 1 of 3" turns
/// the message into JV3's question.
struct StockController: Sendable {
    var model: StockScreenModel
    private(set) var width: Int
    private(set) var height: Int
    /// An intent was just sent: the next snapshot's refusal is its answer
    /// even when it reads like the one before.
    private var justSent = false

    init(boardName: String, name: String?, width: Int, height: Int) {
        model = StockScreenModel(boardName: boardName, me: name)
        self.width = width
        self.height = height
    }

    var isAnimating: Bool { false }

    var layout: StockLayout { StockLayout(width: width, height: height) }

    func render(colour: ColourMode) -> [String] {
        StockScreen.render(model, layout: layout, colour: colour)
    }

    mutating func react(to event: ScreenEvent<FruitStock>) -> [StockAction] {
        let before = model
        var actions: [StockAction] = []
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
            actions.append(.redraw)
        case .picture:
            break  // this kind shows no pictures
        case .tick:
            break
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

    private mutating func update(_ snapshot: LinkSnapshot<FruitStock>, previous: LinkSnapshot<FruitStock>?) {
        model.connection = snapshot.state
        model.clients = snapshot.clients
        model.names = snapshot.names
        model.version = snapshot.version
        model.stock = snapshot.board
        if let refusal = snapshot.refusal, refusal != previous?.refusal || justSent {
            show(refusal: refusal)
        }
        justSent = false
        for settled in snapshot.settled {
            guard case let .make(juice) = settled.change else { continue }
            switch settled.outcome {
            case .applied?:
                // JV2 only now: the hub acknowledged it as made, for good.
                if model.dialog == .making(juice) { open(.ready(juice)) }
            case let .refused(refusal)?:
                // JC2: shown as on its way, refused in the hub's order.
                let detail = FruitStock.summary(of: settled.change) + " was refused: " + refusal.message
                model.refusal = detail
                if model.page == .order, model.dialog != .confirmReset { open(.notEnough(juice, detail: detail)) }
            case .unchanged?, nil:
                // Folded into a checkpoint before its answer: the outcome
                // is not known here; say so rather than guess.
                if model.dialog == .making(juice) {
                    model.dialog = nil
                    model.refusal = "\(juice.title): sent; see the recent makes"
                }
            }
        }
    }

    /// A refusal from the link: a make the total order took back (JC2)
    /// becomes JV3's question; anything else goes on the message row.
    private mutating func show(refusal: String) {
        guard let (juice, detail) = Self.takenBack(refusal) else {
            model.refusal = refusal
            return
        }
        model.refusal = detail
        model.shownMade.removeAll { $0 == juice }
        if model.page == .order, model.dialog != .confirmReset {
            open(.notEnough(juice, detail: detail))
        }
    }

    /// A make the total order took back, and the words for it:
    /// "not enough fruit: your mango juice was refused: not enough fruit: mango 1 of 3"
    /// -> (.mango, "your mango juice was refused: not enough fruit: mango 1 of 3").
    /// Only makes are refused `not_enough_fruit` (J3); the juice is the one
    /// named, else the one the shortfall fits (each fruit's amount is used
    /// by one juice only), so a link that says "your change" is read too.
    static func takenBack(_ refusal: String) -> (Juice, String)? {
        let marker = " was refused: "
        guard let split = refusal.range(of: marker), refusal[..<split.lowerBound].contains("your ") else { return nil }
        let reason = String(refusal[split.upperBound...])
        guard reason.hasPrefix("not enough fruit: ") else { return nil }
        let named = Juice.allCases.first { juice in
            refusal[..<split.lowerBound].hasSuffix(FruitStock.summary(of: .make(juice)))
        }
        guard let juice = named ?? juice(short: reason) else { return nil }
        return (juice, FruitStock.summary(of: .make(juice)) + marker + reason)
    }

    /// The juice whose use matches the first "FRUIT HAVE of NEED" of J3's message.
    static func juice(short reason: String) -> Juice? {
        let words = reason.dropFirst("not enough fruit: ".count).split(whereSeparator: { $0 == " " || $0 == "," })
        guard words.count >= 4, let fruit = Fruit(rawValue: String(words[0])), words[2] == "of",
              let need = Int(words[3]) else { return nil }
        return Juice.allCases.first { juice in juice.uses.contains { $0.fruit == fruit && $0.count == need } }
    }

    // MARK: Keys (JV5)

    mutating func handle(key: Key) -> [StockAction] {
        switch key {
        case .character("q"), .character("Q"), .control("c"), .control("d"):
            return [.quit]
        default:
            break
        }
        if let dialog = model.dialog { return handle(key: key, in: dialog) }
        switch model.page {
        case .order: return handleOrder(key: key)
        case .editor: return handleEditor(key: key)
        }
    }

    private mutating func handle(key: Key, in dialog: StockDialog) -> [StockAction] {
        let count = dialog.buttons.count
        switch key {
        case .left, .right, .tab, .backTab, .up, .down:
            model.dialogChoice = (model.dialogChoice + 1) % count
        case .enter, .character(" "):
            return press(dialogButton: model.dialogChoice)
        case .character("y"), .character("Y"):
            return press(dialogButton: 0)
        case .character("n"), .character("N"), .escape:
            return press(dialogButton: count - 1)
        case .character("o"), .character("O"):
            if case .ready = dialog { return press(dialogButton: 0) }
            if case .making = dialog { return press(dialogButton: 0) }
        default:
            break
        }
        return []
    }

    private mutating func handleOrder(key: Key) -> [StockAction] {
        let ring = OrderItem.all.count
        switch key {
        case .escape:
            return [.quit]
        case let .character(character) where character.isASCII && character.isNumber:
            let number = Int(String(character)) ?? 0
            guard (1...Juice.allCases.count).contains(number) else { return [] }
            model.orderFocus = number - 1
            return make(Juice.allCases[number - 1])
        case .enter, .character(" "):
            return press(model.focusedOrderItem)
        case .right, .down, .tab, .character("j"), .character("l"):
            model.orderFocus = (model.orderFocus + 1) % ring
        case .left, .up, .backTab, .character("k"), .character("h"):
            model.orderFocus = (model.orderFocus + ring - 1) % ring
        case .home:
            model.orderFocus = 0
        case .end:
            model.orderFocus = ring - 1
        case .character("e"), .character("E"), .character("a"), .character("A"):
            openEditor(focus: .plus(.strawberry))
        case .character("r"), .character("R"):
            open(.confirmReset)
        default:
            break
        }
        return []
    }

    /// The editor's focus ring: each fruit's - and +, then Close.
    static let editorRing: [EditorItem] = Fruit.allCases.flatMap { [EditorItem.minus($0), .plus($0)] } + [.close]

    private mutating func handleEditor(key: Key) -> [StockAction] {
        let ring = Self.editorRing
        let index = ring.firstIndex(of: model.editorFocus) ?? 0
        switch key {
        case .escape, .character("c"), .character("C"):
            closeEditor()
        case .tab:
            model.editorFocus = ring[(index + 1) % ring.count]
        case .backTab:
            model.editorFocus = ring[(index + ring.count - 1) % ring.count]
        case .down, .character("j"):
            model.editorFocus = moveRow(by: 1)
        case .up, .character("k"):
            model.editorFocus = moveRow(by: -1)
        case .left, .character("h"):
            if let fruit = model.editorFocus.fruit { model.editorFocus = .minus(fruit) }
        case .right, .character("l"):
            if let fruit = model.editorFocus.fruit { model.editorFocus = .plus(fruit) }
        case .character("-"), .character("_"):
            if let fruit = model.editorFocus.fruit { return step(fruit, by: -1) }
        case .character("+"), .character("="):
            if let fruit = model.editorFocus.fruit { return step(fruit, by: 1) }
        case .enter, .character(" "):
            return press(model.editorFocus)
        case .character("r"), .character("R"):
            open(.confirmReset)
        default:
            break
        }
        return []
    }

    /// Up or down one row of the editor (the fruits, then Close), keeping the side.
    private func moveRow(by step: Int) -> EditorItem {
        let fruits = Fruit.allCases
        let rows = fruits.count + 1
        let row = model.editorFocus.fruit.flatMap { fruits.firstIndex(of: $0) } ?? fruits.count
        let target = (row + step + rows) % rows
        guard target < fruits.count else { return .close }
        if case .minus = model.editorFocus { return .minus(fruits[target]) }
        return .plus(fruits[target])
    }

    // MARK: Mouse (JV5)

    mutating func handle(mouse: MouseEvent) -> [StockAction] {
        guard mouse.action == .press, mouse.button == .left else { return [] }
        switch layout.hit(x: mouse.x, y: mouse.y, page: model.page, dialog: model.dialog) {
        case let .dialog(index)?:
            return press(dialogButton: index)
        case let .order(item)?:
            if let index = OrderItem.all.firstIndex(of: item) { model.orderFocus = index }
            return press(item)
        case let .editor(item)?:
            model.editorFocus = item
            return press(item)
        case nil:
            return []
        }
    }

    // MARK: Buttons and intents

    mutating func press(_ item: OrderItem) -> [StockAction] {
        switch item {
        case let .juice(juice): return make(juice)
        case .editStock: openEditor(focus: .plus(.strawberry))
        case .resetStock: open(.confirmReset)
        }
        return []
    }

    mutating func press(_ item: EditorItem) -> [StockAction] {
        switch item {
        case let .minus(fruit): return step(fruit, by: -1)
        case let .plus(fruit): return step(fruit, by: 1)
        case .close: closeEditor()
        }
        return []
    }

    mutating func press(dialogButton index: Int) -> [StockAction] {
        guard let dialog = model.dialog else { return [] }
        model.dialog = nil
        model.dialogChoice = 0
        switch (dialog, index) {
        case let (.notEnough(juice, _), 0):
            // JV3 Yes: the editor, on the first fruit the juice lacks.
            let short = model.stock.shortfall(for: juice).first?.fruit ?? juice.uses[0].fruit
            openEditor(focus: .plus(short))
        case (.confirmReset, 0):
            model.refusal = nil
            return [.send(.resetStock)]
        default:
            break       // OK, No: the message goes.
        }
        return []
    }

    /// J3 on this replica first: a juice the stock covers is sent and shown
    /// as on its way, then as ready (JV2) once the hub acknowledged it; one
    /// it does not cover is not sent, and JV3 asks.
    mutating func make(_ juice: Juice) -> [StockAction] {
        model.refusal = nil
        let short = model.stock.shortfall(for: juice)
        guard short.isEmpty else {
            open(.notEnough(juice, detail: StockRefusal.notEnoughFruit(juice, short).message))
            return []
        }
        model.shownMade.append(juice)
        if model.shownMade.count > FruitStock.recentKept { model.shownMade.removeFirst() }
        open(.making(juice))
        return [.send(.make(juice))]
    }

    /// J4 from the stepper: +1 or -1, never below 0 (not sent at all) nor above 999.
    mutating func step(_ fruit: Fruit, by step: Int) -> [StockAction] {
        guard model.canStep(fruit, by: step) else { return [] }
        model.refusal = nil
        return [.send(.restock(fruit, by: step))]
    }

    private mutating func open(_ dialog: StockDialog) {
        model.dialog = dialog
        // A reset is undone by nobody: the keyboard starts on No.
        model.dialogChoice = dialog == .confirmReset ? 1 : 0
    }

    private mutating func openEditor(focus: EditorItem) {
        model.page = .editor
        model.editorFocus = focus
    }

    private mutating func closeEditor() {
        model.page = .order
    }
}
