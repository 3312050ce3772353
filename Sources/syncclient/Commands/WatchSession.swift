import BoardCRDT
import Foundation
import WebSocketLoop

/// `syncclient watch`: the replica link, the screen controller and the
/// terminal, all driven on the client loop's thread.
final class WatchSession: ClientDelegate, @unchecked Sendable {
    // Sendable: confined to the client loop's thread; other threads post to it.
    private let client = WebSocketClient(fdLimit: 64)
    private let link: ReplicaLink<LetterBoard>
    private let interactive: Bool
    private let terminal = Terminal()
    private var controller: WatchController
    private var decoder = InputDecoder()
    private let colour = ColourMode.detect(environment: ProcessInfo.processInfo.environment)
    private var lastSnapshot: LinkSnapshot<LetterBoard>?
    private var lastLine = ""
    private var needsRedraw = true
    private var lastTick: UInt64 = 0
    private var lastInput: UInt64 = 0

    init(url: WebSocketURL, boardName: String, name: String?, interactive: Bool) {
        link = ReplicaLink(client: client, url: url, name: name)
        self.interactive = interactive
        let size = Terminal.size()
        controller = WatchController(boardName: boardName, width: size.width, height: size.height)
    }

    func run() {
        client.delegate = self
        guard client.start() else {
            FileHandle.standardError.write(Data("cannot start the network loop\n".utf8))
            return
        }
        link.onChange = { [unowned self] snapshot in show(snapshot) }
        Terminal.watchSignals { [client, self] signal in
            client.post { [self] in
                if signal == SIGWINCH {
                    let size = Terminal.size()
                    apply(controller.handle(.resize(width: size.width, height: size.height)))
                } else {
                    quit()
                }
            }
        }
        if interactive {
            terminal.enter()
            Terminal.readInput { [client, self] bytes in
                client.post { [self] in
                    lastInput = WebSocketClient.nowNanos()
                    for event in decoder.feed(bytes) { apply(controller.handle(.input(event))) }
                }
            }
        }
        client.post { [self] in link.start() }
        client.run()
        terminal.restore()
    }

    private func quit() {
        link.close()
        client.stop()
    }

    private func apply(_ actions: [WatchAction]) {
        for action in actions {
            switch action {
            case let .send(intent): link.perform(intent)
            case .redraw: needsRedraw = true
            case .quit: quit()
            }
        }
    }

    /// Feeds the link's news to the screen (or, piped, prints the order).
    private func show(_ snapshot: LinkSnapshot<LetterBoard>) {
        defer { lastSnapshot = snapshot }
        guard interactive else {
            let line = "\(controller.model.boardName) v\(snapshot.version): "
                + (snapshot.board.order.isEmpty ? "(empty)" : snapshot.board.order.enumerated().map { "\($0.offset + 1):\($0.element)" }.joined(separator: " "))
            let orderChanged = lastSnapshot?.board.order != snapshot.board.order || lastSnapshot == nil
            if orderChanged, line != lastLine {
                lastLine = line
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
            }
            return
        }
        if lastSnapshot?.board.order != snapshot.board.order { apply(controller.handle(.order(snapshot.board.order))) }
        if lastSnapshot?.state != snapshot.state { apply(controller.handle(.connection(snapshot.state))) }
        if lastSnapshot?.clients != snapshot.clients { apply(controller.handle(.clients(snapshot.clients))) }
        if let refusal = snapshot.refusal, lastSnapshot?.refusal != refusal { apply(controller.handle(.refusal(refusal))) }
    }

    // MARK: ClientDelegate (forwarded to the link)

    func connected(_ connection: ClientConnection) { link.connected(connection) }
    func received(_ connection: ClientConnection, message: UnsafeRawBufferPointer, isText: Bool) {
        link.received(connection, message: message, isText: isText)
    }
    func disconnected(_ connection: ClientConnection, reason: String) { link.disconnected(connection, reason: reason) }

    func serviceLoopDidRun() {
        link.serviceLoopDidRun()
        guard interactive else { return }
        let now = WebSocketClient.nowNanos()
        if decoder.hasPendingInput, now - lastInput >= 50_000_000 {
            // A lone Esc: no sequence followed it.
            for event in decoder.flush() { apply(controller.handle(.input(event))) }
        }
        if controller.isAnimating, now - lastTick >= 50_000_000 {
            lastTick = now
            apply(controller.handle(.tick))
        }
        if needsRedraw {
            needsRedraw = false
            terminal.draw(controller.render(colour: colour))
        }
    }
}
