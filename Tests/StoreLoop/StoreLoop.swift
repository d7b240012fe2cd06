import CredentialVault
import Foundation

/// A test helper process: stores a refresh token again and again so a test can kill it with -9 mid-write.
/// Usage: vault-store-loop KEY_SERVICE_URL STORE_DIRECTORY USER_ID; the password comes on standard input.
/// Prints "stored N" after the N-th store is durable. Over https it trusts the CA file named by
/// `CREDENTIAL_VAULT_CA_FILE` besides the system's authorities, as `credential-vault` does.
@main
enum StoreLoop {
    static func main() async {
        let arguments = CommandLine.arguments
        guard arguments.count == 4, let url = URL(string: arguments[1]), let password = readLine() else {
            FileHandle.standardError.write(
                Data("usage: vault-store-loop KEY_SERVICE_URL STORE_DIRECTORY USER_ID\n".utf8)
            )
            exit(64)
        }
        do {
            let caFile = ProcessInfo.processInfo.environment["CREDENTIAL_VAULT_CA_FILE"] ?? ""
            let trustRoots = caFile.isEmpty ? nil : try TrustRoots(pemFile: caFile)
            let storage = UserStorage(
                keyService: try HTTPKeyService(
                    baseURL: url,
                    transport: DefaultHTTPTransport.make(trustRoots: trustRoots)
                ),
                directory: URL(fileURLWithPath: arguments[2]),
                opsLimit: 2,
                memLimitBytes: 19 << 20
            )
            let userId = arguments[3]
            var count = 0
            if !(await storage.hasStoredRefreshToken(userId: userId)) {
                try await storage.storeRefreshToken(
                    RefreshToken(token: "token-0", userId: userId),
                    withNewPassword: password
                )
            }
            while true {
                count += 1
                try await storage.storeRefreshToken(
                    RefreshToken(token: "token-\(count)", userId: userId),
                    withExistingPassword: password
                )
                FileHandle.standardOutput.write(Data("stored \(count)\n".utf8))
            }
        } catch {
            FileHandle.standardError.write(Data("vault-store-loop: \(error)\n".utf8))
            exit(1)
        }
    }
}
