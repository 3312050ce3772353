/// The letter board (docs/rules/letters.md): 26 tiles, up to six selected in an order
/// everyone sees numbered. The first `BoardKind`.
public enum LetterBoard: BoardKind {
    public static let name = "letters"
    /// B5: at most this many letters are selected.
    public static let capacity = 6

    /// B2: the selection order; each selection remembers the operation that
    /// made it, so a reset clears exactly the picks its sender saw (C5).
    public struct State: Equatable, Codable, Sendable {
        public var selections: [Selection]
        public init(selections: [Selection] = []) { self.selections = selections }

        /// The selection order: a letter's number is its index + 1.
        public var order: [Letter] { selections.map(\.letter) }

        /// The 1-based place of `letter`, or nil when it is not selected.
        public func place(of letter: Letter) -> Int? {
            selections.firstIndex { $0.letter == letter }.map { $0 + 1 }
        }
    }

    public struct Selection: Equatable, Codable, Sendable {
        public var letter: Letter
        public var selectedBy: OperationID
        public init(letter: Letter, selectedBy: OperationID) {
            self.letter = letter
            self.selectedBy = selectedBy
        }
    }

    /// What a person does (B4-B8).
    public enum Intent: Equatable, Sendable {
        case select(Letter)
        case deselect(Letter)
        /// Move a selected letter to `place` (1-based, B7).
        case move(Letter, to: Int)
        case reset
    }

    /// Which side of its anchor a moved letter was dropped on.
    public enum Side: String, Codable, Sendable { case before, after }

    /// An intent resolved against the sender's view.
    public enum Change: Equatable, Sendable {
        case select(Letter)
        case deselect(Letter)
        /// Dropped onto the place of `anchor`: it lands just `side` of it
        /// (C3). If the anchor is no longer selected, it lands at `place`,
        /// clamped to the order's length.
        case move(Letter, anchor: Letter, side: Side, place: Int)
        /// Clears the selections the sender saw, named by the operations that
        /// made them (at most six): a concurrent pick survives (C5).
        case reset(seen: [OperationID])
    }

    public static var initialState: State { State() }

    public static func prepare(_ intent: Intent, by author: String = "", in state: State) throws(BoardRefusal) -> Change? {
        switch intent {
        case let .select(letter):
            if state.place(of: letter) != nil { return nil }
            guard state.selections.count < capacity else { throw .boardFull }
            return .select(letter)
        case let .deselect(letter):
            return state.place(of: letter) == nil ? nil : .deselect(letter)
        case let .move(letter, place):
            guard let from = state.place(of: letter) else { throw .notSelected(letter) }
            let count = state.selections.count
            guard (1...count).contains(place) else { throw .placeOutOfRange(place, count: count) }
            if from == place { return nil }
            let anchor = state.selections[place - 1].letter
            return .move(letter, anchor: anchor, side: place > from ? .after : .before, place: place)
        case .reset:
            if state.selections.isEmpty { return nil }
            return .reset(seen: state.selections.map(\.selectedBy))
        }
    }

    public static func apply(_ operation: Operation<Change>, to state: inout State) -> Outcome<BoardRefusal> {
        let id = operation.id
        switch operation.change {
        case let .select(letter):
            if state.place(of: letter) != nil { return .unchanged }
            guard state.selections.count < capacity else { return .refused(.boardFull) }
            state.selections.append(Selection(letter: letter, selectedBy: id))
            return .applied
        case let .deselect(letter):
            guard let place = state.place(of: letter) else { return .unchanged }
            state.selections.remove(at: place - 1)
            return .applied
        case let .move(letter, anchor, side, place):
            // A concurrent deselect wins: the letter is gone, nothing to move (C3).
            guard let from = state.place(of: letter) else { return .unchanged }
            let before = state.selections
            let moving = state.selections.remove(at: from - 1)
            var target: Int
            if anchor != letter, let anchorPlace = state.place(of: anchor) {
                target = side == .after ? anchorPlace : anchorPlace - 1
            } else {
                target = min(max(place, 1), state.selections.count + 1) - 1
            }
            target = min(max(target, 0), state.selections.count)
            state.selections.insert(moving, at: target)
            return state.selections == before ? .unchanged : .applied
        case let .reset(seen):
            let before = state.selections.count
            state.selections.removeAll { seen.contains($0.selectedBy) }
            return state.selections.count == before ? .unchanged : .applied
        }
    }
}

/// Every refusal a person can meet on the letter board (B5, B10).
public enum BoardRefusal: KindRefusal, CustomStringConvertible {
    case boardFull
    case notSelected(Letter)
    case placeOutOfRange(Int, count: Int)

    /// Stable snake_case code for the wire (docs/PROTOCOL.md).
    public var code: String {
        switch self {
        case .boardFull: "board_full"
        case .notSelected: "not_selected"
        case .placeOutOfRange: "bad_place"
        }
    }

    public var message: String {
        switch self {
        case .boardFull:
            "at most 6 letters can be selected"
        case let .notSelected(letter):
            "\(letter) is not selected, so it cannot be moved; select it first"
        case let .placeOutOfRange(place, count) where count == 0:
            "place \(place) does not exist: no letters are selected"
        case let .placeOutOfRange(place, count):
            "place \(place) is outside 1...\(count), the places of the selected letters"
        }
    }

    public var description: String { message }
}
