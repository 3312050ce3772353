import ArgumentParser
import BoardCRDT
import Foundation
import SyncWire
import WebSocketLoop

/// `syncclient stock ...`: one-shots on a juice bar (/stock/NAME,
/// docs/rules/stock.md). Exit 0 on ack, 1 when the hub refuses (its message
/// on standard error), 2 on a usage or connection error (K3, docs/rules/README.md).
struct StockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stock",
        abstract: "Make juices and edit the stock of a juice bar (ws://HOST:PORT/stock/NAME).",
        discussion: """
            One-shot commands: exit 0 once the hub acknowledged, 1 when it refused (its message on \
            standard error, e.g. "not enough fruit: strawberry 4 of 16"), 2 on a usage or connection error. \
            Juices: \(Juice.allCases.map(\.rawValue).joined(separator: ", ")). \
            Fruits: \(Fruit.allCases.map(\.rawValue).joined(separator: ", ")).
            """,
        subcommands: [StockMakeCommand.self, StockRestockCommand.self, StockSetCommand.self,
                      StockResetCommand.self, StockShowCommand.self])
}

/// A juice by its id (`mango_kiwi`), its id with a hyphen (`mango-kiwi`), its title or its menu number 1-7.
func juiceArgument(_ text: String) throws -> Juice {
    let key = text.lowercased().trimmingCharacters(in: .whitespaces)
    if let number = Int(key), (1...Juice.allCases.count).contains(number) { return Juice.allCases[number - 1] }
    let id = key.replacingOccurrences(of: "-", with: "_").replacingOccurrences(of: " juice", with: "")
    if let juice = Juice(rawValue: id) ?? Juice.allCases.first(where: { $0.title.lowercased() == key }) { return juice }
    throw ValidationError("JUICE must be one of \(Juice.allCases.map(\.rawValue).joined(separator: ", ")) (or 1-7), not \(text)")
}

func fruitArgument(_ text: String) throws -> Fruit {
    guard let fruit = Fruit(rawValue: text.lowercased()) else {
        throw ValidationError("FRUIT must be one of \(Fruit.allCases.map(\.rawValue).joined(separator: ", ")), not \(text)")
    }
    return fruit
}

/// Sends one stock intent; prints the ack's message, if any (ThinRequest).
private func runStock(_ board: BoardOptions, _ intent: FruitStock.Intent) throws {
    let url = try board.parsedURL(of: FruitStock.self)
    try runOneShot(url: url, members: FruitStock.intentMembers(intent), timeout: board.timeout)
}

struct StockMakeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "make",
        abstract: "Make JUICE: prints e.g. \"Mango juice is ready. Enjoy!\". Exit 1 if fruit is short (not_enough_fruit).")
    @OptionGroup var board: BoardOptions
    @Argument(help: "A juice: strawberry, banana, kiwi, pineapple, strawberry_banana, mango, mango_kiwi (or 1-7).") var juice: String
    func run() throws { try runStock(board, .make(try juiceArgument(juice))) }
}

struct StockRestockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restock",
        abstract: "Add BY (negative takes away) to FRUIT. Exit 1 if the count would leave 0...999 (out_of_range).",
        discussion: "Example: syncclient stock restock ws://127.0.0.1:8080/stock/bar kiwi -1")
    @OptionGroup var board: BoardOptions
    @Argument(help: "A fruit: strawberry, banana, pineapple, kiwi, mango.") var fruit: String
    // Collected this way so that a negative number is not read as an option.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("How many to add, e.g. 1 or -1.", valueName: "by")) var by: [String] = []

    func run() throws {
        let numbers = by.filter { $0 != "--" }
        guard numbers.count == 1, let amount = Int(numbers[0]) else {
            throw ValidationError("BY must be one whole number, e.g. 1 or -1, not " +
                                  "\(numbers.isEmpty ? "nothing" : numbers.joined(separator: " "))")
        }
        try runStock(board, .restock(try fruitArgument(fruit), by: amount))
    }
}

struct StockSetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Set FRUIT to TO if it is still FROM. Exit 1 if it changed meanwhile (stale) or TO is outside 0...999.")
    @OptionGroup var board: BoardOptions
    @Argument(help: "A fruit: strawberry, banana, pineapple, kiwi, mango.") var fruit: String
    @Argument(help: "The new count, 0...999.") var to: Int
    @Argument(help: "The count you saw (see `syncclient stock show`).") var from: Int
    func run() throws { try runStock(board, .setStock(try fruitArgument(fruit), to: to, from: from)) }
}

struct StockResetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset", abstract: "Put every fruit back to 10.")
    @OptionGroup var board: BoardOptions
    func run() throws { try runStock(board, .resetStock) }
}

struct StockShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Print the stock and how many of each juice can be made, as a table.")
    @OptionGroup var board: BoardOptions

    func run() throws {
        let url = try board.parsedURL(of: FruitStock.self)
        let outcome = ThinRequest(url: url, intentMembers: nil, timeoutSeconds: board.timeout).run()
        guard case let .done(line?) = outcome else {
            if case let .refused(message) = outcome, !message.isEmpty {
                FileHandle.standardError.write(Data((message + "\n").utf8))
            } else if case let .failed(message) = outcome {
                FileHandle.standardError.write(Data((message + "\n").utf8))
            }
            throw ExitCode(outcome.exitCode == 0 ? 2 : outcome.exitCode)
        }
        guard let text = Self.table(stateLine: line) else {
            FileHandle.standardError.write(Data("not a stock state: \(line.prefix(200))\n".utf8))
            throw ExitCode(2)
        }
        print(text, terminator: "")
    }

    /// The state frame as two small tables: fruits with counts, juices with can_make and made.
    static func table(stateLine: String) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(stateLine.utf8)) as? [String: Any],
              let stock = object["stock"] as? [String: Int], let canMake = object["can_make"] as? [String: Int] else { return nil }
        let made = object["made"] as? [String: Int] ?? [:]
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
        func right(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
        var out = ""
        let board = object["board"] as? String ?? "?"
        let version = object["version"] as? Int ?? 0
        out += "juice bar \(board), version \(version)\n\n"
        out += pad("fruit", 12) + right("count", 6) + "\n"
        for fruit in Fruit.allCases {
            out += pad(fruit.rawValue, 12) + right(stock[fruit.rawValue].map(String.init) ?? "?", 6) + "\n"
        }
        out += "\n" + pad("juice", 25) + right("can make", 9) + right("made", 6) + "\n"
        for juice in Juice.allCases {
            out += pad(juice.title, 25) + right(canMake[juice.rawValue].map(String.init) ?? "?", 9)
                + right(String(made[juice.rawValue] ?? 0), 6) + "\n"
        }
        return out
    }
}
