import Foundation
import Testing
import VaultCrypto

@Suite("SecureArena: locked slots for small secrets")
struct SecureArenaTests {
    @Test("slots start zeroed, do not overlap, run out, and come back")
    func slots() throws {
        // One whole word of the free-slot bitmap and part of a second.
        let count = 70
        let arena = SecureArena(slotSize: 64, slotCount: count)
        try #require(arena.isLocked, "running as a user whose RLIMIT_MEMLOCK is spent: no slot is given then")
        var slots: [UnsafeMutableRawPointer] = []
        for _ in 0..<count {
            let slot = try #require(unsafe arena.allocate())
            let bytes = unsafe UnsafeRawBufferPointer(start: slot, count: 64)
            #expect(unsafe bytes.allSatisfy { $0 == 0 })
            // Filled whole: a slot that overlapped another would change its neighbour's bytes.
            unsafe slot.initializeMemory(as: UInt8.self, repeating: UInt8(slots.count), count: 64)
            unsafe slots.append(slot)
        }
        #expect(unsafe arena.allocate() == nil)
        #expect(arena.freeSlots == 0)
        for (index, slot) in unsafe slots.enumerated() {
            let bytes = unsafe UnsafeRawBufferPointer(start: slot, count: 64)
            #expect(unsafe bytes.allSatisfy { $0 == UInt8(index) })
        }
        let addresses = unsafe Set(slots.map { UInt(bitPattern: $0) })
        #expect(addresses.count == count)

        // Given back zeroed: the next holder of slot 17 does not see the 17s its last holder wrote.
        unsafe arena.release(slots[17])
        #expect(arena.freeSlots == 1)
        let again = try #require(unsafe arena.allocate())
        #expect(unsafe again == slots[17])
        #expect(unsafe UnsafeRawBufferPointer(start: again, count: 64).allSatisfy { $0 == 0 })
        for slot in unsafe slots { unsafe arena.release(slot) }
        #expect(arena.freeSlots == count)
    }

    @Test("a buffer goes to the smallest arena whose slots hold it, or to the heap past the largest")
    func arenaForSize() {
        #expect(SecureArena.arena(for: 1) === SecureArena.small)
        #expect(SecureArena.arena(for: SecureArena.small.slotSize) === SecureArena.small)
        #expect(SecureArena.arena(for: SecureArena.small.slotSize + 1) === SecureArena.large)
        #expect(SecureArena.arena(for: SecureArena.large.slotSize) === SecureArena.large)
        #expect(SecureArena.arena(for: SecureArena.large.slotSize + 1) == nil)
    }

    @Test("buffers of every size around the slot sizes keep their bytes, in the arenas and on the heap")
    func sizes() {
        let small = SecureArena.small.slotSize
        let large = SecureArena.large.slotSize
        for count in [0, 1, small - 1, small, small + 1, large - 1, large, large + 1, 3 * large] {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ count) }
            let secret = SecureBytes(bytes)
            #expect(secret.count == count)
            #expect(secret.copyToData() == Data(bytes), "\(count) bytes")
        }
    }

    @Test("buffers made and released on many threads at once never share a slot")
    func concurrent() async {
        // Each task holds a quarter of the small arena's slots and a few more, so tasks running at once also send some
        // to the heap. Kept small: each heap buffer is an mlock and a munlock that other tests' page faults wait on.
        let perTask = SecureArena.small.slotCount / 4 + 16
        let failures = await withTaskGroup(of: Int.self) { group in
            for task in 0..<4 {
                group.addTask {
                    var failures = 0
                    for _ in 0..<5 {
                        let fills = (0..<perTask).map { UInt8(truncatingIfNeeded: task * 31 + $0) }
                        let held = fills.map { SecureBytes([UInt8](repeating: $0, count: 32)) }
                        failures += zip(fills, held).count { fill, secret in
                            secret.copyToData() != Data(repeating: fill, count: 32)
                        }
                    }
                    return failures
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
    }
}
