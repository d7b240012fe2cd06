/// The state directory could not be used; the message says why.
struct StateError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
