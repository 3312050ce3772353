import BoardCRDT

/// Which of the two screens (JV1, JV4) is showing.
enum StockPage: Equatable, Sendable {
    /// The order screen: fruit counts and one button per juice (JV1).
    case order
    /// The stock editor, titled "Add stock" (JV4).
    case editor
}

/// A message box over either page, answered before anything else.
enum StockDialog: Equatable, Sendable {
    /// The make is on its way: the counts already dropped here, but "ready"
    /// is said only once the hub acknowledged it as made (an acknowledged
    /// make is final, docs/SEMANTICS.md §7c), so it is never taken back.
    case making(Juice)
    /// JV2: "<Juice> is ready. Enjoy!" with [ OK ].
    case ready(Juice)
    /// JV3: "Not enough fruit. Edit the stock?" with [ Yes ] and [ No ];
    /// `detail` says what was short, or that the total order took the make back (JC2).
    case notEnough(Juice, detail: String)
    /// `r`: every fruit back to 10 (J9), only after [ Yes ].
    case confirmReset

    static let okTitle = "[ OK ]"
    static let yesTitle = "[ Yes ]"
    static let noTitle = "[ No ]"
    static let notEnoughText = "Not enough fruit. Edit the stock?"

    /// The lines of text the box shows, first the main one.
    var lines: [String] {
        switch self {
        case let .making(juice): ["Making \(juice.title.lowercased())..."]
        case let .ready(juice): [Self.readyText(juice)]
        case let .notEnough(_, detail): [Self.notEnoughText, detail]
        case .confirmReset: ["Reset the stock?", "Every fruit goes back to \(FruitStock.startingCount)."]
        }
    }

    /// The buttons, left to right.
    var buttons: [String] {
        switch self {
        case .making, .ready: [Self.okTitle]
        case .notEnough, .confirmReset: [Self.yesTitle, Self.noTitle]
        }
    }

    /// JV2's message, the same words the hub's ack carries (J3).
    static func readyText(_ juice: Juice) -> String { "\(juice.title) is ready. Enjoy!" }
}

/// A focusable thing on the order screen: a juice button, or one of the two buttons below them.
enum OrderItem: Equatable, Sendable {
    case juice(Juice)
    case editStock
    case resetStock

    /// The keyboard's ring, top to bottom.
    static let all: [OrderItem] = Juice.allCases.map { .juice($0) } + [.editStock, .resetStock]
}

/// A focusable thing in the stock editor: a fruit's - or + stepper, or Close.
enum EditorItem: Equatable, Sendable {
    case minus(Fruit)
    case plus(Fruit)
    case close

    var fruit: Fruit? {
        switch self {
        case let .minus(fruit), let .plus(fruit): fruit
        case .close: nil
        }
    }
}

/// Everything `StockScreen` needs to draw one frame: the shared stock from
/// the replica plus what only this viewer sees (page, focus, a message box,
/// the latest refusal).
struct StockScreenModel: Equatable, Sendable {
    var boardName: String
    /// The person's `--name`; nil acts as the hub's `guest-N`.
    var me: String?
    var connection: ConnectionState = .connecting
    var clients: Int?
    var names: [String] = []
    var version: UInt64 = 0
    var stock: FruitStock.State = FruitStock.initialState
    var page: StockPage = .order
    /// Index into `OrderItem.all`.
    var orderFocus = 0
    var editorFocus: EditorItem = .plus(.strawberry)
    var dialog: StockDialog?
    /// The dialog button the keyboard is on (index into `dialog.buttons`).
    var dialogChoice = 0
    /// The latest refusal of this person's intent, until they act again.
    var refusal: String?
    /// Own makes shown as made whose taking back (JC2) would be news.
    var shownMade: [Juice] = []

    init(boardName: String, me: String? = nil) {
        self.boardName = boardName
        self.me = me
    }

    var focusedOrderItem: OrderItem { OrderItem.all[min(max(orderFocus, 0), OrderItem.all.count - 1)] }

    /// J4 from the editor's side: `-` at 0 and `+` at 999 do nothing (JV4).
    func canStep(_ fruit: Fruit, by step: Int) -> Bool {
        FruitStock.counts.contains(stock.count(of: fruit) + step)
    }
}
