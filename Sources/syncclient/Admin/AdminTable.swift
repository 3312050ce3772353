/// Rows of text in columns, each as wide as its widest cell, two spaces
/// apart, counts right-aligned: what `syncclient admin` prints for a person
/// (`--json` is for scripts). Every cell is made printable first
/// (`HubWords`): names, subs and addresses come from the hub.
struct AdminTable {
    enum Alignment {
        case left
        case right
    }

    struct Column {
        var title: String
        var alignment: Alignment = .left
    }

    let columns: [Column]
    private(set) var rows: [[String]] = []

    init(_ columns: [Column]) {
        self.columns = columns
    }

    /// Adds a row: one cell per column (missing ones are blank).
    mutating func add(_ cells: [String]) {
        rows.append(columns.indices.map { $0 < cells.count ? HubWords.printable(cells[$0]) : "" })
    }

    /// The title line and a line per row, without trailing blanks.
    var lines: [String] {
        let all = [columns.map(\.title)] + rows
        // Terminal columns, not characters: Hangul takes two (`Canvas`).
        let widths = columns.indices.map { column in all.map { Canvas.columns(of: $0[column]) }.max() ?? 0 }
        return all.map { cells in
            var line = ""
            for (index, cell) in cells.enumerated() {
                let pad = String(repeating: " ", count: widths[index] - Canvas.columns(of: cell))
                if index > 0 { line += "  " }
                line += columns[index].alignment == .right ? pad + cell : cell + pad
            }
            while line.last == " " { line.removeLast() }
            return line
        }
    }
}
