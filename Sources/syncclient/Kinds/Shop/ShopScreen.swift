import BoardCRDT

/// Draws the shop (PV8): a title bar, then the list (section headers, dish
/// rows with price, the struck original price, badges and stock) or one
/// dish's detail, and a status line. Without colour (`NO_COLOR`), a struck
/// price reads "(was 15,900원)" and pictures are counted, not drawn.
enum ShopScreen {
    /// The list's first row on screen.
    static let listTop = 1

    /// Beside the list, where the focused dish's picture goes: on screens at
    /// least 72 x 12, the right two fifths (at most 40 columns).
    static func previewPane(width: Int, height: Int) -> Rect? {
        guard width >= 72, height >= 12 else { return nil }
        let paneWidth = min(40, width * 2 / 5)
        return Rect(x: width - paneWidth, y: listTop, width: paneWidth, height: height - listTop - 1)
    }

    /// The detail's picture, under the title bar: on screens at least 30 x 22,
    /// up to 12 rows (24 pixels) high.
    static func detailPicture(width: Int, height: Int) -> Rect? {
        guard width >= 30, height >= 22 else { return nil }
        return Rect(x: 1, y: 2, width: width - 2, height: min(12, height - 17))
    }

    static func won(_ number: Int) -> String {
        var out = ""
        for (index, digit) in String(number).reversed().enumerated() {
            if index > 0, index % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return String(out.reversed()) + "원"
    }

    static func render(_ c: ShopController, colour: ColourMode) -> [String] {
        var canvas = Canvas(width: c.width, height: c.height)
        let header = " 반찬가게 \(c.boardName) · v\(c.version) · \(c.connection.label) · \(c.clients) here"
        canvas.fill(Rect(x: 0, y: 0, width: c.width, height: 1), style: .statusBar)
        canvas.write(header, x: 0, y: 0, style: .statusBar)
        switch c.page {
        case .list: drawList(c, on: &canvas, colour: colour)
        case let .detail(id): drawDetail(c, id: id, on: &canvas, colour: colour)
        }
        let help = c.page == .list ? "Up/Down move · Enter open / count · q quit"
            : "+/- quantity · o order · [ ] pictures · Esc back · q quit"
        let status = c.message.map { " \($0)" } ?? " \(help)"
        canvas.fill(Rect(x: 0, y: c.height - 1, width: c.width, height: 1), style: c.messageIsRefusal ? .refusal : .statusBar)
        canvas.write(status, x: 0, y: c.height - 1, style: c.messageIsRefusal ? .refusal : .statusBar)
        return canvas.lines(colour: colour)
    }

    private static func drawList(_ c: ShopController, on canvas: inout Canvas, colour: ColourMode) {
        let pane = colour == .none ? nil : previewPane(width: c.width, height: c.height)
        let listWidth = pane.map { $0.x - 1 } ?? c.width
        if let pane { drawPreview(c, in: pane, on: &canvas, colour: colour) }
        let rows = c.rows
        let visible = max(0, c.height - listTop - 1)
        for line in 0..<visible {
            let index = c.top + line
            guard index < rows.count else { break }
            let y = listTop + line
            let focused = index == c.cursor
            switch rows[index] {
            case let .section(section):
                let text = "\(focused ? "▶" : " ")\(section.title) · \(section.subtitle) (\(c.shop.dishes(in: section).count))"
                canvas.write(text, x: 0, y: y, style: .focus, limit: listWidth)
            case let .dish(id):
                guard let dish = c.shop.dish(id) else { continue }
                drawDishLine(dish, focused: focused, y: y, on: &canvas, colour: colour, width: listWidth)
            }
        }
    }

    private static func drawDishLine(_ dish: Dish, focused: Bool, y: Int, on canvas: inout Canvas, colour: ColourMode, width: Int) {
        var x = 0
        func put(_ text: String, _ style: Style) {
            guard x < width else { return }
            canvas.write(text, x: x, y: y, style: style)
            x += min(Canvas.columns(of: text), width - x)
        }
        put(focused ? " ▶ " : "   ", focused ? .cursor : .plain)
        put(dish.title, dish.available ? .plain : .help)
        put("  ", .plain)
        put(won(dish.price), .price)
        if let original = dish.originalPrice {
            put(" ", .plain)
            put(colour == .none ? "(was \(won(original)))" : won(original), .struck)
        }
        for badge in dish.badges { put(" [\(badge)]", .badge) }
        let stock = !dish.available ? "  판매 중지" : dish.stock == 0 ? "  품절" : dish.stock <= 3 ? "  \(dish.stock)개 남음" : "  재고 \(dish.stock)"
        put(stock, dish.stock == 0 || !dish.available ? .soldOut : .help)
    }

    /// The focused dish's first picture, its title under it; a line between pane and list.
    private static func drawPreview(_ c: ShopController, in pane: Rect, on canvas: inout Canvas, colour: ColourMode) {
        for y in pane.y..<pane.maxY { canvas.put("│", x: pane.x - 1, y: y, style: .outline) }
        guard let dish = c.focusedDish else { return }
        let area = Rect(x: pane.x + 1, y: pane.y + 1, width: pane.width - 2, height: max(1, min(pane.height - 3, (pane.width - 2) / 2)))
        drawPicture(dish.images.first.map { c.pictures[$0] } ?? .some(.failed("no picture")), in: area, on: &canvas, colour: colour)
        canvas.write(dish.title, x: pane.x + 1, y: area.maxY + 1, style: .focus, limit: pane.width - 2)
    }

    /// A picture, or while it comes "...", or why it cannot be shown.
    private static func drawPicture(_ state: PictureState?, in area: Rect, on canvas: inout Canvas, colour: ColourMode) {
        switch state {
        case let .ready(thumbnail)?:
            canvas.draw(thumbnail, in: area, colour: colour)
        case let .failed(reason)?:
            canvas.write(reason, x: area.x, y: area.y + area.height / 2, style: .help, limit: area.width)
        case nil:
            canvas.write("...", x: area.x + area.width / 2 - 1, y: area.y + area.height / 2, style: .help)
        }
    }

    private static func drawDetail(_ c: ShopController, id: String, on canvas: inout Canvas, colour: ColourMode) {
        guard let dish = c.shop.dish(id) else {
            canvas.write(" 이 반찬은 가게에서 내려갔습니다 (removed). Esc: back to the list", x: 0, y: 2, style: .refusal)
            return
        }
        var y = 2
        let names = ShopController.pictureNames(of: dish)
        let area = colour == .none || names.isEmpty ? nil : detailPicture(width: c.width, height: c.height)
        if let area, let shown = c.shownPicture {
            drawPicture(c.pictures[shown], in: area, on: &canvas, colour: colour)
            let index = names.firstIndex(of: shown) ?? 0
            let caption = names.count > 1 ? "사진 \(index + 1)/\(names.count) · [ ] 넘기기" : "사진 1/1"
            canvas.write(caption, x: max(0, (c.width - Canvas.columns(of: caption)) / 2), y: area.maxY, style: .help)
            y = area.maxY + 1
        }
        canvas.write(" \(dish.title)", x: 0, y: y, style: .focus)
        y += 1
        if !dish.badges.isEmpty {
            canvas.write(" " + dish.badges.map { "[\($0)]" }.joined(separator: " "), x: 0, y: y, style: .badge)
            y += 1
        }
        // What follows the description needs 6 rows down to the status line (8 with
        // the line counting pictures): keep them on screen, cutting the description.
        for line in wrap(dish.description, width: max(10, c.width - 2)).prefix(max(0, c.height - (area == nil ? 8 : 6) - y)) {
            canvas.write(" " + line, x: 0, y: y, style: .plain)
            y += 1
        }
        y += 1
        var x = 1
        canvas.write(won(dish.price), x: x, y: y, style: .price)
        x += Canvas.columns(of: won(dish.price)) + 1
        if let original = dish.originalPrice {
            canvas.write(colour == .none ? "(was \(won(original)))" : won(original), x: x, y: y, style: .struck)
        }
        y += 1
        let stock = !dish.available ? "판매 중지 (off sale)" : dish.stock == 0 ? "품절 (sold out)" : "재고 \(dish.stock)"
        canvas.write(" " + stock, x: 0, y: y, style: dish.stock == 0 || !dish.available ? .soldOut : .help)
        y += 2
        let orderable = dish.available && dish.stock > 0
        canvas.write(" 수량 \(c.quantity)  [-] [+]   [o] \(won(dish.price * c.quantity)) 주문하기", x: 0, y: y,
                     style: orderable ? .actionBar : .disabledButton)
        guard area == nil else { return }
        y += 2
        let pictures = names.count
        canvas.write(" \(pictures) picture\(pictures == 1 ? "" : "s") (shown on the page: /shop/\(c.boardName))", x: 0, y: y, style: .help)
    }

    /// Words of `text` in lines of at most `width` columns.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(whereSeparator: \.isWhitespace) {
            let candidate = line.isEmpty ? String(word) : line + " " + word
            if Canvas.columns(of: candidate) > width, !line.isEmpty {
                lines.append(line)
                line = String(word)
            } else {
                line = candidate
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
