/// A rectangle of terminal cells; `x` is the column and `y` the row, both
/// 0-based from the top-left of the screen.
struct Rect: Equatable, Sendable {
    var x: Int
    var y: Int
    var width: Int
    var height: Int

    var maxX: Int { x + width }
    var maxY: Int { y + height }

    func contains(x px: Int, y py: Int) -> Bool {
        px >= x && px < maxX && py >= y && py < maxY
    }

    /// True when some row of `self` lies inside `other`'s rows.
    func overlapsRows(of other: Rect) -> Bool {
        y < other.maxY && maxY > other.y
    }
}
