import ArgumentParser
import Foundation
import KeyServiceCore
import Logging
import ServiceLifecycle

/// `keyservice peppers`: how many keys each pepper version protects, so an operator knows when an old one can go.
struct PeppersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peppers",
        abstract: "Print how many keys each pepper version protects.",
        discussion: """
            Prints one line per version: "pepper N: K keys". A key moves to the newest pepper at its next login \
            with the right secret; a login with the long secret (device unlock) cannot move it, because the long \
            secret does not unseal the key's sealed long secret. An old pepper may be removed from every instance \
            once its count is 0; removing it earlier makes the keys under it unusable.
            """
    )

    @OptionGroup var storage: StorageOptions

    func run() async throws {
        let logger = Logger(label: "keyservice")
        let opened = try await storage.open(logger: logger)
        let counts = try await withThrowingTaskGroup(of: [Int: Int]?.self) { group in
            if let service = opened.service {
                group.addTask {
                    try await service.run()
                    return nil
                }
            }
            group.addTask { try await opened.storage.keysByPepperVersion() }
            var counts: [Int: Int] = [:]
            while let result = try await group.next() {
                if let result {
                    counts = result
                    break
                }
            }
            group.cancelAll()
            return counts
        }
        if counts.isEmpty { print("no keys") }
        for (version, keys) in counts.sorted(by: { $0.key < $1.key }) {
            print("pepper \(version): \(keys) \(keys == 1 ? "key" : "keys")")
        }
        if let sqlite = opened.storage as? SQLiteKeyStorage { try? sqlite.close() }
    }
}
