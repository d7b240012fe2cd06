/// A protocol 2 element (`blinded`) that is not the canonical encoding of a ristretto255 point other than the
/// identity: refused before anything is counted or stored (the caller answers 400).
package struct InvalidElement: Error, CustomStringConvertible {
    package var description: String {
        "blinded is not a valid ristretto255 element (32 bytes, canonical, not the identity)"
    }
}
