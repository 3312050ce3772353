import BoardCRDT
@testable import syncclient

/// Letters from a string such as "FAD", for short test setups.
func letters(_ text: String) -> [Letter] {
    text.compactMap { Letter(String($0)) }
}

func letter(_ character: Character) -> Letter {
    Letter(String(character)) ?? Letter.all[0]
}

/// A model with `order` selected and everything else default.
func model(order: String = "", name: String = "demo", view: ViewState = .shown) -> ScreenModel {
    var model = ScreenModel(boardName: name)
    model.order = letters(order)
    model.connection = .live
    model.clients = 3
    model.view = view
    return model
}

/// A line with its SGR sequences removed: what the person sees.
func visible(_ line: String) -> String {
    var result = ""
    var inEscape = false
    for character in line {
        if inEscape {
            if character.isLetter { inEscape = false }
        } else if character == "\u{1B}" {
            inEscape = true
        } else {
            result.append(character)
        }
    }
    return result
}

/// The character at column `x` of a plain line.
func column(_ line: String, _ x: Int) -> Character? {
    let characters = Array(visible(line))
    return x >= 0 && x < characters.count ? characters[x] : nil
}

/// Columns `x ..< x + count` of a plain line.
func columns(_ line: String, _ x: Int, _ count: Int) -> String {
    let characters = Array(visible(line))
    guard x >= 0, x < characters.count else { return "" }
    return String(characters[x..<min(x + count, characters.count)])
}

/// Feeds events to a controller and gathers every action.
extension WatchController {
    mutating func run(_ events: [WatchEvent]) -> [WatchAction] {
        events.flatMap { handle($0) }
    }

    mutating func click(x: Int, y: Int) -> [WatchAction] {
        run([.input(.mouse(MouseEvent(action: .press, button: .left, x: x, y: y))),
             .input(.mouse(MouseEvent(action: .release, button: .left, x: x, y: y)))])
    }

    mutating func key(_ character: Character) -> [WatchAction] {
        handle(.input(.key(.character(character))))
    }
}

/// The centre of a rectangle, where a test clicks.
extension Rect {
    var centre: (x: Int, y: Int) { (x + width / 2, y + height / 2) }
}
