/// A server the tests need could not be set up or started: the message says what is missing and how to get it.
///
/// Thrown, never turned into a skip: a machine without PostgreSQL or nginx fails these suites (CI installs both).
struct HarnessError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
