import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WebSocketLoop

/// Fetches a board's pictures over HTTP from its hub (`GET
/// /KIND/NAME/images/FILE`: pictures need no token) and decodes them, both
/// off the client loop's thread; `deliver` gets the result on URLSession's
/// queue and must post it back. Over `wss://` it uses `https://` with the
/// system's trusted CAs.
final class PictureFetcher: Sendable {
    /// A shop's images are at most 1 MiB; a bigger answer is not a picture of ours.
    static let maxBytes = 1 << 20
    private let base: String
    private let session: URLSession

    init(url: WebSocketURL) {
        base = "\(url.isSecure ? "https" : "http")://\(url.host):\(url.port)\(url.path)/images/"
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        configuration.httpMaximumConnectionsPerHost = 4
        session = URLSession(configuration: configuration)
    }

    /// `retry` is true when the hub could not be reached or failed (5xx):
    /// the picture may exist, so it may be asked for again.
    func fetch(_ name: String, deliver: @escaping @Sendable (_ state: PictureState, _ retry: Bool) -> Void) {
        guard let url = URL(string: base + name) else {
            deliver(.failed("not a picture's name: \(name)"), false)
            return
        }
        session.dataTask(with: url) { data, response, error in
            guard let response = response as? HTTPURLResponse else {
                deliver(.failed("cannot fetch \(name): \(error.map { $0.localizedDescription } ?? "no answer")"), true)
                return
            }
            guard response.statusCode == 200 else {
                deliver(.failed("\(name): HTTP \(response.statusCode)"), response.statusCode >= 500)
                return
            }
            guard let data, data.count <= Self.maxBytes else {
                deliver(.failed("\(name): larger than a shop's pictures may be"), false)
                return
            }
            let type = (response.value(forHTTPHeaderField: "Content-Type") ?? "").split(separator: ";").first
                .map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            deliver(PictureDecoder.decode([UInt8](data), type: type), false)
        }.resume()
    }
}
