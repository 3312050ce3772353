import BoardCRDT
import SyncWire

typealias ShopAction = ScreenAction<BanchanShop.Intent>

/// The shop in a terminal (docs/rules/shop.md PV8) as a state machine: the
/// link's snapshots, keys, clicks and resizes in; intents, redraws and quit
/// out. No I/O: tests drive it without a terminal.
///
/// The list shows the three sections and their dishes; Up/Down (j/k) move,
/// Enter on a header shows how many dishes it has, Enter on a dish opens its
/// detail; there + and - set the quantity, o orders it at the price shown
/// (the hub refuses a price that changed meanwhile and says the new one),
/// Esc or Backspace goes back to the list where it was; q quits.
///
/// With colour and room, pictures are drawn in half-block characters: the
/// focused dish's first picture beside the list, and in the detail a pager
/// over the dish's pictures and detail pictures (`[` and `]`, or a click on
/// the picture). Without colour (`NO_COLOR`) the screen says how many
/// pictures there are instead.
struct ShopController: Sendable {
    enum Row: Equatable, Sendable {
        case section(ShopSection)
        case dish(String)
    }

    enum Page: Equatable, Sendable {
        case list
        case detail(String)
    }

    let boardName: String
    let me: String?
    private(set) var width: Int
    private(set) var height: Int
    var shop = BanchanShop.State()
    var version: UInt64 = 0
    var connection: ConnectionState = .connecting
    var clients = 0
    var page = Page.list
    /// The row the cursor is on in the list, and the first row shown.
    var cursor = 0
    var top = 0
    var quantity = 1
    /// The dish an order was sent from: its answer returns that detail to the list (PV5).
    var orderedFrom: String?
    /// The status line: what happened last (an answer, a refusal, a count).
    var message: String?
    var messageIsRefusal = false
    /// Pictures by file name, as the session delivered them.
    var pictures: [String: PictureState] = [:]
    /// The detail's pager: which of the dish's pictures is shown.
    var pictureIndex = 0

    init(boardName: String, name: String?, width: Int, height: Int) {
        self.boardName = boardName
        me = name
        self.width = width
        self.height = height
    }

    /// The list's rows: each section's header, then its dishes (P1).
    var rows: [Row] {
        ShopSection.allCases.flatMap { section in [Row.section(section)] + shop.dishes(in: section).map { .dish($0.id) } }
    }

    var isAnimating: Bool { false }

    mutating func react(to event: ScreenEvent<BanchanShop>) -> [ShopAction] {
        let actions = handle(event)
        scrollToCursor(visibleRows: visibleRows)
        return actions
    }

    /// List rows on screen: between the title bar and the status line.
    var visibleRows: Int { max(1, height - ShopScreen.listTop - 1) }

    private mutating func handle(_ event: ScreenEvent<BanchanShop>) -> [ShopAction] {
        switch event {
        case let .snapshot(snapshot, previous):
            let focused = rows.indices.contains(cursor) ? rows[cursor] : nil
            shop = snapshot.board
            version = snapshot.version
            connection = snapshot.state
            clients = snapshot.clients
            if let answer = snapshot.answers.last {
                message = answer
                messageIsRefusal = false
                // PV5: success returns to the list, from the dish the order was made on.
                if let from = orderedFrom, page == .detail(from) { page = .list }
                orderedFrom = nil
            }
            if let refusal = snapshot.refusal, snapshot.refusals != previous?.refusals {
                message = refusal
                messageIsRefusal = true
            }
            // The cursor stays on its row (a dish removed above it does not move it to another).
            if let focused, let index = rows.firstIndex(of: focused) { cursor = index }
            cursor = min(cursor, max(0, rows.count - 1))
            return [.redraw]
        case let .input(.key(key)):
            return handle(key)
        case let .input(.mouse(mouse)):
            return handle(mouse)
        case let .resize(newWidth, newHeight):
            width = newWidth
            height = newHeight
            return [.redraw]
        case .tick:
            return []
        case let .picture(name, state):
            pictures[name] = state
            return [.redraw]
        }
    }

    /// The focused dish in the list (nil on a section header).
    var focusedDish: Dish? {
        guard rows.indices.contains(cursor), case let .dish(id) = rows[cursor] else { return nil }
        return shop.dish(id)
    }

    /// Every picture of a dish, in the page's order: its images, then its detail images.
    static func pictureNames(of dish: Dish) -> [String] { dish.images + dish.detailImages }

    /// The picture the detail's pager shows, if any.
    var shownPicture: String? {
        guard case let .detail(id) = page, let dish = shop.dish(id) else { return nil }
        let names = Self.pictureNames(of: dish)
        return names.isEmpty ? nil : names[min(pictureIndex, names.count - 1)]
    }

    /// What the screen shows now and could show next: beside the list, the
    /// first picture of every dish on screen; in the detail, all the dish's.
    func wantedPictures(colour: ColourMode) -> [String] {
        guard colour != .none else { return [] }
        switch page {
        case .list:
            guard ShopScreen.previewPane(width: width, height: height) != nil else { return [] }
            let shown = rows[min(top, rows.count)..<min(rows.count, top + visibleRows)]
            var names: [String] = []
            if let first = focusedDish?.images.first { names.append(first) }
            for case let .dish(id) in shown { if let first = shop.dish(id)?.images.first { names.append(first) } }
            return names
        case let .detail(id):
            guard ShopScreen.detailPicture(width: width, height: height) != nil, let dish = shop.dish(id) else { return [] }
            return Self.pictureNames(of: dish)
        }
    }

    private mutating func handle(_ key: Key) -> [ShopAction] {
        switch key {
        case .character("q"), .control("c"), .control("d"): return [.quit]
        default: break
        }
        switch page {
        case .list: return handleList(key)
        case let .detail(id): return handleDetail(key, id)
        }
    }

    private mutating func handleList(_ key: Key) -> [ShopAction] {
        let count = rows.count
        guard count > 0 else { return [] }
        switch key {
        case .down, .character("j"), .tab: cursor = min(count - 1, cursor + 1)
        case .up, .character("k"), .backTab: cursor = max(0, cursor - 1)
        case .home: cursor = 0
        case .end: cursor = count - 1
        case .pageDown: cursor = min(count - 1, cursor + max(1, height - 4))
        case .pageUp: cursor = max(0, cursor - max(1, height - 4))
        case .enter, .character(" "): return open(rows[cursor])
        case .escape: return [.quit]
        default: return []
        }
        return [.redraw]
    }

    /// Enter on a row: a header's count (PV1's toast), a dish's detail (PV4).
    private mutating func open(_ row: Row) -> [ShopAction] {
        switch row {
        case let .section(section):
            message = "\(section.title): \(shop.dishes(in: section).count) items"
            messageIsRefusal = false
        case let .dish(id):
            page = .detail(id)
            quantity = 1
            pictureIndex = 0
            message = nil
        }
        return [.redraw]
    }

    private mutating func handleDetail(_ key: Key, _ id: String) -> [ShopAction] {
        switch key {
        case .escape, .backspace, .left, .character("b"):
            page = .list
            return [.redraw]
        case .character("+"), .character("="), .up, .right:
            quantity = min(BanchanShop.quantityRange.upperBound, quantity + 1)
        case .character("-"), .down:
            quantity = max(1, quantity - 1)
        case .character("]"), .character("["):
            let count = shop.dish(id).map { Self.pictureNames(of: $0).count } ?? 0
            guard count > 1 else { return [] }
            pictureIndex = (min(pictureIndex, count - 1) + (key == .character("]") ? 1 : count - 1)) % count
        case .character("o"):
            guard let dish = shop.dish(id), dish.available, dish.stock > 0 else {
                message = shop.dish(id) == nil ? "this dish was taken off the shop" : "this dish cannot be ordered now"
                messageIsRefusal = true
                return [.redraw]
            }
            message = "ordering \(quantity) x \(dish.title)..."
            orderedFrom = id
            messageIsRefusal = false
            return [.send(.order([OrderLine(dish: id, quantity: quantity, price: dish.price)])), .redraw]
        default:
            return []
        }
        return [.redraw]
    }

    private mutating func handle(_ mouse: MouseEvent) -> [ShopAction] {
        guard mouse.action == .press else { return [] }
        switch mouse.button {
        case .wheelDown where page == .list: return handleList(.down)
        case .wheelUp where page == .list: return handleList(.up)
        case .left:
            if case let .detail(id) = page {
                if mouse.y == 0 { return handleDetail(.escape, id) }
                // A click on the picture turns the pager.
                if let area = ShopScreen.detailPicture(width: width, height: height), area.contains(x: mouse.x, y: mouse.y) {
                    return handleDetail(.character("]"), id)
                }
                return []
            }
            let index = top + mouse.y - ShopScreen.listTop
            guard mouse.y >= ShopScreen.listTop, mouse.y < ShopScreen.listTop + visibleRows, index >= 0, index < rows.count else {
                return []
            }
            cursor = index
            return open(rows[index])
        default: return []
        }
    }

    /// Keeps the cursor's row on screen.
    mutating func scrollToCursor(visibleRows: Int) {
        if cursor < top { top = cursor }
        if cursor >= top + visibleRows { top = cursor - visibleRows + 1 }
        top = max(0, min(top, max(0, rows.count - visibleRows)))
    }

    func render(colour: ColourMode) -> [String] {
        ShopScreen.render(self, colour: colour)
    }
}
