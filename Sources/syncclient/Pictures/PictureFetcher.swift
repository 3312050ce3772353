import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import WebSocketLoop

/// Fetches a board's pictures over HTTP from its hub (`GET
/// /KIND/NAME/images/FILE`: pictures need no token) and decodes them, both
/// off the client loop's thread; `deliver` runs on URLSession's queue and
/// must post the result back. A body is cut off past `maxBytes` as it
/// arrives (not buffered first), and a whole fetch is given 30 s.
///
/// Over `wss://` it uses `https://` with the system's trusted CAs: on Linux
/// URLSession cannot take `--ca-file` or `--insecure`, so with either no
/// picture is fetched and the screen says why.
final class PictureFetcher: NSObject, URLSessionDataDelegate, Sendable {
    /// A shop's images are at most 1 MiB; a bigger answer is not a picture of ours.
    static let maxBytes = 1 << 20
    typealias Deliver = @Sendable (_ state: PictureState, _ retry: Bool) -> Void

    private struct Transfer {
        let name: String
        let deliver: Deliver
        var bytes: [UInt8] = []
        var type = ""
        /// Set when this side ended the transfer (a status, a size): what to say.
        var verdict: (state: PictureState, retry: Bool)?
    }

    private let base: String
    /// Why pictures cannot be fetched at all here (nil: they can).
    private let unavailable: String?
    private let transfers = Mutex<[Int: Transfer]>([:])
    private let session = Mutex<URLSession?>(nil)

    init(url: WebSocketURL, tls: ClientTLS?) {
        base = "\(url.isSecure ? "https" : "http")://\(url.host):\(url.port)\(url.path)/images/"
        unavailable = url.isSecure && (tls?.caFile != nil || tls?.insecure == true)
            ? "pictures are fetched with the system's CAs (not --ca-file or --insecure)" : nil
        super.init()
    }

    /// A name that stays one path segment: 1 to 128 of A-Z, a-z, 0-9, `.`,
    /// `_` and `-`, not starting with a dot.
    static func isSafeName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 128 && !name.hasPrefix(".")
            && name.utf8.allSatisfy { $0.isASCIIAlphanumeric || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    /// `retry` is true when the hub could not be reached, failed (5xx) or
    /// broke off: the picture may exist, so it may be asked for again.
    func fetch(_ name: String, deliver: @escaping Deliver) {
        if let unavailable { return deliver(.failed(unavailable), false) }
        guard Self.isSafeName(name), let url = URL(string: base + name) else {
            return deliver(.failed("not a picture's name: \(name.prefix(40))"), false)
        }
        let task = session.withLock { session in
            if session == nil {
                let configuration = URLSessionConfiguration.ephemeral
                configuration.timeoutIntervalForRequest = 10
                configuration.timeoutIntervalForResource = 30
                configuration.httpMaximumConnectionsPerHost = 4
                let queue = OperationQueue()
                queue.maxConcurrentOperationCount = 1
                session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
            }
            return session!.dataTask(with: url)
        }
        transfers.withLock { $0[task.taskIdentifier] = Transfer(name: name, deliver: deliver) }
        task.resume()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let verdict: (PictureState, Bool)? = transfers.withLock { all in
            guard var transfer = all[dataTask.taskIdentifier] else { return nil }
            if status != 200 {
                transfer.verdict = (.failed("\(transfer.name): HTTP \(status)"), status >= 500 || status == 0)
            } else if response.expectedContentLength > Int64(Self.maxBytes) {
                transfer.verdict = (.failed("\(transfer.name): larger than a shop's pictures may be"), false)
            } else {
                transfer.type = ((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type") ?? "")
                    .split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            }
            all[dataTask.taskIdentifier] = transfer
            return transfer.verdict
        }
        completionHandler(verdict == nil ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let tooLarge = transfers.withLock { all -> Bool in
            guard var transfer = all[dataTask.taskIdentifier], transfer.verdict == nil else { return false }
            if transfer.bytes.count + data.count > Self.maxBytes {
                transfer.verdict = (.failed("\(transfer.name): larger than a shop's pictures may be"), false)
                transfer.bytes = []
            } else {
                transfer.bytes.append(contentsOf: data)
            }
            all[dataTask.taskIdentifier] = transfer
            return transfer.verdict != nil
        }
        if tooLarge { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let verdict = transfer.verdict { return transfer.deliver(verdict.state, verdict.retry) }
        if let error {
            // Cut off, timed out, refused: it may work later. A certificate the system does not trust will not.
            let code = (error as? URLError)?.code
            let trust: Set<URLError.Code> = [.serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateHasUnknownRoot,
                                             .serverCertificateNotYetValid, .secureConnectionFailed]
            return transfer.deliver(.failed("cannot fetch \(transfer.name): \(error.localizedDescription)"), !trust.contains(code ?? .unknown))
        }
        transfer.deliver(PictureDecoder.decode(transfer.bytes, type: transfer.type), false)
    }
}

private extension UInt8 {
    var isASCIIAlphanumeric: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
    }
}
