import ArgumentParser
import BoardCRDT
import WebSocketLoop

extension LetterBoard: WatchedKind {
    typealias Bench = LettersBench

    static func watch(url: WebSocketURL, boardName: String, name: String?, interactive: Bool) {
        WatchSession<WatchController>(url: url, boardName: boardName, name: name, interactive: interactive).run()
    }

    static let watchKeys = """
        Letter boards (/\(pathSegment)/NAME): a letter A-Z toggles it; 1-6 moves the focused letter to that place; < and > (or \
        arrows left/right) move it one place; Tab moves the focus; - hides, + shows, ! resets; \
        ? toggles the key list; q (Shift-Q toggles Q), Esc, Ctrl-C or Ctrl-D quits. \
        Mouse: click a tile to toggle it, drag a letter in the top grid onto another cell to move it, \
        click Hide / Show / Reset, drag the action bar up or down.
        """
    static let sendExample = #"{"type":"select","letter":"C"}"#
    static let commands: [any ParsableCommand.Type] = [SelectCommand.self, DeselectCommand.self, MoveCommand.self, ResetCommand.self]
}

/// The letter board's screen in the shared session: the link's snapshots
/// become the controller's order, connection, clients and refusal events.
extension WatchController: KindScreen {
    typealias Kind = LetterBoard

    init(boardName: String, name: String?, width: Int, height: Int) {
        self.init(boardName: boardName, width: width, height: height)
    }

    mutating func react(to event: ScreenEvent<LetterBoard>) -> [WatchAction] {
        switch event {
        case let .snapshot(snapshot, previous):
            var actions: [WatchAction] = []
            if previous?.board.order != snapshot.board.order { actions += handle(.order(snapshot.board.order)) }
            if previous?.state != snapshot.state { actions += handle(.connection(snapshot.state)) }
            if previous?.clients != snapshot.clients { actions += handle(.clients(snapshot.clients)) }
            if let refusal = snapshot.refusal, previous?.refusal != refusal || previous?.refusals != snapshot.refusals {
                actions += handle(.refusal(refusal))
            }
            return actions
        case let .input(input):
            return handle(.input(input))
        case let .resize(width, height):
            return handle(.resize(width: width, height: height))
        case .tick:
            return handle(.tick)
        case .picture:
            return []  // the letter board shows no pictures
        }
    }

    /// One line per change of the order: `demo v7: 1:F 2:A`.
    static func transcriptLine(boardName: String, snapshot: LinkSnapshot<LetterBoard>, previous: LinkSnapshot<LetterBoard>?) -> String? {
        guard previous == nil || previous?.board.order != snapshot.board.order else { return nil }
        let order = snapshot.board.order
        return "\(boardName) v\(snapshot.version): "
            + (order.isEmpty ? "(empty)" : order.enumerated().map { "\($0.offset + 1):\($0.element)" }.joined(separator: " "))
    }
}
