import ArgumentParser
import CredentialVault
import Foundation

/// `credential-vault status`: the stored users and what is known about them, without any network call.
struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the stored users: password set, device unlock, key locked as far as known.",
        discussion: """
            Makes no network call: "likely locked" means this device saw three wrong passwords in a row, on \
            which the key service locks the key; the key service is the judge (a wrong password typed on another \
            device is not counted here, and a lost count file forgets).
            """
    )

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() async throws {
        try await VaultContext.with(connection, offline: true) { context in
            let storage = context.userStorage
            var rows: [(user: String, deviceUnlock: Bool, wrong: Int, complete: Bool, loggedIn: Bool)] = []
            for user in try await storage.availableUserIds {
                let wrong = await storage.consecutiveWrongPasswords(userId: user)
                // Not every attempt seen here (the record is missing or began without a known 0): the count is a
                // lower bound, and the key service may have locked the key already.
                let complete = await storage.wrongPasswordsKnownHere(userId: user) != nil
                let loggedIn = await storage.hasStoredRefreshToken(userId: user)
                rows.append((user, await storage.hasDeviceUnlock(userId: user), wrong, complete, loggedIn))
            }
            let issuer =
                context.isEmbedded
                ? "embedded KeyServiceMock (\(context.vault.configuration.issuer.absoluteString), started on use)"
                : context.vault.configuration.issuer.absoluteString
            if json {
                let users: [JSONValue] = rows.map { row in
                    .object([
                        "user": .string(row.user),
                        "passwordSet": .bool(true),
                        "deviceUnlock": .bool(row.deviceUnlock),
                        "wrongPasswordsInARow": .number(Double(row.wrong)),
                        "wrongPasswordsCountComplete": .bool(row.complete),
                        "keyLocked": .bool(row.wrong >= 3),
                        "loggedIn": .bool(row.loggedIn),
                    ])
                }
                let object: JSONValue = .object([
                    "issuer": .string(context.vault.configuration.issuer.absoluteString),
                    "embedded": .bool(context.isEmbedded),
                    "store": .string(context.storeDirectory.path),
                    "users": .array(users),
                ])
                Terminal.output(Format.json(object))
                return
            }
            // The issuer, the store and the user ids come from settings and the store: shown with controls escaped.
            Terminal.output("issuer  \(Format.escapingControlCharacters(issuer))")
            Terminal.output("store   \(Format.escapingControlCharacters(context.storeDirectory.path))")
            guard !rows.isEmpty else {
                Terminal.output("no users stored: `credential-vault register` logs in and sets a password")
                return
            }
            let users = rows.map { Format.escapingControlCharacters($0.user) }
            let width = max(users.map(\.count).max() ?? 0, 4)
            Terminal.output(
                "USER".padding(toLength: width, withPad: " ", startingAt: 0)
                    + "  PASSWORD  DEVICE UNLOCK  KEY"
            )
            for (row, user) in zip(rows, users) {
                let key =
                    !row.loggedIn
                    ? "logged out here (`credential-vault register` logs in again)"
                    : row.wrong >= 3
                        ? "likely locked (3 wrong passwords in a row here; the key service decides)"
                        : !row.complete
                            ? "at least \(row.wrong) wrong password\(row.wrong == 1 ? "" : "s") in a row (not every "
                                + "attempt was seen here: the key service may already have locked the key)"
                            : row.wrong > 0
                                ? "\(row.wrong) wrong password\(row.wrong == 1 ? "" : "s") in a row"
                                : "ok as far as known"
                Terminal.output(
                    user.padding(toLength: width, withPad: " ", startingAt: 0) + "  set       "
                        + (row.deviceUnlock ? "on " : "off") + "            " + key
                )
            }
        }
    }
}
