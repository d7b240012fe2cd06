import CredentialVault
import Foundation

/// The two ways to log in where no browser can reach this machine: the device code (RFC 8628) and the pasted
/// redirect. Everything goes to standard error, so a program that captures standard output still shows it.
enum HeadlessLogin {
    /// Shows the device login's verification URI, user code and complete URI on standard error.
    static func showUserCode(_ authorization: DeviceAuthorization) {
        var text =
            "To log in, open this page in a browser on any device:\n\n  \(authorization.verificationURI.absoluteString)"
            + "\n\nand enter the code:\n\n  \(authorization.userCode)\n"
        if let complete = authorization.verificationURIComplete {
            text += "\nOr open this page, which has the code filled in:\n\n  \(complete.absoluteString)\n"
        }
        text += "\nWaiting for the approval (the code expires in \(authorization.expiresIn) s)..."
        Terminal.note(text)
    }

    /// Shows the authorization URL on standard error and reads back, from standard input, the address the browser
    /// ended at; nil at the end of input.
    static func readPastedRedirect(_ authorizationURL: URL) -> URL? {
        Terminal.note(
            "Open this URL in a browser on any device and log in:\n\n  \(authorizationURL.absoluteString)\n\n"
                + "The browser then ends at an address it may fail to load (a page that cannot be reached is "
                + "expected). Copy that whole address from its address bar and paste it here."
        )
        if Terminal.stdinIsTerminal { Terminal.writeError("Address the browser ended at: ") }
        guard let bytes = Terminal.readLineFromStandardInput(), let line = String(validating: bytes, as: UTF8.self)
        else { return nil }
        let text = line.trimmingCharacters(in: .whitespaces)
        return text.isEmpty ? nil : URL(string: text)
    }
}
