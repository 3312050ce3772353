import ArgumentParser
import Foundation
import Glibc
import WebSocketLoop

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Load-test a hub: B boards x C clients, paced or saturated; latency, throughput, convergence.",
        discussion: """
            Each board's clients are thin clients. Visibility latency runs from an operation's send to the \
            first state frame at each client of its board that includes it (HDR histogram). \
            The hub limits each connection to its --rate messages a second (1000 by default): raise \
            it on the hub for saturation runs, or the summary counts rate_limited errors.
            """ + " " + BenchKind.discussion + " " + """
            With --connect-only the bench measures connection setup instead: --connections connections, \
            --concurrency in flight per thread, each closed once its board's first state arrived; it reports \
            connections a second and the time to an open WebSocket and to the first state (run it with and \
            without --token, or against ws:// and wss://, to compare); --token-list FILE gives connection i \
            the file's token i mod count (one a line), so distinct tokens miss the hub's cache of verified ones. \
            A hub with TLS is wss://HOST:PORT (--ca FILE or --insecure as for every command); a hub that \
            checks tokens needs --token (or SYNCHUB_TOKEN) with a role on every bench board. \
            Several hub URLs (hubs of one cluster, synchub --redis) spread each board's clients over them \
            round-robin (client i of a board on hub i mod count; --connect-only: connection i); the summary \
            then adds the hubs and the visibility split into same hub (the client is on the hub the change \
            was sent to) and cross hub (on another hub), with the cross-hub p99 against the same-hub p99. \
            --hub-pid may be repeated (one a hub process): RSS and CPU are then summed over them. \
            Method and figures: BENCHMARKS.md.
            """)

    @Argument(help: "The hub, ws://HOST:PORT or wss://HOST:PORT; several hubs of one cluster: each board's clients round-robin over them.")
    var hub: [String]
    @OptionGroup var access: AccessOptions
    @Option(help: "Boards.") var boards = 1
    @Option(help: "Clients per board.") var clients = 50
    @Option(help: "Clients per board that send operations (default: all).") var senders: Int?
    @Option(help: "Aggregate operations a second over all boards; 0 = as fast as the hub absorbs.") var rate: Double = 0
    @Option(help: "Saturated mode: operations in flight per board.") var inFlight = 256
    @Option(help: "Measured seconds.") var duration: Double = 10
    @Option(help: "Seconds of sending before measuring.") var warmup: Double = 1
    @Option(help: "New connections a second while ramping up.") var connectRate: Double = 2000
    @Option(help: "Client threads (each its own event loop).") var threads = 1
    @Option(help: """
        Each client thread pauses this many microseconds before it waits for sockets again, so one wake-up reads many frames: the tool \
        then costs less CPU on a machine it shares with the hubs, and every measured latency may include up to this pause. 0: no pause.
        """)
    var readBatchMicros: UInt32 = 0
    @Option(help: "Loopback source addresses 127.0.0.1..N (default: one per 20,000 clients).") var sources: Int?
    @Option(help: "Board name prefix (boards are PREFIX-0, PREFIX-1, ...).") var prefix = "bench"
    @Option(help: ArgumentHelp(BenchKind.optionHelp)) var kind: BenchKind = .first
    @Option(help: "The hub's process id, to report its RSS and CPU; repeat it for several hubs (summed).") var hubPid: [Int32] = []
    @Flag(help: "Only connect and hold the connections for --duration (idle-memory runs); send nothing.") var idle = false
    @Flag(help: """
        The target is a plain broadcaster (Benchmarks/RawBroadcaster): messages carry their send time and are echoed to all; no board \
        semantics, no convergence check.
        """)
    var raw = false
    @Option(help: """
        With --raw: pad each message to this many bytes (96 or more), so the broadcaster relays frames as large as a hub's states (0: no \
        padding).
        """)
    var rawBytes = 0
    @Flag(help: "Measure connection setup only: open and close --connections connections; no operations.") var connectOnly = false
    @Option(help: "--connect-only: connections in all.") var connections = 1000
    @Option(help: "--connect-only: connections in flight at once, per thread.") var concurrency = 16
    @Option(help: "--connect-only: a file of tokens, one a line; connection i presents token i mod their count.") var tokenList: String?
    @Option(help: "--kind todo: items each list is filled to at the start and kept near.") var items = 50
    @Flag(help: "Print the summary as one JSON object.") var json = false
    @Flag(help: """
        With --json: add visibilityHistogram, the visibility samples as [nanoseconds, count] buckets, so that several runs can be pooled.
        """)
    var histogram = false
    @Flag(help: "No live progress line.") var quiet = false
    @Option(help: """
        How the clients read the hub's frames: bulk (a frame's payload taken where it lies) or libwebsockets (its own client, a parser \
        call per byte; how this tool read before). wss:// always uses libwebsockets.
        """)
    var reader: BenchReader = .bulk

    func validate() throws {
        let urls = hub.compactMap(WebSocketURL.init)
        guard !hub.isEmpty, urls.count == hub.count else { throw ValidationError("hub must look like ws://HOST:PORT or wss://HOST:PORT") }
        if Set(urls.map(\.isSecure)).count > 1 { throw ValidationError("hubs must be all ws:// or all wss://") }
        if raw, urls.count > 1 { throw ValidationError("--raw drives one plain broadcaster: one hub") }
        if raw, !kind.driver.drivesBroadcaster { throw ValidationError("--raw drives a plain broadcaster: no --kind") }
        if rawBytes != 0, !raw { throw ValidationError("--raw-bytes pads the messages of --raw") }
        guard rawBytes == 0 || (96...(1 << 20)).contains(rawBytes) else {
            throw ValidationError("--raw-bytes must be 0 (no padding) or 96...1048576 (a bare message is up to 73 bytes)")
        }
        guard boards >= 1, clients >= 1, duration > 0, threads >= 1, connectRate > 0 else {
            throw ValidationError("--boards, --clients, --duration, --threads and --connect-rate must be positive")
        }
        if let senders, !(1...clients).contains(senders) { throw ValidationError("--senders must be 1...clients") }
        if connectOnly {
            guard connections >= 1, concurrency >= 1 else { throw ValidationError("--connections and --concurrency must be positive") }
            if idle || raw { throw ValidationError("--connect-only measures connections only: no --idle or --raw") }
        } else if tokenList != nil {
            throw ValidationError("--token-list is for --connect-only")
        }
        guard items >= 1 else { throw ValidationError("--items must be positive") }
        if histogram, !json || connectOnly { throw ValidationError("--histogram adds to the --json report of an operations run") }
    }

    func run() throws {
        raiseOpenFileLimit()
        let urls = hub.compactMap(WebSocketURL.init)
        guard let url = urls.first, urls.count == hub.count else {
            throw ValidationError("hub must look like ws://HOST:PORT or wss://HOST:PORT")
        }
        let hubAccess = try access.resolve(for: url)
        let total = boards * clients
        var plan = BenchPlan(
            hub: url, moreHubs: Array(urls.dropFirst()), boardNames: (0..<boards).map { "\(prefix)-\($0)" }, clientsPerBoard: clients,
            sendersPerBoard: idle ? 0 : senders ?? clients, threads: threads,
            sources: sources ?? max(1, (total + 19_999) / 20_000), connectionsPerSecond: connectRate,
            rate: rate, inFlightPerBoard: inFlight,
            warmupNanos: UInt64(warmup * 1e9), durationNanos: UInt64(duration * 1e9), raw: raw, kind: kind,
            access: hubAccess, connectOnly: connectOnly, todoItems: items, tokens: try tokenList.map(Self.tokens(in:)) ?? [],
            readBatchMicros: readBatchMicros)
        plan.histogram = histogram
        plan.rawBytes = rawBytes
        plan.reader = reader
        if connectOnly {
            let report = ConnectBench(plan: plan, connections: connections, concurrency: concurrency,
                                      progress: !quiet && isatty(2) == 1).run()
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
            } else {
                print(report.text())
            }
            // Not one connection made it: a usage or connection error (exit 2).
            if report.succeeded == 0 { throw ExitCode(2) }
            return
        }
        let report = BenchRunner(plan: plan, hubPIDs: hubPid, progress: !quiet && isatty(2) == 1).run()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(report.text())
        }
        if !report.converged { throw ExitCode(1) }
        if !kind.driver.held(report) { throw ExitCode(1) }
    }
}

extension BenchCommand {
    /// The tokens of a `--token-list` file: one a line, blank lines skipped.
    static func tokens(in path: String) throws -> [String] {
        guard let data = FileManager.default.contents(atPath: path) else { throw ValidationError("--token-list: cannot read \(path)") }
        let tokens = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !tokens.isEmpty else { throw ValidationError("--token-list: no tokens in \(path)") }
        return tokens
    }
}

extension BenchKind: ExpressibleByArgument {
    init?(argument: String) { self.init(named: argument) }
    var defaultValueDescription: String { name }
    static var allValueStrings: [String] { WatchedKinds.all.map { $0.name } }
}
extension BenchReader: ExpressibleByArgument {}
