import WebSocketLoop

/// How a bench's clients read their frames (`--reader`).
enum BenchReader: String, Sendable, CaseIterable, Codable {
    /// `WebSocketClient`'s bulk reader: a frame's payload handed on where it lies.
    case bulk
    /// libwebsockets' own client, one parser call per byte (the tool before
    /// the bulk reader; BENCHMARKS.md figures before its "Sixth session"
    /// were read this way). `wss://` connections always read this way.
    case libwebsockets

    var clientReader: ClientReader { self == .bulk ? .bulk : .libwebsockets }
}
