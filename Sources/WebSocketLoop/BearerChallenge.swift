/// The `WWW-Authenticate: Bearer ...` header of a refused upgrade (RFC 6750
/// section 3), read for the one thing a person needs: why.
/// `Bearer realm="synchub", error="invalid_token", error_description="token expired"`.
public struct BearerChallenge: Sendable, Equatable {
    /// The parameters by lowercased name, quotes removed.
    public var parameters: [String: String] = [:]

    public init(_ header: String) {
        var rest = Substring(header).drop { $0 == " " }
        guard rest.lowercased().hasPrefix("bearer") else { return }
        rest = rest.dropFirst(6)
        while let equals = rest.firstIndex(of: "=") {
            let name = rest[..<equals].trimmingSpacesAndCommas().lowercased()
            rest = rest[rest.index(after: equals)...]
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var escaped = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if escaped {
                        value.append(character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        break
                    } else {
                        value.append(character)
                    }
                }
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = String(rest[..<end]).trimmingSpacesAndCommas()
                rest = rest[end...]
            }
            if !name.isEmpty { parameters[name] = value }
        }
    }

    /// `error_description`, else `error`; nil when the hub said neither.
    public var description: String? {
        if let text = parameters["error_description"], !text.isEmpty { return text }
        if let code = parameters["error"], !code.isEmpty { return code }
        return nil
    }
}

private extension StringProtocol {
    func trimmingSpacesAndCommas() -> String {
        String(drop { $0 == " " || $0 == "," }.reversed().drop { $0 == " " || $0 == "," }.reversed())
    }
}
