import Foundation
import KeyServiceMock
import VaultPOSIX

/// `--users-file`: the identity provider's users, one `NAME:PASSWORD[:SUBJECT]` a line.
///
/// Passwords come from a file, not from argv, which every local user can read (`ps`, `/proc/PID/cmdline`);
/// the file itself must be its owner's alone.
enum UsersFile {
    /// The users in the file at `path`, in order; the subject defaults to the name.
    /// - Throws: ``Refusal`` when the file cannot be read, is readable or writable by anyone but its owner,
    ///   or has a line that is not `NAME:PASSWORD[:SUBJECT]`, or no user at all.
    static func load(path: String) throws -> [MockUser] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw Refusal("cannot read the users file \(path): \(String(cString: strerror(errno)))")
        }
        // The permissions of the file actually opened, not of whatever the path names a moment later.
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        let info: FileStatus
        do throws(FileStatus.Failure) {
            info = try FileStatus(descriptor: descriptor)
        } catch {
            throw Refusal("cannot read the users file \(path): \(String(cString: strerror(error.errorNumber)))")
        }
        guard info.kind == .regularFile else {
            throw Refusal("the users file \(path) is not a regular file")
        }
        guard info.permissions & 0o077 == 0 else {
            throw Refusal(
                "the users file \(path) holds passwords but is open to others (mode "
                    + "\(String(info.permissions & 0o777, radix: 8))): run chmod 600 \(path)"
            )
        }
        let data: Data
        do {
            data = try handle.readToEnd() ?? Data()
        } catch {
            throw Refusal("cannot read the users file \(path): \(error.localizedDescription)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw Refusal("the users file \(path) is not UTF-8")
        }
        return try parse(text, path: path)
    }

    /// The users in `text`; `path` names the file in messages.
    static func parse(_ text: String, path: String) throws -> [MockUser] {
        var users: [MockUser] = []
        // \n, \r\n (one Character in Swift) and \r all end a line.
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            if line.allSatisfy(\.isWhitespace) || line.hasPrefix("#") { continue }
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            // The line is never quoted: it holds a password.
            guard parts.count >= 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw Refusal("\(path), line \(index + 1): expected NAME:PASSWORD[:SUBJECT]")
            }
            guard !users.contains(where: { $0.username == parts[0] }) else {
                throw Refusal("\(path), line \(index + 1): the user \(parts[0]) is listed twice")
            }
            let subject = parts.count == 3 && !parts[2].isEmpty ? parts[2] : parts[0]
            users.append(MockUser(username: parts[0], password: parts[1], subject: subject))
        }
        guard !users.isEmpty else {
            throw Refusal("the users file \(path) lists no user (lines of NAME:PASSWORD[:SUBJECT])")
        }
        return users
    }

    /// Why the file was refused; the message never holds a password.
    struct Refusal: Error, CustomStringConvertible {
        let description: String

        init(_ description: String) {
            self.description = description
        }
    }
}
