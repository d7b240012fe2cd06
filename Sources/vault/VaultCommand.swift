import ArgumentParser
import Foundation
import VaultCrypto

@main
struct VaultCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vault",
        abstract: "Keeps you signed in with a short password: an encrypted refresh token, unlocked by a key service.",
        subcommands: [Demo.self]
    )
}

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Runs the self-check: derives a key from a password, seals a secret and opens it again."
    )

    func run() async throws {
        let password = "correct horse battery staple"
        let secret = "demo-refresh-token-\(Base64URL.encode(SecureRandom.bytes(count: 12)))"
        let parameters = try Argon2idParameters.generate()
        print("Argon2id: \(parameters.opsLimit) passes over \(parameters.memLimitBytes >> 20) MiB, random 16-byte salt")

        let clock = ContinuousClock()
        let started = clock.now
        let derived = try await Argon2id.deriveKey(password: password, parameters: parameters)
        print("derived 64 bytes from the password in \(clock.now - started)")

        let associatedData = Data("credential-vault/demo".utf8)
        let key = derived.slice(32..<64)
        let box = try XChaCha20Poly1305.seal(SecureBytes(Data(secret.utf8)), key: key, associatedData: associatedData)
        print(
            "sealed \(secret.utf8.count) bytes: nonce \(box.nonce.count) bytes, ciphertext+tag \(box.ciphertext.count) bytes"
        )

        let again = try await Argon2id.deriveKey(password: password, parameters: parameters)
        let opened = try XChaCha20Poly1305.open(box, key: again.slice(32..<64), associatedData: associatedData)
        guard opened.utf8String() == secret else {
            throw ValidationError("the opened secret differs from the sealed one")
        }
        print("opened with the same password: the secret matches")

        let wrong = try await Argon2id.deriveKey(password: "correct horse battery stapler", parameters: parameters)
        do {
            _ = try XChaCha20Poly1305.open(box, key: wrong.slice(32..<64), associatedData: associatedData)
            throw ValidationError("a wrong password opened the secret")
        } catch let error as CryptoError where error.code == .authenticationFailed {
            print("a wrong password is refused: \(error.reason)")
        }
        print("self-check passed")
    }
}
