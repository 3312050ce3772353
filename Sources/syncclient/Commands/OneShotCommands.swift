import ArgumentParser
import BoardCRDT
import Foundation
import SyncWire
import WebSocketLoop

/// Options every command that talks to one board shares.
struct BoardOptions: ParsableArguments {
    @Argument(help: ArgumentHelp(urlHelp)) var url: String
    private static let urlHelp = "The board, as \(WatchedKinds.urls) (wss:// for a hub with TLS)"

    @OptionGroup var access: AccessOptions

    @Option(help: "Seconds to wait for the hub before giving up (exit 2).")
    var timeout: Double = 5

    func validate() throws {
        guard timeout > 0, timeout <= 86_400 else {
            throw ValidationError("--timeout must be more than 0 and at most 86400 seconds, not \(timeout)")
        }
    }

    /// The URL and the kind its path names. Also resolves the access flags
    /// for this hub into `HubAccess.chosen`, which every connection of the
    /// command then uses (one hub, one identity per process).
    func parsedURL() throws -> (url: WebSocketURL, kind: any WatchedKind.Type) {
        guard let parsed = WebSocketURL(url), let kind = WatchedKinds.kind(ofPath: parsed.path) else {
            let paths = WatchedKinds.all.map { "ws://HOST:PORT/\($0.pathSegment)/NAME" }.joined(separator: ", ")
            throw ValidationError("URL must look like \(paths) (or wss://...); not \(url)")
        }
        let resolved = try access.resolve(for: parsed)
        HubAccess.chosen.withLock { $0 = resolved }
        return (parsed, kind)
    }

    /// The URL, which must name a board of `kind`.
    func parsedURL<Kind: WireKind>(of kind: Kind.Type) throws -> WebSocketURL {
        let (parsed, found) = try parsedURL()
        guard found.name == Kind.name else {
            throw ValidationError("this command plays the \(Kind.name) board (ws://HOST:PORT/\(Kind.pathSegment)/NAME); " +
                                  "\(url) is a \(found.name) board")
        }
        return parsed
    }
}

/// Runs one exchange (`members`: the intent's JSON members, nil to read
/// the state) and exits with K3's codes.
func runOneShot(url: WebSocketURL, members: String?, key: String? = nil, timeout: Double) throws {
    try report(ThinRequest(url: url, intentMembers: members, key: key, timeoutSeconds: timeout).run())
}

/// Prints how a one-shot ended (a refusal or an error on standard error)
/// and exits with its K3 code.
func report(_ outcome: RequestOutcome) throws {
    switch outcome {
    case let .done(line):
        if let line { print(line) }
    case let .refused(message), let .failed(message):
        FileHandle.standardError.write(Data((HubWords.printable(message) + "\n").utf8))
    }
    if outcome.exitCode != 0 { throw ExitCode(outcome.exitCode) }
}

struct StateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state", abstract: "Print the board's current state message on one line.")
    @OptionGroup var board: BoardOptions
    @Flag(help: "Print the hub's state message as JSON (the only format; kept for scripts).") var json = false
    func run() throws { try runOneShot(url: board.parsedURL().url, members: nil, timeout: board.timeout) }
}

struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send one intent (a JSON object with \"type\", without \"ref\") to a board of any kind.",
        discussion: """
            Exit 0 on ack, 1 when the hub refuses it (its message on standard error), 2 on a usage or \
            connection error. Examples, one a kind:
            """ + WatchedKinds.all.map { " syncclient send ws://127.0.0.1:8080/\($0.pathSegment)/t1 '\($0.sendExample)'" }
                .joined(separator: ";"))
    @OptionGroup var board: BoardOptions
    @Argument(help: "The intent as one JSON object, e.g. {\"type\":\"deal\"}.") var intent: String

    func run() throws {
        let url = try board.parsedURL().url
        guard let object = try? JSONSerialization.jsonObject(with: Data(intent.utf8)) as? [String: Any],
              object["type"] is String else {
            throw ValidationError("the intent must be one JSON object with a string \"type\", not \(intent.prefix(80))")
        }
        guard object["ref"] == nil else { throw ValidationError("leave \"ref\" out: send adds its own") }
        var fields = object
        let key = fields.removeValue(forKey: "key")
        if let key, !(key is String) { throw ValidationError("\"key\" must be a string") }
        let typeMember = try JSONSerialization.data(withJSONObject: ["type": fields.removeValue(forKey: "type") ?? ""])
        let rest = try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
        var members = String(decoding: typeMember.dropFirst().dropLast(), as: UTF8.self)
        let restText = String(decoding: rest.dropFirst().dropLast(), as: UTF8.self)
        if !restText.isEmpty { members += "," + restText }
        try runOneShot(url: url, members: members, key: key as? String, timeout: board.timeout)
    }
}
