import ArgumentParser
import CredentialVault
import Foundation

/// `credential-vault decode`: the header and claims of any JWT, without checking its signature.
struct Decode: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the header and claims of a JWT (argument or standard input). The signature is NOT checked.",
        discussion: """
            Shows what a token says, not that its issuer said it: the signature is not verified. Dates are shown \
            in local time. Reads the token from standard input when no argument is given (or the argument is -).
            """
    )

    /// The most read from standard input: a token of at most ``JWT/maximumLength`` bytes with room for the
    /// whitespace around it.
    static let standardInputLimit = 2 * JWT.maximumLength

    @Argument(help: "The token; read from standard input when absent or '-'.")
    var token: String?

    @Flag(help: "Print {\"header\", \"claims\", \"signatureChecked\": false} as JSON.")
    var json = false

    func run() async throws {
        try await Command.run {
            let text: String
            if let token, token != "-" {
                text = token
            } else {
                // One byte past the cap tells a longer input from one that fits.
                let input = Terminal.readAllStandardInput(limit: Self.standardInputLimit + 1)
                guard input.count <= Self.standardInputLimit else {
                    throw CLIError(
                        status: .failure,
                        description: "not a JWT: standard input exceeded the stdin cap of "
                            + "\(Self.standardInputLimit / 1024) KiB (a token is at most \(JWT.maximumLength / 1024) KiB)"
                    )
                }
                text = String(decoding: input, as: UTF8.self)
            }
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else { throw CLIError.usage("no token given (as an argument or on standard input)") }
            // Any JWT is shown, with or without a subject: nothing here is trusted or kept.
            let header: [String: JSONValue]
            let claims: [String: JSONValue]
            do {
                (header, claims) = try JWT.decodeSegments(trimmed)
            } catch {
                throw CLIError(status: .failure, description: "not a JWT: \(error)")
            }
            if json {
                // The same token again, every number as written: decodeSegments has checked it, so this cannot fail.
                let exact: (header: [String: ExactJSONValue], claims: [String: ExactJSONValue])
                do {
                    exact = try JWT.exactSegments(trimmed)
                } catch {
                    throw CLIError(status: .failure, description: "not a JWT: \(error)")
                }
                Terminal.output(
                    Format.json(
                        .object([
                            "header": .object(exact.header), "claims": .object(exact.claims),
                            "signatureChecked": .bool(false),
                        ])
                    )
                )
                return
            }
            Terminal.output("The signature is NOT checked: this shows what the token says, not who said it.")
            Terminal.output("Header:")
            Terminal.output(Format.table(header))
            Terminal.output("Claims:")
            Terminal.output(Format.table(claims))
            if let exp = claims["exp"] {
                if let expiry = exp.dateValue {
                    let state = expiry <= Date() ? "expired" : "expires"
                    Terminal.output("It \(state) \(Format.localDate(expiry)).")
                } else {
                    // A present exp that is not a NumericDate is no statement about expiry: JWT(token:) refuses it.
                    Terminal.output(
                        "The exp claim is malformed (\(Format.numericDateProblem(exp) ?? "not a NumericDate")): its "
                            + "expiry is unknown, and the library refuses such a token."
                    )
                }
            } else {
                Terminal.output("It has no expiry (no exp claim).")
            }
            if header["alg"]?.stringValue?.lowercased() == "none" {
                Terminal.output("Warning: alg is \"none\": the token carries no signature at all.")
            }
        }
    }
}
