import Foundation

/// Looks for marker secrets in text and bytes, in every form a careless line could carry them: raw, base64 and
/// base64url (at any alignment inside a longer encoding), hex in either case, percent- and form-encoded, and, for
/// the markers that ask for it (tokens), any run of ``windowLength`` bytes taken from them.
public struct MarkerScanner {
    /// Runs shorter than this are too common to mean anything.
    public static let windowLength = 20

    /// One secret to look for.
    public struct Marker {
        /// What the secret is, for the finding's report.
        public let name: String
        /// The secret's bytes, looked for in every form.
        public let value: [UInt8]
        /// Whether any ``MarkerScanner/windowLength``-byte run of the value is a finding too.
        public let windows: Bool

        /// A marker named `name` holding `value`; `windows`: its runs are findings too.
        public init(name: String, value: [UInt8], windows: Bool) {
            self.name = name
            self.value = value
            self.windows = windows
        }
    }

    private var forms: [(name: String, bytes: [UInt8])] = []
    private var windows: [[UInt8]: String] = [:]

    /// A scanner for `markers`. A window that also occurs in one of `innocent` (say, an id token of the same
    /// issuer, whose header and `iss` the tokens share) is format, not secret, and is not looked for.
    public init(_ markers: [Marker], innocent: [String] = []) {
        var shared = Set<[UInt8]>()
        for text in innocent { shared.formUnion(Self.runs(of: Array(text.utf8))) }
        for marker in markers {
            for (form, bytes) in Self.encodings(of: marker.value) where bytes.count >= 8 {
                forms.append(("\(marker.name) (\(form))", bytes))
            }
            if marker.windows {
                for run in Self.runs(of: marker.value) where !shared.contains(run) {
                    windows[run] = "\(marker.name) (a \(Self.windowLength)-byte run)"
                }
            }
        }
    }

    /// The markers found in `bytes`, by name and form; empty when there are none.
    public func findings(in bytes: [UInt8]) -> [String] {
        var found: [String] = []
        for form in forms where bytes.firstRange(of: form.bytes) != nil { found.append(form.name) }
        if bytes.count >= Self.windowLength {
            for start in 0...(bytes.count - Self.windowLength) {
                if let name = windows[Array(bytes[start..<(start + Self.windowLength)])] {
                    found.append(name)
                    break
                }
            }
        }
        return found
    }

    /// The markers found in `text`.
    public func findings(in text: String) -> [String] {
        findings(in: Array(text.utf8))
    }

    private static func runs(of bytes: [UInt8]) -> Set<[UInt8]> {
        guard bytes.count >= windowLength else { return [] }
        return Set((0...(bytes.count - windowLength)).map { Array(bytes[$0..<($0 + windowLength)]) })
    }

    /// The forms of `value` to look for.
    public static func encodings(of value: [UInt8]) -> [(String, [UInt8])] {
        let data = Data(value)
        var forms: [(String, [UInt8])] = [("raw", value)]
        // Inside a longer base64 text the value may start at any of three alignments: each keeps the characters
        // that depend on the value alone.
        for shift in 0..<3 {
            let padded = Data(repeating: 0, count: shift) + data
            let standard = padded.base64EncodedString().replacingOccurrences(of: "=", with: "")
            let kept = String(standard.dropFirst(shift == 0 ? 0 : shift + 1).dropLast(3))
            forms.append(("base64", Array(kept.utf8)))
            let url = kept.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            forms.append(("base64url", Array(url.utf8)))
        }
        let hex = value.map { String(format: "%02x", $0) }.joined()
        forms.append(("hex", Array(hex.utf8)))
        forms.append(("HEX", Array(hex.uppercased().utf8)))
        if let text = String(bytes: value, encoding: .utf8) {
            var unreserved = CharacterSet.alphanumerics
            unreserved.insert(charactersIn: "-._~")
            // RFC 3986's unreserved set kept, or letters and digits only (as some form encoders do).
            for allowed in [unreserved, .alphanumerics] {
                guard let percent = text.addingPercentEncoding(withAllowedCharacters: allowed) else { continue }
                forms.append(("percent-encoded", Array(percent.utf8)))
                forms.append(("form-encoded", Array(percent.replacingOccurrences(of: "%20", with: "+").utf8)))
            }
        }
        return forms
    }
}
