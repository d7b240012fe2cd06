import Foundation
import Hummingbird
import KeyServiceCore

extension Request {
    /// The form fields of an `application/x-www-form-urlencoded` body.
    mutating func formFields() async throws -> FormFields {
        let body = try await collectLimitedBody()
        guard let text = String(data: body, encoding: .utf8) else {
            throw RequestRefusal.invalidRequest("the form body is not UTF-8")
        }
        return try FormFields(encoded: text)
    }

    /// The fields of the query string.
    func queryFields() throws -> FormFields {
        try FormFields(encoded: uri.query ?? "")
    }
}
