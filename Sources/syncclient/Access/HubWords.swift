/// Text from the hub (a refusal's message, a close reason, a 401's
/// description) made safe to print on a terminal: control and formatting
/// characters (escape sequences, line breaks, bidi overrides) become `?`, so
/// a hostile hub, or anyone on a `ws://` or `--insecure` path, cannot drive
/// the terminal. At most 300 characters.
enum HubWords {
    static func printable(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars.prefix(300) {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned:
                out += "?"
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
