import CredentialVault
import Foundation
import KeyServiceMock

/// One store holding one sealed envelope, for one disk fault: a write is tried under the fault (by the library, in
/// this process or in a child, or by the planted in-place writer), then the previous envelope is opened again.
struct DiskFaultHarness {
    let fixture: VaultFixture
    let directory: URL
    let storage: UserStorage
    let userId = "disk-fault-user"
    let password = "disk fault password"
    /// The token sealed before the fault.
    let previous: RefreshToken

    /// Who tries the write under the fault.
    enum Writer {
        /// The library in this process.
        case library
        /// The library in a `vault-proof-child probe store` run as `identity`, with RLIMIT_FSIZE at `fileSizeLimit`.
        case libraryInChild(ProofChildProcess.Identity, fileSizeLimit: Int?)
        /// The planted defect: `vault-proof-child in-place-write` (no temporary file, no rename).
        case inPlaceWriter(fileSizeLimit: Int?)
    }

    /// What a write under the fault came to.
    enum Outcome: CustomStringConvertible {
        case succeeded
        case failed(kind: String, description: String)

        var description: String {
            switch self {
            case .succeeded: "succeeded"
            case .failed(let kind, let description): "\(kind): \(description)"
            }
        }
    }

    /// A store at `directory` (created by the library) with one envelope sealed under ``password``.
    init(_ fixture: VaultFixture, directory: URL) async throws {
        self.fixture = fixture
        self.directory = directory
        storage = UserStorage(
            keyService: fixture.keyService,
            directory: directory,
            opsLimit: VaultFixture.opsLimit,
            memLimitBytes: VaultFixture.memLimitBytes
        )
        previous = RefreshToken(token: "refresh-before-the-fault-\(UUID().uuidString)", userId: userId)
        try await storage.storeRefreshToken(previous, withNewPassword: password)
    }

    /// The envelope file.
    var envelopeURL: URL {
        get throws {
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
                $0.hasSuffix(".vault")
            }
            guard names.count == 1 else { throw FixtureError("expected one envelope, found \(names)") }
            return directory.appending(path: names[0])
        }
    }

    /// Tries to seal a new token in the envelope.
    func attemptWrite(by writer: Writer) async throws -> Outcome {
        let next = "refresh-during-the-fault-\(UUID().uuidString)"
        switch writer {
        case .library:
            do throws(VaultError) {
                try await storage.storeRefreshToken(
                    RefreshToken(token: next, userId: userId),
                    withExistingPassword: password
                )
                return .succeeded
            } catch {
                return .failed(kind: error.kind.description, description: error.description)
            }
        case .libraryInChild(let identity, let limit):
            return try await probe("store", argument: next, as: identity, fileSizeLimit: limit)
        case .inPlaceWriter(let limit):
            let child = try ProofChildProcess(
                ["in-place-write", directory.path] + Self.limitArguments(limit),
                input: []
            )
            return try await Self.outcome(of: child)
        }
    }

    /// Whether the previous envelope opens with the password and holds the previous token; nil when it does, else
    /// why not. `identity` is the user the store belongs to.
    func previousEnvelopeRefusal(as identity: ProofChildProcess.Identity = .current) async throws -> String? {
        switch identity {
        case .current:
            do throws(VaultError) {
                let opened = try await storage.getStoredRefreshToken(userId: userId, password: password)
                return opened == previous ? nil : "it opened another token than the previous one"
            } catch {
                return "\(error.kind): \(error)"
            }
        case .nobody:
            let child = try ProofChildProcess(
                ["probe", "open", fixture.server.keyServiceURL.absoluteString, directory.path, userId],
                input: [password, previous.token],
                as: .nobody,
                caFile: fixture.caFile
            )
            let lines = try await child.end()
            return lines.contains("opened expected") ? nil : "the probe said \(lines)"
        }
    }

    /// Gives the store directory and its files to `uid` (root only).
    func giveStore(to uid: uid_t) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            guard lchown(directory.appending(path: name).path, uid, uid) == 0 else {
                throw FixtureError("lchown failed with errno \(errno)")
            }
        }
        guard lchown(directory.path, uid, uid) == 0 else { throw FixtureError("lchown failed with errno \(errno)") }
    }

    private func probe(
        _ operation: String,
        argument: String,
        as identity: ProofChildProcess.Identity,
        fileSizeLimit: Int?
    ) async throws -> Outcome {
        let child = try ProofChildProcess(
            ["probe", operation, fixture.server.keyServiceURL.absoluteString, directory.path, userId]
                + Self.limitArguments(fileSizeLimit),
            input: [password, argument],
            as: identity,
            caFile: fixture.caFile
        )
        return try await Self.outcome(of: child)
    }

    private static func limitArguments(_ limit: Int?) -> [String] {
        limit.map { ["--file-size-limit", String($0)] } ?? []
    }

    /// The child's `outcome` line.
    private static func outcome(of child: ProofChildProcess) async throws -> Outcome {
        let lines = try await child.end()
        guard let line = lines.last(where: { $0.hasPrefix("outcome ") }) else {
            let errors = try await child.standardError()
            throw FixtureError("the child said no outcome (\(child.termination)): \(lines) \(errors)")
        }
        if line == "outcome ok" { return .succeeded }
        let rest = line.dropFirst("outcome error ".count)
        let parts = rest.split(separator: "\t", maxSplits: 1)
        return .failed(kind: String(parts.first ?? ""), description: parts.count > 1 ? String(parts[1]) : "")
    }
}
