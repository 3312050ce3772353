import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import WebSocketLoop

/// Fetches a board's pictures over HTTP from its hub (`GET
/// /KIND/NAME/images/FILE`: pictures need no token) and decodes them, both
/// off the client loop's thread; `deliver` runs on another thread and must
/// post the result back. Redirects are not followed; a fetch gets 30 s.
///
/// Over `ws://` a picture comes through `PlainHTTP`, a socket of its own
/// read only up to `maxBytes`. Over `wss://` it comes through URLSession:
/// once a transfer is judged (not 200, announced or grown past `maxBytes`,
/// past its 30 s) it is cancelled, and the fetcher keeps no byte past the
/// limit, but corelibs' URLSession on Linux keeps reading until the cancel
/// lands and queues what it read meanwhile.
///
/// Over `wss://` it uses `https://` with the system's trusted CAs: on Linux
/// URLSession cannot take `--ca-file` or `--insecure`, so with either no
/// picture is fetched and the screen says why.
final class PictureFetcher: NSObject, URLSessionDataDelegate, Sendable {
    /// A shop's images are at most 1 MiB; a bigger answer is not a picture of ours.
    static let maxBytes = 1 << 20
    /// A whole fetch, however slowly its bytes come (corelibs' URLSession
    /// does not apply `timeoutIntervalForResource`, so this is kept here).
    static let deadlineSeconds = 30.0
    typealias Deliver = @Sendable (_ state: PictureState, _ retry: Bool) -> Void

    private struct Transfer {
        let name: String
        let deliver: Deliver
        var bytes: [UInt8] = []
        var type = ""
        /// Set when this side ended the transfer (a status, a size, the deadline): what to say.
        var verdict: (state: PictureState, retry: Bool)?
    }

    private let base: String
    /// Why pictures cannot be fetched at all here (nil: they can).
    private let unavailable: String?
    private let transfers = Mutex<[Int: Transfer]>([:])
    private let session = Mutex<URLSession?>(nil)
    /// Decoding happens here, so a slow picture never holds up the session's callbacks.
    private let decoding = DispatchQueue(label: "syncclient.pictures.decode")

    /// Over `ws://`: where the pictures are, for `PlainHTTP`.
    private let plain: (host: String, port: Int, path: String)?
    /// Plain fetches waiting for one of the 4 threads that run them (their
    /// own threads: a fetch waits on its socket, which must not hold up
    /// Dispatch's shared pool).
    private let plainJobs = Mutex<(jobs: [@Sendable () -> Void], threads: Int)>(([], 0))
    private let plainReady = DispatchSemaphore(value: 0)

    init(url: WebSocketURL, tls: ClientTLS?) {
        base = "\(url.isSecure ? "https" : "http")://\(url.host):\(url.port)\(url.path)/images/"
        plain = url.isSecure ? nil : (url.host, url.port, url.path + "/images/")
        unavailable = url.isSecure && (tls?.caFile != nil || tls?.insecure == true)
            ? "pictures are fetched with the system's CAs (not --ca-file or --insecure)" : nil
        super.init()
    }

    /// A name that stays one path segment: 1 to 128 of A-Z, a-z, 0-9, `.`,
    /// `_` and `-`, not starting with a dot.
    static func isSafeName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 128 && !name.hasPrefix(".")
            && name.utf8.allSatisfy {
                $0.isASCIIAlphanumeric || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
            }
    }

    /// `retry` is true when the hub could not be reached, failed (5xx),
    /// broke off or ran out of time: the picture may exist, so it may be
    /// asked for again.
    func fetch(_ name: String, deliver: @escaping Deliver) {
        if let unavailable { return deliver(.failed(unavailable), false) }
        guard Self.isSafeName(name), let url = URL(string: base + name) else {
            return deliver(.failed("not a picture's name: \(name.prefix(40))"), false)
        }
        if let plain { return fetchPlain(name, from: plain, deliver: deliver) }
        let task = session.withLock { session in
            if session == nil {
                let configuration = URLSessionConfiguration.ephemeral
                configuration.timeoutIntervalForRequest = 10
                configuration.httpMaximumConnectionsPerHost = 4
                let queue = OperationQueue()
                queue.maxConcurrentOperationCount = 1
                session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
            }
            return session!.dataTask(with: url)
        }
        transfers.withLock { $0[task.taskIdentifier] = Transfer(name: name, deliver: deliver) }
        task.resume()
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.deadlineSeconds) { [self] in
            judge(task, .failed("\(name): no answer within \(Int(Self.deadlineSeconds)) s"), retry: true)
        }
    }

    private func fetchPlain(_ name: String, from plain: (host: String, port: Int, path: String), deliver: @escaping Deliver) {
        let job: @Sendable () -> Void = {
            switch PlainHTTP.get(host: plain.host, port: plain.port, path: plain.path + name, maxBytes: Self.maxBytes,
                                 seconds: Self.deadlineSeconds) {
            case let .body(type, bytes): deliver(PictureDecoder.decode(bytes, type: type), false)
            case let .status(status): deliver(.failed("\(name): HTTP \(status)"), status >= 500)
            case .tooLarge: deliver(.failed("\(name): larger than a shop's pictures may be"), false)
            case let .failed(why): deliver(.failed("cannot fetch \(name): \(why)"), true)
            case let .malformed(why): deliver(.failed("\(name): \(why)"), false)
            }
        }
        let startThread = plainJobs.withLock { state -> Bool in
            state.jobs.append(job)
            guard state.threads < 4 else { return false }
            state.threads += 1
            return true
        }
        plainReady.signal()
        guard startThread else { return }
        Thread.detachNewThread { [self] in
            while true {
                plainReady.wait()
                guard let next = plainJobs.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) else { continue }
                next()
            }
        }
    }

    /// Stops every transfer and lets the session go (it holds this fetcher as its delegate).
    func close() {
        session.withLock { session in
            session?.invalidateAndCancel()
            session = nil
        }
    }

    /// Gives `task` its verdict (the first one stands) and cancels it; the
    /// verdict is delivered when the task completes.
    private func judge(_ task: URLSessionTask, _ state: PictureState, retry: Bool) {
        let judged = transfers.withLock { all -> Bool in
            guard var transfer = all[task.taskIdentifier], transfer.verdict == nil else { return false }
            transfer.verdict = (state, retry)
            transfer.bytes = []
            all[task.taskIdentifier] = transfer
            return true
        }
        if judged { task.cancel() }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let name = transfers.withLock { $0[dataTask.taskIdentifier]?.name } ?? ""
        if status != 200 {
            judge(dataTask, .failed("\(name): HTTP \(status)"), retry: status >= 500 || status == 0)
        } else if response.expectedContentLength > Int64(Self.maxBytes) {
            judge(dataTask, .failed("\(name): larger than a shop's pictures may be"), retry: false)
        } else {
            let type = ((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type") ?? "")
                .split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            transfers.withLock { $0[dataTask.taskIdentifier]?.type = type }
        }
        // (corelibs on Linux ignores the disposition; `judge` cancels instead.)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let tooLarge = transfers.withLock { all -> Bool in
            guard var transfer = all[dataTask.taskIdentifier], transfer.verdict == nil else { return false }
            guard transfer.bytes.count + data.count <= Self.maxBytes else { return true }
            transfer.bytes.append(contentsOf: data)
            all[dataTask.taskIdentifier] = transfer
            return false
        }
        if tooLarge {
            let name = transfers.withLock { $0[dataTask.taskIdentifier]?.name } ?? ""
            judge(dataTask, .failed("\(name): larger than a shop's pictures may be"), retry: false)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        // A picture is where the board is: never somewhere else, never over plain http after https.
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let verdict = transfer.verdict { return transfer.deliver(verdict.state, verdict.retry) }
        if let error {
            // Cut off, timed out, refused: it may work later. A certificate the
            // system does not trust will not (corelibs reports it as .unknown).
            let code = (error as? URLError)?.code ?? .unknown
            let hopeless: Set<URLError.Code> = [.unknown, .serverCertificateUntrusted, .serverCertificateHasBadDate,
                                                .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .secureConnectionFailed]
            return transfer.deliver(.failed("cannot fetch \(transfer.name): \(error.localizedDescription)"), !hopeless.contains(code))
        }
        if let status = (task.response as? HTTPURLResponse)?.statusCode, status != 200 {
            // A redirect refused above ends here.
            return transfer.deliver(.failed("\(transfer.name): HTTP \(status)"), false)
        }
        decoding.async { transfer.deliver(PictureDecoder.decode(transfer.bytes, type: transfer.type), false) }
    }
}

private extension UInt8 {
    var isASCIIAlphanumeric: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
    }
}
