import BoardCRDT
import SyncWire

/// The letter board: six letters selected by each board's first client, then moved about.
enum LettersBench: BenchDriver {
    typealias Kind = LetterBoard

    static let optionHelp = "moves"
    static var discussion: String {
        """
        letter boards (/\(Kind.pathSegment)/PREFIX-N, the default): each board's first client selects A-F, \
        then the senders move random letters among places 1-6 (drag-and-drop load); at the end every client \
        of every board must show the same order.
        """
    }
    static let joins = false
    static let readsOrder = true
    static let countsRefusals = false
    static let drivesBroadcaster = true

    static func begin(_ worker: BenchWorker<Self>, board peer: BenchWorker<Self>.Peer, at start: UInt64) {
        guard !worker.plan.raw else { return }
        for letter in ["A", "B", "C", "D", "E", "F"] { worker.send(.select(Letter(letter)!), from: peer, at: start) }
    }

    static func send(_ worker: BenchWorker<Self>, from peer: BenchWorker<Self>.Peer, at now: UInt64, inWindow: Bool) -> Bool {
        // A closed connection sends nothing (and must not keep `refill` looping).
        guard peer.connection?.isOpen == true else { return false }
        let letter = Letter(index: Int.random(in: 0..<6))!
        worker.send(.move(letter, to: Int.random(in: 1...6)), from: peer, at: now)
        return true
    }
}

extension BenchWorker where Driver == LettersBench {
    /// Sends a letter intent, or with `--raw` a timed message to the broadcaster.
    func send(_ intent: LetterBoard.Intent, from peer: Peer, at now: UInt64) {
        guard let connection = peer.connection, connection.isOpen else { return }
        let ref = track(from: peer, at: now)
        let frame = plan.raw ? Self.rawFrame(ref: ref, now: now, bytes: plan.rawBytes)
                             : ClientMessage<LetterBoard>.thinFrame(intent, ref: String(ref))
        client.send(frame, on: connection)
    }
}
