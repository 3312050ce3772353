import ArgumentParser
import BoardCRDT
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import SyncWire
import WebSocketLoop

/// `syncclient shop ...`: one-shots on a banchan shop (/shop/NAME,
/// docs/rules/shop.md). Exit 0 on ack (the ack's JSON line on standard
/// output), 1 when the hub refuses (its message on standard error), 2 on a
/// usage or connection error (K3, docs/rules/README.md).
struct ShopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shop",
        abstract: "Order from and edit a banchan shop (ws://HOST:PORT/shop/NAME).",
        discussion: """
            One-shot commands: exit 0 once the hub acknowledged (the ack as one JSON line), 1 when it refused \
            (its message on standard error, e.g. "line 1: only 2 left"), 2 on a usage or connection error. \
            Prices and stocks come from the shop as it is when the command runs: an order names the price \
            shown then, an edit the values it replaces (a change in between is refused, not overwritten).
            """,
        subcommands: [ShopListCommand.self, ShopOrderCommand.self, ShopAddCommand.self, ShopEditCommand.self,
                      ShopRemoveCommand.self, ShopRestockCommand.self, ShopSetStockCommand.self, ShopImageCommand.self])
}

/// The shop's URL (`/shop/NAME`), with the access flags resolved.
private func shopURL(_ board: BoardOptions) throws -> WebSocketURL {
    guard let url = WebSocketURL(board.url), url.path.hasPrefix("/shop/"), url.path.split(separator: "/").count == 2 else {
        throw ValidationError("URL must look like ws://HOST:PORT/shop/NAME (or wss://...); not \(board.url)")
    }
    let resolved = try board.access.resolve(for: url)
    HubAccess.chosen.withLock { $0 = resolved }
    return url
}

/// The shop's state now (one connection, read and closed), or exit 2.
private func shopState(_ board: BoardOptions) throws -> (url: WebSocketURL, state: [String: Any]) {
    let url = try shopURL(board)
    let outcome = ThinRequest(url: url, intentMembers: nil, timeoutSeconds: board.timeout).run()
    guard case let .done(line?) = outcome,
          let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], object["sections"] is [Any] else {
        if case let .failed(message) = outcome { FileHandle.standardError.write(Data((message + "\n").utf8)) }
        if case let .refused(message) = outcome { FileHandle.standardError.write(Data((message + "\n").utf8)) }
        throw ExitCode(2)
    }
    return (url, object)
}

private func dishes(in state: [String: Any]) -> [[String: Any]] {
    (state["sections"] as? [[String: Any]] ?? []).flatMap { section in
        (section["dishes"] as? [[String: Any]] ?? []).map { var dish = $0; dish["section"] = section["id"]; return dish }
    }
}

private func findDish(_ id: String, in state: [String: Any]) throws -> [String: Any] {
    guard let found = dishes(in: state).first(where: { $0["id"] as? String == id }) else {
        FileHandle.standardError.write(Data("there is no dish \"\(id)\" in this shop (see syncclient shop list)\n".utf8))
        throw ExitCode(1)
    }
    return found
}

/// Sends one shop intent; prints the ack's JSON line.
private func runShop(_ url: WebSocketURL, _ board: BoardOptions, _ intent: BanchanShop.Intent) throws {
    let outcome = ThinRequest(url: url, intentMembers: BanchanShop.intentMembers(intent), timeoutSeconds: board.timeout,
                              printsWholeAck: true).run()
    switch outcome {
    case let .done(line): if let line { print(line) }
    case let .refused(message), let .failed(message): FileHandle.standardError.write(Data((HubWords.printable(message) + "\n").utf8))
    }
    if outcome.exitCode != 0 { throw ExitCode(outcome.exitCode) }
}

struct ShopListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "Print the catalog: each section's dishes with price, stock and badges (--json: the state).")
    @OptionGroup var board: BoardOptions
    @Flag(help: "Print the state message as one JSON line.") var json = false

    func run() throws {
        let (_, state) = try shopState(board)
        if json {
            print(String(decoding: try JSONSerialization.data(withJSONObject: state, options: [.sortedKeys]), as: UTF8.self))
            return
        }
        print(Self.table(state), terminator: "")
    }

    static func table(_ state: [String: Any]) -> String {
        func won(_ value: Any?) -> String {
            guard let number = value as? Int else { return "" }
            let digits = String(number)
            var out = ""
            for (index, character) in digits.reversed().enumerated() {
                if index > 0, index % 3 == 0 { out.append(",") }
                out.append(character)
            }
            return String(out.reversed()) + "원"
        }
        var out = "shop \(state["board"] as? String ?? "?"), version \(state["version"] as? Int ?? 0)\n"
        for section in state["sections"] as? [[String: Any]] ?? [] {
            out += "\n\(section["title"] as? String ?? "") (\(section["id"] as? String ?? "")) — \(section["subtitle"] as? String ?? "")\n"
            for dish in section["dishes"] as? [[String: Any]] ?? [] {
                let stock = dish["stock"] as? Int ?? 0
                let available = dish["available"] as? Bool ?? true
                var line = "  \(dish["id"] as? String ?? "")  \(dish["title"] as? String ?? "")  \(won(dish["price"]))"
                if let original = dish["original_price"] as? Int { line += " (was \(won(original)))" }
                line += !available ? "  off sale" : stock == 0 ? "  sold out (품절)" : "  \(stock) in stock"
                if let badges = dish["badges"] as? [String], !badges.isEmpty { line += "  [" + badges.joined(separator: "] [") + "]" }
                out += line + "\n"
            }
        }
        return out
    }
}

struct ShopOrderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "order",
        abstract: "Order DISH[xQUANTITY]... at the prices shown now; all or nothing. Exit 1 if refused (sold_out, not_enough_stock, " +
                  "unavailable, price_changed).",
        discussion: "Example: syncclient shop order ws://127.0.0.1:8080/shop/demo galbijjim x2 jeyuk")
    @OptionGroup var board: BoardOptions
    @Argument(help: "Dishes by id, each optionally followed by xN (or :N) for a quantity, e.g. galbijjim x2 or galbijjim:2.")
    var items: [String]

    func run() throws {
        var wanted: [(String, Int)] = []
        for item in items {
            if item.hasPrefix("x"), let count = Int(item.dropFirst()), !wanted.isEmpty {
                wanted[wanted.count - 1].1 = count
            } else if let colon = item.firstIndex(of: ":"), let count = Int(item[item.index(after: colon)...]) {
                wanted.append((String(item[..<colon]), count))
            } else {
                wanted.append((item, 1))
            }
        }
        guard !wanted.isEmpty else { throw ValidationError("name at least one dish") }
        let (url, state) = try shopState(board)
        var lines: [OrderLine] = []
        for (id, quantity) in wanted {
            let found = try findDish(id, in: state)
            lines.append(OrderLine(dish: id, quantity: quantity, price: found["price"] as? Int ?? 0))
        }
        try runShop(url, board, .order(lines))
    }
}

struct ShopAddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add a dish to SECTION (main, soup or side). Prints the ack with the dish's id. Admin only (A13).")
    @OptionGroup var board: BoardOptions
    @Argument(help: "main, soup or side.") var section: String
    @Argument(help: "The dish's title.") var title: String
    @Argument(help: "Its price in won.") var price: Int
    @Option(help: "Its id (default: the hub makes one).") var id: String?
    @Option(help: "Its stock.") var stock = 0
    @Option(help: "Its description.") var description = ""
    @Option(help: "The price before a discount.") var originalPrice: Int?
    @Option(help: "A badge (repeat for more).") var badge: [String] = []
    @Option(help: "The name of a stored image for its thumbnail (and first picture).") var thumb: String?

    func run() throws {
        guard let section = ShopSection(rawValue: section) else {
            throw ValidationError("SECTION must be main, soup or side, not \(self.section)")
        }
        let url = try shopURL(board)
        let dish = Dish(id: id ?? "", section: section, title: title, description: description, price: price, originalPrice: originalPrice,
                        badges: badge, thumb: thumb, images: thumb.map { [$0] } ?? [], stock: stock)
        try runShop(url, board, .addDish(dish, idGiven: id != nil))
    }
}

struct ShopEditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract: "Set FIELD=VALUE of DISH over the values it has now (a change in between is refused stale). Admin only.",
        discussion: """
            Fields: title, description, price, original_price (a number or null), badges (comma-separated), \
            thumb (an image name or null), images and detail_images (comma-separated), stock, available (true/false), \
            section. Example: syncclient shop edit ws://127.0.0.1:8080/shop/demo jeyuk price=9900 badges=베스트,신메뉴
            """)
    @OptionGroup var board: BoardOptions
    @Argument(help: "The dish's id.") var dish: String
    @Argument(help: "FIELD=VALUE, one or more.") var assignments: [String]

    func run() throws {
        var set: [String: Any] = [:]
        for assignment in assignments {
            guard let equals = assignment.firstIndex(of: "="), let field = DishField(rawValue: String(assignment[..<equals])) else {
                throw ValidationError("write FIELD=VALUE with a field of \(DishField.allCases.map(\.rawValue).joined(separator: ", ")), " +
                                      "not \(assignment)")
            }
            set[field.rawValue] = try Self.value(String(assignment[assignment.index(after: equals)...]), for: field)
        }
        let (url, state) = try shopState(board)
        let current = try ShopEditCommand.currentDish(dish, in: state)
        var from: [String: Any] = [:]
        for field in set.keys { from[field] = current[field] ?? NSNull() }
        let frame = try JSONSerialization.data(withJSONObject: ["set": set, "from": from], options: [.sortedKeys])
        guard let fields = try? JSONDecoder().decode(EditFields.self, from: frame) else {
            throw ValidationError("a value has the wrong type for its field")
        }
        try runShop(url, board, .editDish(dish, set: fields.set.list, from: fields.from.list))
    }

    private struct EditFields: Decodable {
        var set: FieldValues
        var from: FieldValues
    }

    static func currentDish(_ id: String, in state: [String: Any]) throws -> [String: Any] { try findDish(id, in: state) }

    static func value(_ text: String, for field: DishField) throws -> Any {
        switch field {
        case .price, .stock:
            guard let number = Int(text) else { throw ValidationError("\(field.rawValue) must be a whole number, not \(text)") }
            return number
        case .originalPrice:
            if text == "null" || text.isEmpty { return NSNull() }
            guard let number = Int(text) else { throw ValidationError("original_price must be a whole number or null, not \(text)") }
            return number
        case .thumb: return text == "null" || text.isEmpty ? NSNull() : text
        case .available:
            guard let flag = Bool(text) else { throw ValidationError("available must be true or false, not \(text)") }
            return flag
        case .badges, .images, .detailImages:
            return text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        case .title, .description, .section: return text
        }
    }
}

struct ShopRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Take DISH out of the catalog. Admin only.")
    @OptionGroup var board: BoardOptions
    @Argument(help: "The dish's id.") var dish: String
    func run() throws { try runShop(try shopURL(board), board, .removeDish(dish)) }
}

struct ShopRestockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restock",
        abstract: "Add BY (negative takes away) to DISH's stock. Exit 1 outside 0...9999 (out_of_range). Admin only.")
    @OptionGroup var board: BoardOptions
    @Argument(help: "The dish's id.") var dish: String
    // Collected this way so that a negative number is not read as an option.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("How many to add, e.g. 5 or -2.", valueName: "by")) var by: [String] = []

    func run() throws {
        let numbers = by.filter { $0 != "--" }
        guard numbers.count == 1, let amount = Int(numbers[0]) else {
            throw ValidationError("BY must be one whole number, e.g. 5 or -2, not " +
                                  "\(numbers.isEmpty ? "nothing" : numbers.joined(separator: " "))")
        }
        try runShop(try shopURL(board), board, .restock(dish, by: amount))
    }
}

struct ShopSetStockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-stock",
        abstract: "Set DISH's stock to TO if it is still what it is now (or --from). Exit 1 if it changed (stale). Admin only.")
    @OptionGroup var board: BoardOptions
    @Argument(help: "The dish's id.") var dish: String
    @Argument(help: "The new stock, 0...9999.") var to: Int
    @Option(help: "The stock you saw (default: read from the shop now).") var from: Int?

    func run() throws {
        if let from { return try runShop(try shopURL(board), board, .setStock(dish, to: to, from: from)) }
        let (url, state) = try shopState(board)
        let seen = try ShopEditCommand.currentDish(dish, in: state)["stock"] as? Int ?? 0
        try runShop(url, board, .setStock(dish, to: to, from: seen))
    }
}

struct ShopImageCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "image", abstract: "Store images in a shop.", subcommands: [ShopImagePutCommand.self])
}

struct ShopImagePutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "put",
        abstract: "Store FILE in the shop (PUT /shop/NAME/images/NAME, at most 1 MiB): prints the hub's answer. Admin only.",
        discussion: """
            Exit 0 when stored (201) or already stored with the same bytes (200); 1 when the hub refuses \
            (409 the name holds other bytes, 415 the bytes are not of the name's type, 413 too large, 400 a bad name, \
            401/403 not an admin); 2 when the hub cannot be reached. Uses the system's trusted CAs for https.
            """)
    @OptionGroup var board: BoardOptions
    @Argument(help: "The image file: .png, .jpg, .webp or .svg.") var file: String
    @Option(help: "The name to store it under (default: the file's name, lowercased).") var name: String?

    func run() throws {
        let url = try shopURL(board)
        let imageName = name ?? URL(fileURLWithPath: file).lastPathComponent.lowercased()
        guard BanchanShop.isImageName(imageName) else {
            throw ValidationError("the image's name must be 1 to 64 of a-z, 0-9, ., _ and -, ending in .png, .jpg, .webp or .svg: " +
                                  "\(imageName)")
        }
        guard let bytes = FileManager.default.contents(atPath: file) else { throw ValidationError("cannot read \(file)") }
        let scheme = url.description.hasPrefix("wss://") ? "https" : "http"
        guard let target = URL(string: "\(scheme)://\(url.host):\(url.port)\(url.path)/images/\(imageName)") else {
            throw ValidationError("cannot make an address of \(url)")
        }
        var request = URLRequest(url: target, timeoutInterval: board.timeout)
        request.httpMethod = "PUT"
        request.httpBody = bytes
        if let token = HubAccess.chosen.withLock({ $0.token }) { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let answer = ImageUpload.send(request)
        switch answer {
        case let .answered(status, body):
            if (200...299).contains(status) {
                print(body)
            } else {
                FileHandle.standardError.write(Data("\(status): \(body)\n".utf8))
                throw ExitCode(1)
            }
        case let .failed(message):
            FileHandle.standardError.write(Data("cannot reach \(target): \(message)\n".utf8))
            throw ExitCode(2)
        }
    }
}

/// One HTTP request, waited for.
enum ImageUpload {
    enum Answer: Sendable {
        case answered(Int, String)
        case failed(String)
    }

    static func send(_ request: URLRequest) -> Answer {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Answer>(.failed("no answer"))
        URLSession.shared.dataTask(with: request) { data, response, error in
            if let response = response as? HTTPURLResponse {
                result.withLock { $0 = .answered(response.statusCode, String(decoding: data ?? Data(), as: UTF8.self)) }
            } else {
                result.withLock { $0 = .failed(error.map { "\($0.localizedDescription)" } ?? "no answer") }
            }
            done.signal()
        }.resume()
        done.wait()
        return result.withLock { $0 }
    }
}
