/// This viewer's own view of the board (V1-V4): how far the top grid and the
/// status bar have slid out of view. Never shared with anyone else.
///
/// `offset` is the fraction of the way to "all hidden": 0 shows everything,
/// 1 has the action bar at the top. Hide, Show, Reset and the end of an
/// action-bar drag set a resting `target`; animation ticks walk `offset`
/// towards it, so all four end in the same two states (V4).
struct ViewState: Equatable, Sendable {
    /// The two states a view comes to rest in.
    enum Resting: Equatable, Sendable {
        case shown
        case hidden

        var offset: Double { self == .shown ? 0 : 1 }
    }

    /// 0 ... 1: how far the screen is scrolled towards `hidden`.
    private(set) var offset: Double
    /// Where the view settles once animation (or the drag) ends.
    private(set) var target: Resting
    /// True while the pointer holds the action bar: the offset follows the
    /// pointer, not the clock.
    private(set) var isDragging: Bool

    /// How much of the way one animation tick covers (the lead ticks about
    /// every 60 ms, so a full hide takes about a quarter of a second).
    static let tickStep = 0.25

    init(offset: Double = 0, target: Resting = .shown, isDragging: Bool = false) {
        self.offset = min(max(offset, 0), 1)
        self.target = target
        self.isDragging = isDragging
    }

    static let shown = ViewState()
    static let hidden = ViewState(offset: 1, target: .hidden)

    /// True while ticks still have work to do.
    var isAnimating: Bool { !isDragging && offset != target.offset }

    /// The state the view is in or heading to, ignoring an ongoing drag.
    var isHiddenOrHiding: Bool { target == .hidden }

    /// Starts the animation towards `resting` (Hide, Show, Reset).
    mutating func animate(to resting: Resting) {
        isDragging = false
        target = resting
    }

    /// Jumps straight to `resting`, for terminals that do not animate.
    mutating func jump(to resting: Resting) {
        isDragging = false
        target = resting
        offset = resting.offset
    }

    /// The pointer holds the action bar and puts the view at `newOffset`,
    /// clamped between all shown and all hidden (V4).
    mutating func drag(to newOffset: Double) {
        isDragging = true
        offset = min(max(newOffset, 0), 1)
    }

    /// The pointer let go: settle in the nearer resting state (V4).
    mutating func endDrag() {
        isDragging = false
        target = offset >= 0.5 ? .hidden : .shown
    }

    /// One animation tick. Returns true when the offset changed.
    @discardableResult
    mutating func tick() -> Bool {
        guard isAnimating else { return false }
        let goal = target.offset
        if abs(goal - offset) <= Self.tickStep {
            offset = goal
        } else {
            offset += goal > offset ? Self.tickStep : -Self.tickStep
        }
        return true
    }
}
