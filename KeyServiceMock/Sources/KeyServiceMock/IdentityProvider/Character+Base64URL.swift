extension Character {
    /// A letter, digit, `-` or `_`: the base64url alphabet without padding.
    var isBase64URLCharacter: Bool {
        isASCII && (isLetter || isNumber || self == "-" || self == "_")
    }
}
