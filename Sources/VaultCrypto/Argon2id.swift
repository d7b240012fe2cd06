internal import CSodium
package import Foundation
import Synchronization

/// The Argon2id password KDF (libsodium's `crypto_pwhash`, ALG_ARGON2ID13).
public enum Argon2id {
    /// Derives `outputLength` bytes from `password`.
    ///
    /// The password is normalised to Unicode NFKC first, so the same password typed on another
    /// keyboard or operating system derives the same bytes. The work runs on a thread of its own,
    /// never on Swift's cooperative pool, so concurrent derivations do not stall other tasks.
    /// - Cost: as the parameters say (defaults: about 0.1 s of CPU and 64 MiB of memory).
    /// - Throws: ``CryptoError`` for parameters out of bounds or a derivation that fails (memory).
    public static func deriveKey(
        password: String,
        parameters: Argon2idParameters,
        outputLength: Int = 64
    ) async throws(CryptoError) -> SecureBytes {
        try parameters.validate()
        guard outputLength >= Int(crypto_pwhash_BYTES_MIN), outputLength <= 1024 else {
            throw CryptoError(.invalidLength, "an Argon2id output must be 16 to 1024 bytes")
        }
        let normalized = SecureBytes(password.precomposedStringWithCompatibilityMapping.utf8)
        let result: Result<SecureBytes, CryptoError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                lowerThreadPriority()
                occupancy.withLock { $0.waiting += 1 }
                slots.wait()
                occupancy.withLock { $0.start() }
                let result = Result { () throws(CryptoError) in
                    try derive(normalized, parameters: parameters, outputLength: outputLength)
                }
                occupancy.withLock { $0.running -= 1 }
                slots.signal()
                continuation.resume(returning: result)
            }
            thread.name = "credential-vault.argon2id"
            thread.start()
        }
        return try result.get()
    }

    /// How many derivations may run at once: one fewer than there are cores (at least one), so a core always
    /// stays free for everything else and many concurrent logins queue here instead of starving request handling.
    /// Measured on 2 cores: 8 concurrent 64 MiB derivations all at once stalled other tasks for up to 100 ms
    /// (Benchmarks/heartbeat prints the figure with this limit in place).
    package static let maximumConcurrentDerivations = max(1, ProcessInfo.processInfo.activeProcessorCount - 1)

    /// The places for running derivations; a derivation's own thread waits here, never a task of the pool.
    /// Tests may hold every place to keep derivations waiting.
    package static let slots = DispatchSemaphore(value: maximumConcurrentDerivations)

    /// Derivations waiting and running in this process, counted so tests can check the limit without a clock.
    package struct Occupancy: Sendable, Equatable {
        /// Derivations whose thread waits for a place in ``Argon2id/slots``.
        package var waiting = 0
        /// Derivations running now.
        package var running = 0
        /// The most derivations that ever ran at once in this process.
        package var mostRunning = 0

        mutating func start() {
            waiting -= 1
            running += 1
            mostRunning = max(mostRunning, running)
        }
    }

    /// The counts now: a snapshot, taken under a lock that each derivation takes three times.
    package static var currentOccupancy: Occupancy { occupancy.withLock { $0 } }

    private static let occupancy = Mutex(Occupancy())

    /// A derivation is seconds of CPU nobody waits on interactively: it yields the cores to everything else
    /// (on Linux, nice 10 for this thread alone), so many concurrent logins never stall request handling.
    private static func lowerThreadPriority() {
        #if os(Linux)
        // Under NPTL the nice value is per thread, and "who" 0 names the calling thread. Best effort: if the
        // kernel refuses, the derivation runs at normal priority and the slots above still leave a core free.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #else
        Thread.current.qualityOfService = .utility
        #endif
    }

    private static func derive(
        _ password: SecureBytes,
        parameters: Argon2idParameters,
        outputLength: Int
    ) throws(CryptoError) -> SecureBytes {
        try unsafe SecureBytes(count: outputLength) { out throws(CryptoError) in
            let status = unsafe password.withUnsafeBytes { pass in
                unsafe parameters.salt.withUnsafeBytes { salt in
                    // An empty password still has a valid pointer: SecureBytes always allocates one byte.
                    unsafe crypto_pwhash(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        UInt64(out.count),
                        pass.baseAddress!.assumingMemoryBound(to: CChar.self),
                        UInt64(pass.count),
                        salt.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        parameters.opsLimit,
                        Int(parameters.memLimitBytes),
                        crypto_pwhash_ALG_ARGON2ID13
                    )
                }
            }
            try Sodium.check(
                status,
                .keyDerivationFailed,
                "Argon2id failed; \(parameters.memLimitBytes >> 20) MiB may not be available"
            )
        }
    }
}
