internal import CSodium
import Synchronization
import VaultPOSIX

/// Pages for small secrets, mapped and locked once: a ``SecureBytes`` that fits a slot takes one here instead of a
/// heap block locked and unlocked on its own.
///
/// Locking heap blocks one at a time costs an `mlock` and a `munlock` for each buffer, and each of them splits or
/// merges the heap's mapping under the process's memory-map lock, which every thread's page faults wait on. A login
/// makes about a dozen such buffers: 60–70 µs of a 4–5 ms login over https (issue 23). Here the pages are locked
/// once, when the arena is first used, and on Linux also left out of core dumps (`MADV_DONTDUMP`, which takes whole
/// pages only, so no heap block could ask for it).
///
/// A buffer larger than the largest slot, or one asked for while every slot is taken, goes to the heap. So does every
/// buffer when the arena's pages could not be locked (`RLIMIT_MEMLOCK`): the heap path then tries its own lock for
/// each buffer, as before the arenas. Both arenas together lock 32 KiB, half of the smallest default limit (64 KiB on
/// kernels before 5.16). A free slot is all zeros: fresh anonymous pages, and ``release(_:)`` zeroes a slot before it
/// marks it free.
package final class SecureArena: Sendable {
    /// Keys, nonces and their text: 256 slots of 64 bytes (16 KiB).
    package static let small = SecureArena(slotSize: 64, slotCount: 256)
    /// Sealed records and other plaintexts of a few hundred bytes: 8 slots of 2 KiB (16 KiB).
    package static let large = SecureArena(slotSize: 2048, slotCount: 8)

    /// The arena whose slots hold `count` bytes, nil when `count` is larger than every slot.
    package static func arena(for count: Int) -> SecureArena? {
        if count <= small.slotSize { return small }
        if count <= large.slotSize { return large }
        return nil
    }

    /// The bytes in a slot.
    package let slotSize: Int
    /// The number of slots.
    package let slotCount: Int
    /// Whether the pages are mapped and locked in memory; when not, ``allocate()`` gives no slot.
    package let isLocked: Bool
    /// The first slot's address; 0 when the pages could not be mapped.
    private let address: UInt
    /// One bit per slot, set while the slot is free.
    private let free: Mutex<[UInt64]>

    /// `slotCount` slots of `slotSize` bytes; the two shared arenas are ``small`` and ``large``, tests make their own.
    package init(slotSize: Int, slotCount: Int) {
        precondition(slotCount > 0 && slotSize > 0 && slotSize % 16 == 0, "16-byte aligned slots")
        self.slotSize = slotSize
        self.slotCount = slotCount
        let size = slotSize * slotCount
        let mapped = unsafe mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let pages = unsafe mapped, unsafe pages != MAP_FAILED else {
            address = 0
            isLocked = false
            free = Mutex([])
            return
        }
        // Advice only: a kernel that refuses it still gets locked, zeroed slots.
        _ = unsafe CoreDumps.exclude(pages: pages, count: size)
        isLocked = unsafe mlock(pages, size) == 0
        address = UInt(bitPattern: pages)
        free = Mutex(
            (0..<(slotCount + 63) / 64).map { word in
                let slots = min(64, slotCount - word * 64)
                return slots == 64 ? .max : (1 << UInt64(slots)) - 1
            }
        )
    }

    deinit {
        guard address != 0, let pages = unsafe UnsafeMutableRawPointer(bitPattern: address) else { return }
        let size = slotSize * slotCount
        unsafe sodium_memzero(pages, size)
        if isLocked { unsafe Sodium.check(munlock(pages, size), cannotFail: "munlock") }
        _ = unsafe munmap(pages, size)
    }

    /// A free slot of ``slotSize`` zeroed bytes, nil when every slot is taken or the pages are not locked.
    package func allocate() -> UnsafeMutableRawPointer? {
        guard isLocked else { return nil }
        let index: Int? = free.withLock { words in
            for word in words.indices where words[word] != 0 {
                let bit = words[word].trailingZeroBitCount
                words[word] &= ~(1 << UInt64(bit))
                return word * 64 + bit
            }
            return nil
        }
        guard let index else { return nil }
        return unsafe UnsafeMutableRawPointer(bitPattern: address + UInt(index * slotSize))
    }

    /// Zeroes `slot`, from ``allocate()``, and marks it free.
    package func release(_ slot: UnsafeMutableRawPointer) {
        let start = UInt(bitPattern: slot)
        precondition(
            address != 0 && start >= address && (start - address) % UInt(slotSize) == 0
                && Int((start - address) / UInt(slotSize)) < slotCount,
            "not a slot of this arena"
        )
        let index = Int((start - address) / UInt(slotSize))
        unsafe sodium_memzero(slot, slotSize)
        free.withLock { words in
            let (word, bit) = (index / 64, UInt64(index % 64))
            precondition(words[word] & (1 << bit) == 0, "a slot given back twice")
            words[word] |= 1 << bit
        }
    }

    /// Slots free now, for tests.
    package var freeSlots: Int {
        free.withLock { words in words.reduce(0) { $0 + $1.nonzeroBitCount } }
    }
}
