import BoardCRDT
import SyncWire

/// What the caller must do after a screen event.
enum ScreenAction<Intent: Equatable & Sendable>: Equatable, Sendable {
    /// Apply this intent to the local replica and send it to the hub.
    case send(Intent)
    /// The screen changed: render and write a new frame.
    case redraw
    /// Restore the terminal and exit.
    case quit
}

/// What a kind's screen reacts to; `WatchSession` turns the outside world
/// (the replica link, terminal bytes through `InputDecoder`, SIGWINCH, a
/// timer) into these.
enum ScreenEvent<Kind: WireKind>: Sendable {
    /// The link's news; `previous` is the snapshot before (nil the first time).
    case snapshot(LinkSnapshot<Kind>, previous: LinkSnapshot<Kind>?)
    case input(InputEvent)
    case resize(width: Int, height: Int)
    /// One animation step, about every 50 ms while `isAnimating` is true.
    case tick
    /// A picture named in `wantedPictures` arrived (or cannot be shown).
    case picture(name: String, PictureState)
}

/// The seam between `WatchSession` (link, terminal, input decoding, timer)
/// and one kind's screen: a pure state machine, events in, actions out, and
/// a frame out of `render`. Nothing here touches the terminal.
protocol KindScreen: Sendable {
    associatedtype Kind: WatchedKind

    /// `name` is the person's `--name` (nil: the hub picks `guest-N`).
    init(boardName: String, name: String?, width: Int, height: Int)

    /// True while something moves: keep sending `.tick`.
    var isAnimating: Bool { get }

    /// Handles one event; `.send` actions first, `.redraw` at most once, `.quit` last.
    mutating func react(to event: ScreenEvent<Kind>) -> [ScreenAction<Kind.Intent>]

    /// Exactly `height` lines of `width` visible columns.
    func render(colour: ColourMode) -> [String]

    /// The item this person edits now, sent to the hub as presence
    /// (`editing`) when it changes and after every reconnect; nil for kinds
    /// without it (the default).
    var editingItem: String? { get }

    /// With standard output not a terminal, the line to print for this
    /// snapshot (nil: nothing worth a line). The session drops repeats.
    static func transcriptLine(boardName: String, snapshot: LinkSnapshot<Kind>, previous: LinkSnapshot<Kind>?) -> String?

    /// The pictures this screen would show now, by file name below the
    /// board's path (`GET /KIND/NAME/images/FILE`); the session fetches each
    /// once and answers with `.picture`. Empty for kinds without pictures
    /// (the default) and without colour.
    func wantedPictures(colour: ColourMode) -> [String]
}

extension KindScreen {
    var editingItem: String? { nil }
    func wantedPictures(colour: ColourMode) -> [String] { [] }
}
