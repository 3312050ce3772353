import Foundation

/// How an admin command ended, from the hub's HTTP answer (pure; the exit
/// codes of K3, docs/rules/README.md): a 2xx answer is done and printed, as
/// the hub's JSON on one line (`--json`) or through `view`; a 4xx or 5xx is
/// the hub refusing, said as `CODE: message` from its `{"error","message"}`;
/// anything else, or no answer, is a connection problem.
enum AdminOutcome {
    static func of(_ answer: HTTPAnswer, from hub: String, json: Bool,
                   view: ([UInt8]) throws(AdminView.Unreadable) -> String) -> RequestOutcome {
        switch answer {
        case let .answered(status, _, body):
            let body = body ?? []
            if status >= 400 { return .refused(refusal(status, body)) }
            guard (200..<300).contains(status) else {
                return .failed("\(hub) answered HTTP \(status), which syncclient admin does not follow")
            }
            guard (try? JSONSerialization.jsonObject(with: Data(body))) is [String: Any] else {
                return .failed("\(hub) answered HTTP \(status) with a body that is not a JSON object")
            }
            if json { return .done(oneLine(body)) }
            do {
                return .done(try view(body))
            } catch {
                return .failed("\(hub): \(error.description)")
            }
        case .tooLarge: return .failed("\(hub) answered with more than \(HubHTTP.maxBytes >> 20) MiB")
        case let .failed(why): return .failed("cannot reach \(hub): \(why)")
        case let .malformed(why): return .failed("\(hub) did not answer as an HTTP server does: \(why)")
        }
    }

    /// `CODE: message` from the hub's error body, or the bare status when
    /// the body is not one (a proxy's page, an empty 401).
    static func refusal(_ status: Int, _ body: [UInt8]) -> String {
        guard let refusal = try? JSONDecoder().decode(AdminAnswers.Refusal.self, from: Data(body)) else {
            return "HTTP \(status)"
        }
        guard let message = refusal.message, !message.isEmpty else { return refusal.error }
        return "\(refusal.error): \(message)"
    }

    /// A JSON text on one line: a line break can only be white space
    /// between its tokens (inside a string it is escaped), so it goes.
    static func oneLine(_ body: [UInt8]) -> String {
        let text = String(decoding: body.filter { $0 != 10 && $0 != 13 }, as: UTF8.self)
        return text.trimmingCharacters(in: .whitespaces)
    }
}
