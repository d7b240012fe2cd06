import Foundation
import NIOConcurrencyHelpers
import VaultCrypto

/// The device codes of the device authorization grant (RFC 8628), in memory (a code lives minutes): each keyed by
/// the SHA-256 of the device code, never in clear, and found by its user code at the verification page.
final class DeviceGrantStore: Sendable {
    /// What the user did at the verification page.
    enum Decision: Sendable {
        case pending
        case approved(MockUser)
        case denied
    }

    /// One device code's request and state.
    struct Record: Sendable {
        let clientId: String
        let scope: String
        let userCode: String
        let expiresAt: Date
        var decision: Decision = .pending
        /// Token requests made with this device code so far.
        var polls = 0
    }

    private let records = NIOLockedValueBox<[Data: Record]>([:])

    /// The user-code alphabet of RFC 8628 section 6.1: consonants only, no vowels (no words), no look-alikes.
    private static let alphabet = Array("BCDFGHJKLMNPQRSTVWXZ")

    /// A new device code for `clientId` and `scope`, with its user code (`XXXX-XXXX`).
    func issue(clientId: String, scope: String, expiresAt: Date) -> (deviceCode: String, userCode: String) {
        let deviceCode = Base64URL.encode(SecureRandom.bytes(count: 32))
        let letters = SecureRandom.bytes(count: 8).map { Self.alphabet[Int($0) % Self.alphabet.count] }
        let userCode = String(letters.prefix(4)) + "-" + String(letters.suffix(4))
        records.withLockedValue {
            $0[Self.key(deviceCode)] = Record(
                clientId: clientId,
                scope: scope,
                userCode: userCode,
                expiresAt: expiresAt
            )
        }
        return (deviceCode, userCode)
    }

    /// Records the user's decision for the live device code whose user code is `userCode` (case and dashes aside).
    /// - Returns: false when no pending code has that user code.
    func decide(userCode: String, _ decision: Decision, at now: Date) -> Bool {
        let wanted = Self.normalized(userCode)
        return records.withLockedValue { records in
            guard
                let entry = records.first(where: { Self.normalized($0.value.userCode) == wanted }),
                entry.value.expiresAt > now, case .pending = entry.value.decision
            else { return false }
            records[entry.key]?.decision = decision
            return true
        }
    }

    /// Counts one poll of `deviceCode` and returns its record as it then is; a code that ended (approved and
    /// redeemed, or denied and answered) is removed by ``remove(_:)``.
    func poll(_ deviceCode: String) -> Record? {
        records.withLockedValue { records in
            let key = Self.key(deviceCode)
            records[key]?.polls += 1
            return records[key]
        }
    }

    /// Forgets `deviceCode`: it was redeemed, or its refusal was answered.
    func remove(_ deviceCode: String) {
        _ = records.withLockedValue { $0.removeValue(forKey: Self.key(deviceCode)) }
    }

    private static func key(_ deviceCode: String) -> Data { Data(SHA256.hash(Data(deviceCode.utf8))) }

    private static func normalized(_ userCode: String) -> String {
        userCode.uppercased().filter { $0 != "-" && $0 != " " }
    }
}
