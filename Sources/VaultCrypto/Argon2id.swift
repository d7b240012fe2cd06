internal import CSodium
package import Foundation

/// The Argon2id password KDF (libsodium's `crypto_pwhash`, ALG_ARGON2ID13).
public enum Argon2id {
    /// Derives `outputLength` bytes from `password`.
    ///
    /// The password is normalised to Unicode NFKC first, so the same password typed on another
    /// keyboard or operating system derives the same bytes. The work runs on a thread of its own,
    /// never on Swift's cooperative pool, so concurrent derivations do not stall other tasks; at most
    /// ``maximumConcurrentDerivations`` run at once and at most ``maximumWaitingDerivations`` wait for
    /// their turn, each on its thread.
    /// - Cost: as the parameters say (defaults: about 0.1 s of CPU and 64 MiB of memory).
    /// - Throws: ``CryptoError`` for parameters out of bounds or a derivation that fails (memory), and
    ///   `.busy`, at once, when ``maximumWaitingDerivations`` derivations wait already: try again later.
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
        return try await queue.run {
            Result { () throws(CryptoError) in
                try derive(normalized, parameters: parameters, outputLength: outputLength)
            }
        }
    }

    /// How many derivations may run at once: one fewer than there are cores (at least one), so a core always
    /// stays free for everything else and many concurrent logins queue here instead of starving request handling.
    /// Measured on 2 cores: 8 concurrent 64 MiB derivations all at once stalled other tasks for up to 100 ms
    /// (Benchmarks/heartbeat prints the figure with this limit in place).
    package static var maximumConcurrentDerivations: Int { queue.maximumRunning }

    /// The default of ``maximumWaitingDerivations``: 256. A few hundred parked threads cost little (their stacks
    /// are mostly untouched); thousands would not. This package's own parallel test suite, on 2 cores, has
    /// 65 derivations waiting at its peak, so a cap of 64 would refuse bursts that are harmless.
    public static let defaultMaximumWaitingDerivations = 256

    /// How many derivations may wait for their turn in this process, each on a thread of its own; past it
    /// ``deriveKey(password:parameters:outputLength:)`` fails at once with `.busy` instead of starting one more
    /// thread. Defaults to ``defaultMaximumWaitingDerivations``; a change applies to derivations that arrive
    /// later. Each one waiting holds its password's normalised bytes and a thread's stack, not its memory cost.
    public static var maximumWaitingDerivations: Int {
        get { queue.maximumWaiting }
        set { queue.maximumWaiting = newValue }
    }

    /// This process's derivations: where they wait and run.
    package static let queue = DerivationQueue(
        maximumRunning: ProcessInfo.processInfo.activeProcessorCount - 1,
        maximumWaiting: defaultMaximumWaitingDerivations
    )

    /// The places for running derivations; a derivation's own thread waits here, never a task of the pool.
    /// Tests may hold every place to keep derivations waiting.
    package static var slots: DispatchSemaphore { queue.slots }

    /// The counts now: a snapshot.
    package static var currentOccupancy: DerivationQueue.Occupancy { queue.occupancy }

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
