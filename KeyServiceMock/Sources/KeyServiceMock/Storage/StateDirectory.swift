import Foundation
import VaultPOSIX

/// The rules a state directory must meet before the server trusts what is in it.
enum StateDirectory {
    /// Checks that `directory` is a directory, owned by this process's user, with mode 0700.
    ///
    /// Checked at every start, not only when the directory is created: a directory others can enter
    /// exposes the pepper and the signing key, and one others can write lets them swap either.
    /// - Throws: ``StateError`` naming the path and the command that fixes it.
    static func checkPermissions(_ directory: URL) throws {
        let path = directory.path
        let info: FileStatus
        do throws(FileStatus.Failure) {
            info = try FileStatus(path: path)
        } catch {
            throw StateError("cannot read the state directory \(path): \(String(cString: strerror(error.errorNumber)))")
        }
        guard info.kind == .directory else {
            throw StateError("the state directory \(path) is not a directory")
        }
        guard info.owner == geteuid() else {
            throw StateError(
                "the state directory \(path) belongs to uid \(info.owner), not to this user (uid \(geteuid())): "
                    + "use a directory of your own"
            )
        }
        let mode = info.permissions & 0o777
        guard mode == 0o700 else {
            throw StateError(
                "the state directory \(path) has mode \(String(mode, radix: 8)), but must be 700 (only its owner "
                    + "may enter it): run chmod 700 \(shellQuoted(path))"
            )
        }
    }

    /// `text` as one shell word: as it is when it needs no quoting, else in single quotes.
    static func shellQuoted(_ text: String) -> String {
        let plain = text.unicodeScalars.allSatisfy {
            CharacterSet.alphanumerics.contains($0) && $0.isASCII || "/._-+=:,@%".unicodeScalars.contains($0)
        }
        if plain, !text.isEmpty { return text }
        return "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
