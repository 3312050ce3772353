import Foundation
import WebSocketLoop

/// One request to a hub over `http://` or `https://`, waited for: a
/// connection of its own, closed once the answer is read. Redirects are not
/// followed. For the one-shot commands (`syncclient admin`), which wait for
/// nothing else.
enum HubHTTP {
    /// The largest answer taken: a board's state is bounded far below it
    /// (the WebSocket client takes the same, `WebSocketClient.maxMessageBytes`).
    static let maxBytes = 64 << 20

    /// Sends `request` to the hub at `hub` (its host, port and scheme: `isSecure`
    /// is https) and reads the whole answer, all within `seconds`.
    static func send(_ request: HTTPRequest, to hub: WebSocketURL, token: String?, tls: ClientTLS?, seconds: Double) -> HTTPAnswer {
        let deadline = Date().addingTimeInterval(seconds)
        guard let socket = PlainStream.connect(host: hub.host, port: hub.port, deadline: deadline) else {
            return .failed("cannot connect to \(hub.host):\(hub.port)")
        }
        let bytes = request.bytes(host: hub.host, port: hub.port, token: token)
        guard hub.isSecure else { return exchange(bytes, over: socket, until: deadline) }
        do {
            let secure = try TLSStream(over: socket, host: hub.host, tls: tls ?? ClientTLS(), deadline: deadline)
            return exchange(bytes, over: secure, until: deadline)
        } catch {
            return .failed(error.description)
        }
    }

    private static func exchange(_ bytes: [UInt8], over stream: some ByteStream, until deadline: Date) -> HTTPAnswer {
        guard stream.write(bytes, until: deadline) else { return .failed("cannot send the request") }
        var reader = HTTPReader(stream: stream, deadline: deadline)
        return reader.answer(maxBytes: maxBytes, readsBody: { _ in true })
    }
}
