extension LetterBoard {
    /// B2: 0 to 6 distinct letters A-Z, numbered 1...n by their place.
    public static func violations(of state: State) -> [String] {
        let selections = state.selections
        var problems: [String] = []
        if selections.count > LetterBoard.capacity { problems.append("\(selections.count) letters selected, more than 6") }
        var seen: UInt32 = 0
        for (index, selection) in selections.enumerated() {
            let letter = selection.letter
            if letter.index >= 26 {
                problems.append("tile \(letter.index) is not A-Z")
                continue
            }
            if seen & (1 << letter.index) != 0 { problems.append("\(letter) is selected twice: \(state.order)") }
            seen |= 1 << letter.index
            for other in selections[..<index] where other.selectedBy == selection.selectedBy {
                problems.append("\(other.letter) and \(letter) were selected by the same operation")
            }
        }
        // Numbers are places: 1...n with no gap, by construction of an array;
        // checked through the public accessor the hub uses.
        if let last = selections.last, state.place(of: last.letter) != selections.count {
            problems.append("\(last.letter) is not numbered \(selections.count)")
        }
        return problems
    }
}
