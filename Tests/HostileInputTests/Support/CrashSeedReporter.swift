import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Prints the seed of the input that was running when the process crashed: a parser that traps (a failed
/// precondition, an overflow, an index out of range) takes the test process down before any test can report
/// anything, so the seed is kept where a signal handler can write it out.
///
/// Each run holds a slot with its parser's name, the index and the seed state of its current input (written before
/// every input: four words and an index, no allocation). On SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE or SIGABRT the
/// handler writes one line per running run with `write(2)` alone (async-signal-safe), then puts back the handler that
/// was there before (Swift's backtracer) and lets the signal happen again, so the crash is reported as usual too.
enum CrashSeedReporter {
    private static let slotCount = 32
    private static let nameLength = 48
    /// Per slot: in use (0/1), index, four seed words, then the name's bytes.
    private static let wordsPerSlot = 6 + nameLength / 8
    private static let signals: [Int32] = [SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE, SIGABRT]

    // Written by the runs, read by the signal handler, which may interrupt any thread: plain memory, never freed.
    private nonisolated(unsafe) static let slots = UnsafeMutablePointer<UInt64>.allocate(
        capacity: slotCount * wordsPerSlot
    )
    private nonisolated(unsafe) static let previous = UnsafeMutablePointer<sigaction>.allocate(capacity: 64)
    private static let installation: Void = {
        slots.initialize(repeating: 0, count: slotCount * wordsPerSlot)
        for signal in signals {
            var action = sigaction()
            #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = { signal in CrashSeedReporter.report(signal) }
            #else
            action.__sigaction_u.__sa_handler = { signal in CrashSeedReporter.report(signal) }
            #endif
            sigemptyset(&action.sa_mask)
            // Runs on the alternate stack when there is one: a stack overflow is a SIGSEGV on a full stack.
            action.sa_flags = SA_ONSTACK
            sigaction(signal, &action, previous + Int(signal))
        }
    }()

    /// A slot for one run; released when the run ends.
    struct Slot {
        fileprivate let base: UnsafeMutablePointer<UInt64>

        /// Input `index`, whose generator was seeded with `state`, starts now.
        func set(index: Int, state: (UInt64, UInt64, UInt64, UInt64)) {
            base[1] = UInt64(index)
            base[2] = state.0
            base[3] = state.1
            base[4] = state.2
            base[5] = state.3
        }
    }

    /// Installs the handler (once per process) and takes a free slot for `parser`; nil when all are taken.
    static func claim(_ parser: String) -> Slot? {
        _ = installation
        return claimLock.withLock { _ -> Slot? in
            for slot in 0..<slotCount where slots[slot * wordsPerSlot] == 0 {
                let base = slots + slot * wordsPerSlot
                let name = UnsafeMutableRawPointer(base + 6).assumingMemoryBound(to: UInt8.self)
                let bytes = Array(parser.utf8.prefix(nameLength - 1))
                for index in 0..<nameLength { name[index] = index < bytes.count ? bytes[index] : 0 }
                base[0] = 1
                return Slot(base: base)
            }
            return nil
        }
    }

    /// Gives the slot back.
    static func release(_ slot: Slot) {
        claimLock.withLock { _ in slot.base[0] = 0 }
    }

    private static let claimLock = Mutex(0)

    /// The handler: only `write(2)`, `sigaction(2)` and stack memory.
    private static func report(_ signal: Int32) {
        writeOut("\nPROOF fuzz: CRASH (signal ")
        writeDecimal(UInt64(signal))
        writeOut(") while these inputs ran; replay each with CREDENTIAL_VAULT_FUZZ_SEED='<seed>' and its suite:\n")
        for slot in 0..<slotCount where slots[slot * wordsPerSlot] == 1 {
            let base = slots + slot * wordsPerSlot
            writeOut("PROOF fuzz: CRASH candidate ")
            let name = UnsafeMutableRawPointer(base + 6).assumingMemoryBound(to: UInt8.self)
            _ = write(2, name, strlen(name))
            writeOut(" input #")
            writeDecimal(base[1])
            writeOut(" seed ")
            writeSeed(base + 2)
            writeOut("\n")
        }
        sigaction(signal, previous + Int(signal), nil)
        // Returning runs the faulting instruction again, now under the previous handler; a raised signal is sent
        // again explicitly.
        if signal == SIGABRT { raise(signal) }
    }

    private static func writeOut(_ text: StaticString) {
        _ = write(2, text.utf8Start, text.utf8CodeUnitCount)
    }

    private static func writeDecimal(_ value: UInt64) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var remaining = value
            var position = buffer.count
            repeat {
                position -= 1
                buffer[position] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
            } while remaining > 0
            _ = write(2, buffer.baseAddress! + position, buffer.count - position)
        }
    }

    /// The four words as Xoshiro's seed text: standard base64 of their little-endian bytes.
    private static func writeSeed(_ words: UnsafeMutablePointer<UInt64>) {
        let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        var raw: (UInt64, UInt64, UInt64, UInt64) = (
            words[0].littleEndian, words[1].littleEndian, words[2].littleEndian, words[3].littleEndian
        )
        var text: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
        withUnsafeBytes(of: &raw) { input in
            withUnsafeMutableBytes(of: &text) { output in
                var out = 0
                var index = 0
                while index < 32 {
                    let b0 = UInt32(input[index])
                    let b1 = index + 1 < 32 ? UInt32(input[index + 1]) : 0
                    let b2 = index + 2 < 32 ? UInt32(input[index + 2]) : 0
                    let triple = b0 << 16 | b1 << 8 | b2
                    output[out] = alphabet.utf8Start[Int(triple >> 18 & 63)]
                    output[out + 1] = alphabet.utf8Start[Int(triple >> 12 & 63)]
                    output[out + 2] = index + 1 < 32 ? alphabet.utf8Start[Int(triple >> 6 & 63)] : UInt8(ascii: "=")
                    output[out + 3] = index + 2 < 32 ? alphabet.utf8Start[Int(triple & 63)] : UInt8(ascii: "=")
                    out += 4
                    index += 3
                }
                _ = write(2, output.baseAddress!, out)
            }
        }
    }
}
