extension Format {
    /// Whether `scalar` can steer a terminal or reorder what it shows, rather than print as a character.
    ///
    /// C0 controls and DEL, C1 controls (U+0080 to U+009F: a terminal may read U+009B as CSI and U+009D as
    /// OSC, as it reads ESC [ and ESC ]), the Unicode bidirectional controls (U+061C, U+200E, U+200F,
    /// U+202A to U+202E, U+2066 to U+2069: they make text display in another order than it is stored) and
    /// the line and paragraph separators U+2028 and U+2029.
    static func isTerminalControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        case 0x2028, 0x2029: true
        default: false
        }
    }

    /// `text` safe to print for people: every terminal control (``isTerminalControl(_:)``) is written as an
    /// escape, `\n`, `\r` and `\t` or `\u{1B}`, so a value read from a token or a file cannot clear the
    /// screen, set the window title or reorder the line. With `keepingNewlines`, `\n` stays a line break
    /// (for messages of several lines that are ours; untrusted values are escaped whole before they go in).
    static func escapingControlCharacters(_ text: String, keepingNewlines: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: isTerminalControl) else { return text }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            guard isTerminalControl(scalar) else {
                escaped.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n" where keepingNewlines: escaped += "\n"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            default: escaped += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return escaped
    }

    /// JSON text with every terminal control that JSONEncoder leaves raw (DEL, C1, bidirectional controls,
    /// U+2028, U+2029) written as a `\uXXXX` escape: the same JSON value, safe to print to a terminal.
    ///
    /// Outside strings JSON text holds only ASCII punctuation, digits, letters and whitespace, so every such
    /// character is inside a string, where `\uXXXX` means that very character (RFC 8259 section 7).
    static func escapingControlCharacters(inJSON json: String) -> String {
        guard json.unicodeScalars.contains(where: isTerminalControl) else { return json }
        var escaped = ""
        escaped.reserveCapacity(json.utf8.count + 16)
        for scalar in json.unicodeScalars {
            // C0 controls cannot be in JSON text unescaped except as whitespace between tokens.
            if isTerminalControl(scalar) && scalar.value >= 0x20 {
                let hex = String(scalar.value, radix: 16)
                escaped += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
