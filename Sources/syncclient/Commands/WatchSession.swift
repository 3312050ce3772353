import BoardCRDT
import Foundation
import WebSocketLoop

/// `syncclient watch`: the replica link, a kind's screen and the terminal,
/// all driven on the client loop's thread. The same session serves every
/// kind; `Screen` is the kind's pure state machine (`KindScreen`).
final class WatchSession<Screen: KindScreen>: ClientDelegate, @unchecked Sendable {
    // Sendable: confined to the thread of `run`, which runs `client`'s loop (others post to it): checked by `client.owner` (debug builds).
    private let client: WebSocketClient
    private let link: any WatchLink<Screen.Kind>
    private let boardName: String
    private let interactive: Bool
    private let terminal = Terminal()
    private var screen: Screen
    private var decoder = InputDecoder()
    private let colour = ColourMode.detect(environment: ProcessInfo.processInfo.environment)
    private var lastSnapshot: LinkSnapshot<Screen.Kind>?
    private var lastLine = ""
    private var needsRedraw = true
    private var lastTick: UInt64 = 0
    private var lastInput: UInt64 = 0
    /// Presence: the item the hub was last told this person edits (it
    /// forgets on disconnect).
    private var announcedEditing: String?
    /// Pictures (a shop's): fetched and decoded off this thread, each once.
    private let pictures: PictureFetcher
    private var pictureRequests = PictureRequests()
    private var lastPictureCheck: UInt64 = 0

    /// `access`: the token and TLS trust (by default the command's, `HubAccess.chosen`).
    init(url: WebSocketURL, boardName: String, name: String?, interactive: Bool,
         access: HubAccess = HubAccess.chosen.withLock { $0 }) {
        client = WebSocketClient(fdLimit: 64, tls: access.tls)
        // The hub's console tells a wall screen from other clients (O4).
        var said = url
        said.path += (url.path.contains("?") ? "&" : "?") + "client=watch"
        // A kind that takes no replica clients (a shop) is followed as the pages follow it.
        link = Screen.Kind.takesReplicaClients ? ReplicaLink(client: client, url: said, name: name, access: access)
                                               : ThinLink(client: client, url: said, name: name, access: access)
        self.boardName = boardName
        self.interactive = interactive
        pictures = PictureFetcher(url: url, tls: access.tls)
        let size = Terminal.size()
        screen = Screen(boardName: boardName, name: name, width: size.width, height: size.height)
    }

    func run() {
        client.delegate = self
        guard client.start() else {
            FileHandle.standardError.write(Data("cannot start the network loop\n".utf8))
            return
        }
        link.onChange = { [unowned self] snapshot in show(snapshot) }
        link.onDenied = { [unowned self] _ in
            // Piped, nothing is left to print: end. On a terminal the status
            // bar says "Not allowed: ..." until the person quits.
            if !interactive { quit() }
        }
        Terminal.watchSignals { [client, self] signal in
            client.post { [self] in
                if signal == SIGWINCH {
                    let size = Terminal.size()
                    apply(screen.react(to: .resize(width: size.width, height: size.height)))
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
                    for event in decoder.feed(bytes) { apply(screen.react(to: .input(event))) }
                }
            }
        }
        client.post { [self] in link.start() }
        client.run()
        terminal.restore()
        if let denial = link.denial {
            FileHandle.standardError.write(Data("\(link.url): \(denial.message)\n".utf8))
            exit(2)
        }
    }

    private func quit() {
        client.owner.check()
        pictures.close()
        link.close()
        client.stop()
    }

    private func apply(_ actions: [ScreenAction<Screen.Kind.Intent>]) {
        client.owner.check()
        for action in actions {
            switch action {
            case let .send(intent): link.perform(intent)
            case .redraw: needsRedraw = true
            case .quit: quit()
            }
        }
        announceEditing()
        fetchPictures()
    }

    /// Asks the hub for the pictures the screen wants and has not got; each
    /// answer comes back to this thread as a `.picture` event.
    private func fetchPictures() {
        client.owner.check()
        guard interactive else { return }
        let now = WebSocketClient.nowNanos()
        lastPictureCheck = now
        let due = pictureRequests.toFetch(wanted: screen.wantedPictures(colour: colour), now: now)
        var told: [ScreenAction<Screen.Kind.Intent>] = []
        for name in due.refused {
            told += screen.react(to: .picture(name: name, .failed("too many pictures in one session (\(PictureRequests.limit))")))
        }
        if !told.isEmpty { apply(told) }
        for name in due.fetch {
            pictures.fetch(name) { [client, self] state, retry in
                client.post { [self] in
                    pictureRequests.finished(name, retry: retry, now: WebSocketClient.nowNanos())
                    apply(screen.react(to: .picture(name: name, state)))
                }
            }
        }
    }

    /// Kinds with presence: tells the hub when the edited item changed.
    private func announceEditing() {
        let item = screen.editingItem
        guard item != announcedEditing, link.sendEditing(item) else { return }
        announcedEditing = item
    }

    /// Feeds the link's news to the screen (or, piped, prints a line).
    private func show(_ snapshot: LinkSnapshot<Screen.Kind>) {
        client.owner.check()
        let previous = lastSnapshot
        lastSnapshot = snapshot
        if snapshot.state != .live { announcedEditing = nil }
        guard interactive else {
            if let line = Screen.transcriptLine(boardName: boardName, snapshot: snapshot, previous: previous), line != lastLine {
                lastLine = line
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
            }
            return
        }
        apply(screen.react(to: .snapshot(snapshot, previous: previous)))
    }

    // MARK: ClientDelegate (forwarded to the link)

    // The link checks `client.owner` itself.
    func connected(_ connection: ClientConnection) { link.connected(connection) }
    func received(_ connection: ClientConnection, message: UnsafeRawBufferPointer, isText: Bool) {
        link.received(connection, message: message, isText: isText)
    }
    func disconnected(_ connection: ClientConnection, reason: String) { link.disconnected(connection, reason: reason) }

    func serviceLoopDidRun() {
        client.owner.check()
        link.serviceLoopDidRun()
        guard interactive else { return }
        let now = WebSocketClient.nowNanos()
        if decoder.hasPendingInput, now - lastInput >= 50_000_000 {
            // A lone Esc: no sequence followed it.
            for event in decoder.flush() { apply(screen.react(to: .input(event))) }
        }
        if screen.isAnimating, now - lastTick >= 50_000_000 {
            lastTick = now
            apply(screen.react(to: .tick))
        }
        // A picture the hub could not give may be asked for again.
        // (`now` was read before this turn's input, which may have checked since.)
        if now > lastPictureCheck, now - lastPictureCheck >= 1_000_000_000 { fetchPictures() }
        if needsRedraw {
            needsRedraw = false
            terminal.draw(screen.render(colour: colour))
        }
    }
}
