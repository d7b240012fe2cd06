import Foundation
import VaultPOSIX

/// Reading the config file, which decides where `credential-vault` sends a refresh token: only a file that nobody but
/// its reader (or root) can change is read.
enum ConfigFile {
    /// The longest config file read; a real one is a few hundred bytes.
    static let maximumSize = 1 << 20

    /// The bytes of the config file at `path`; nil when it does not exist and is not `required`.
    ///
    /// The file is opened once and its owner and mode are checked on that open file (no window for a swap
    /// between the check and the read).
    /// - Throws: ``CLIError`` (configuration, exit 78) when the file cannot be read, is too large, is writable by
    ///   its group or by others, or belongs to another user than the one running `credential-vault` (root excepted).
    static func contents(atPath path: String, required: Bool) throws -> Data? {
        guard let (file, status) = try openRegularFile(path, what: "the config file", missingIsNil: !required) else {
            return nil
        }
        try checkOwnerAndMode(status, path: path)
        return try read(file, upTo: maximumSize, path: path, what: "the config file")
    }

    /// The most a secret file may hold (a private key in PEM is a few KiB).
    static let maximumSecretSize = 64 * 1024

    /// A secret kept in a file of its own (a client secret, a private key): the user's own regular file that
    /// neither its group nor others can read or write, at most ``maximumSecretSize``; the text without
    /// surrounding whitespace. Checked on the open file, like ``contents(atPath:required:)``.
    static func secret(atPath path: String, what: String) throws -> String {
        guard let (file, status) = try openRegularFile(path, what: what + " file", missingIsNil: false) else {
            throw CLIError.configuration("cannot read \(what) file \(path)")
        }
        guard status.owner == geteuid() else {
            throw CLIError.configuration("\(what) file \(path) belongs to another user (uid \(status.owner))")
        }
        guard status.permissions & 0o077 == 0 else {
            throw CLIError.configuration(
                "\(what) file \(path) is open to its group or others (mode \(octalMode(status))): a secret must be "
                    + "readable by you alone. Run: chmod 600 \(shellQuoted(path))"
            )
        }
        let data = try read(file, upTo: maximumSecretSize, path: path, what: what + " file")
        guard let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
            !text.isEmpty
        else {
            throw CLIError.configuration("\(what) file \(path) is empty or not UTF-8 text")
        }
        return text
    }

    /// `path` opened for reading, and its status from the open file (no window for a swap between the check and
    /// the read); nil when it does not exist and `missingIsNil`. O_NONBLOCK: a FIFO fails the regular-file check
    /// instead of hanging the open.
    private static func openRegularFile(
        _ path: String,
        what: String,
        missingIsNil: Bool
    ) throws -> (FileHandle, FileStatus)? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            if (errno == ENOENT || errno == ENOTDIR) && missingIsNil { return nil }
            throw CLIError.configuration("cannot read \(what) \(path) (\(String(cString: strerror(errno))))")
        }
        let file = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        guard let status = try? FileStatus(descriptor: descriptor), status.kind == .regularFile else {
            throw CLIError.configuration("\(what) \(path) is not a regular file")
        }
        return (file, status)
    }

    /// At most `limit` bytes of `file`; more is refused.
    private static func read(_ file: FileHandle, upTo limit: Int, path: String, what: String) throws -> Data {
        let data: Data
        do {
            data = try file.read(upToCount: limit + 1) ?? Data()
        } catch {
            throw CLIError.configuration("cannot read \(what) \(path) (\(error.localizedDescription))")
        }
        guard data.count <= limit else {
            let size = limit >= 1 << 20 ? "\(limit >> 20) MiB" : "\(limit >> 10) KiB"
            throw CLIError.configuration("\(what) \(path) is larger than \(size)")
        }
        return data
    }

    /// The permission bits as four octal digits (`0644`).
    private static func octalMode(_ status: FileStatus) -> String {
        let octal = String(status.permissions, radix: 8)
        return String(repeating: "0", count: max(0, 4 - octal.count)) + octal
    }

    /// Whoever can write the config file can name another issuer and key service, and so receive the refresh
    /// token at the next login: the file must be the user's own (or root's, who can change any file anyway)
    /// and writable by its owner only.
    private static func checkOwnerAndMode(_ status: FileStatus, path: String) throws {
        let user = geteuid()
        let quoted = shellQuoted(path)
        if status.owner != user && status.owner != 0 {
            let copy = shellQuoted(path + ".new")
            throw CLIError.configuration(
                "the config file \(path) belongs to another user (uid \(status.owner); you are uid \(user)), who "
                    + "could point credential-vault at another issuer and receive your refresh token. Replace it with a copy "
                    + "of your own: cp \(quoted) \(copy) && mv \(copy) \(quoted)"
            )
        }
        let writable = status.permissions & (S_IWGRP | S_IWOTH)
        guard writable == 0 else {
            let who =
                switch writable {
                case S_IWGRP: "its group"
                case S_IWOTH: "others"
                default: "its group and others"
                }
            throw CLIError.configuration(
                "the config file \(path) is writable by \(who) (mode \(octalMode(status))): "
                    + "anyone who can write it could point credential-vault at another issuer and receive your refresh token. "
                    + "Run: chmod go-w \(quoted)"
            )
        }
    }

    /// `path` as one shell word: as it is when it is plain, else in single quotes.
    static func shellQuoted(_ path: String) -> String {
        let plain = path.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || scalar.properties.numericType != nil
                    || "/._-+,:@%".unicodeScalars.contains(scalar))
        }
        return plain && !path.isEmpty ? path : "'" + path.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
