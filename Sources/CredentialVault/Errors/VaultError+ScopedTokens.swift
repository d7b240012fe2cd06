package import Foundation

extension VaultError {
    /// The issuer answered `invalid_target` (RFC 8707 section 2) to a request for `resource`; `words` are its own.
    package static func resourceRefused(_ resource: String?, saying words: String?, host: String) -> VaultError {
        let named = resource.map { " \(printable($0, limit: 200))" } ?? ""
        let said = words.map { printable($0, limit: 200) }.flatMap { $0.isEmpty ? nil : " The issuer said: \"\($0)\"." }
        return VaultError(
            .resourceRefused,
            "The issuer refused the resource\(named) (invalid_target): it issues no token for it to this client. Check "
                + "the resource URL against the API's registration at the issuer.\(said ?? "")",
            origin: .issuer,
            host: host,
            httpStatus: 400
        )
    }

    /// A resource indicator that is not an absolute URL without a fragment (RFC 8707 section 2).
    package static func resourceNotUsable(_ resource: URL) -> VaultError {
        VaultError(
            .resourceRefused,
            "The resource \(printable(resource.absoluteString, limit: 200)) is not usable: RFC 8707 asks for an "
                + "absolute URL (such as https://api.example.com/) without a fragment.",
            origin: .local
        )
    }
}
