import Foundation
import VaultCrypto

/// One user's sealed refresh token as it lies on disk (JSON).
///
/// Version 2 seals the token with a random data key that no password derives. That key is itself sealed
/// twice: under the password path (`passwordWrap`: a key from the password's wrap key and the key
/// service's key) and, with device unlock on, under the device path (`deviceWrap`: a key from a random
/// device key and the key service's key). So nothing derived from the password is ever stored, and
/// either path still needs the key service. The header (format, user, key id, KDF parameters, salt, the
/// issuer, client and key service the token belongs to, creation time) is the associated data of every
/// box, so editing any of it makes the envelope fail to open.
///
/// Version 1 (the token sealed with a key derived from the password's wrap key) still opens, and is
/// rewritten as version 2 at the next successful login.
struct Envelope: Sendable {
    static let version1 = "credential-vault/v1"
    static let currentFormat = "credential-vault/v2"
    static let kdfAlgorithm = "argon2id13"

    struct KDF: Sendable {
        var algorithm: String
        var opsLimit: UInt64
        var memLimitBytes: UInt64
        var salt: String
    }

    /// One XChaCha20-Poly1305 box, base64url.
    struct Box: Sendable {
        var nonce: String
        var ciphertext: String

        init(_ sealed: XChaCha20Poly1305.SealedBox) {
            nonce = PublicBase64URL.encode(sealed.nonce)
            ciphertext = PublicBase64URL.encode(sealed.ciphertext)
        }

        init?(json: JSONValue) {
            guard let members = json.objectValue, case .string(let nonce)? = members["nonce"],
                case .string(let ciphertext)? = members["ciphertext"]
            else { return nil }
            self.nonce = nonce
            self.ciphertext = ciphertext
        }

        var json: JSONValue { ["nonce": .string(nonce), "ciphertext": .string(ciphertext)] }

        func open(key: SecureBytes, associatedData: Data) throws(CryptoError) -> SecureBytes {
            let sealed = XChaCha20Poly1305.SealedBox(
                nonce: try PublicBase64URL.decode(nonce),
                ciphertext: try PublicBase64URL.decode(ciphertext)
            )
            return try XChaCha20Poly1305.open(sealed, key: key, associatedData: associatedData)
        }
    }

    var format: String
    var userId: String
    var keyId: String
    var kdf: KDF
    /// Where the token belongs (version 2; nil when the storage was made without a binding).
    var binding: EnvelopeBinding?
    /// The key's key-service protocol, when it is not v1 (``KeyServiceVersion``): `2` for an OPRF key. Part of the
    /// key boxes' associated data, so an envelope edited to ask for a v1 login of a v2 key opens nothing.
    var keyServiceProtocol: Int?
    /// The data key sealed under the password path (version 2).
    var passwordWrap: Box?
    /// The data key sealed under the device path, while device unlock is on (version 2).
    var deviceWrap: Box?
    /// What the token box holds: nil for the refresh token's text alone, ``SealedRecord/recordPayload`` for the
    /// token and its session context. Part of the token box's associated data (when set).
    var payload: String?
    var nonce: String
    var ciphertext: String
    /// Unix seconds. Part of the associated data, so no byte of an envelope can change unnoticed.
    var createdAt: Int64
    var updatedAt: Int64

    var isVersion1: Bool { format == Self.version1 }

    /// The key-service protocol of the key (v1 when the header names none).
    var keyServiceVersion: KeyServiceVersion { keyServiceProtocol.flatMap(KeyServiceVersion.init) ?? .v1 }

    /// `payload` of an envelope whose refresh token was erased at logout: the token box is empty, the user, the key
    /// boxes and device unlock stay. Only the token box's associated data covers `payload`, so the key boxes still
    /// open; and an envelope in this state opens no token at all.
    static let loggedOutPayload = "credential-vault/logged-out/v1"

    /// Whether the refresh token was erased at logout (``loggedOutPayload``).
    var isLoggedOut: Bool { payload == Self.loggedOutPayload }

    /// The same envelope with its token box erased (``loggedOutPayload``) and `updatedAt` moved to `now`: no key is
    /// needed to forget a token, and nothing of it is left in the file.
    func erasingToken(now: Date) -> Envelope {
        var copy = self
        copy.payload = Self.loggedOutPayload
        copy.nonce = ""
        copy.ciphertext = ""
        copy.updatedAt = Int64(now.timeIntervalSince1970)
        return copy
    }

    /// A new version 2 envelope holding `token` (and its context) sealed under a new random data key, which is
    /// sealed under `passwordKey`.
    /// - Returns: the envelope and its data key.
    static func seal(
        _ token: RefreshToken,
        userId: String,
        keyId: String,
        parameters: Argon2idParameters,
        binding: EnvelopeBinding?,
        keyServiceVersion: KeyServiceVersion = .v1,
        passwordKey: SecureBytes,
        now: Date
    ) throws(CryptoError) -> (envelope: Envelope, dataKey: SecureBytes) {
        var header = Envelope(
            format: currentFormat,
            userId: userId,
            keyId: keyId,
            kdf: KDF(
                algorithm: kdfAlgorithm,
                opsLimit: parameters.opsLimit,
                memLimitBytes: parameters.memLimitBytes,
                salt: PublicBase64URL.encode(parameters.salt)
            ),
            binding: binding,
            keyServiceProtocol: keyServiceVersion == .v1 ? nil : keyServiceVersion.rawValue,
            passwordWrap: nil,
            deviceWrap: nil,
            payload: nil,
            nonce: "",
            ciphertext: "",
            createdAt: Int64(now.timeIntervalSince1970),
            updatedAt: Int64(now.timeIntervalSince1970)
        )
        let dataKey = XChaCha20Poly1305.generateKey()
        header.passwordWrap = Box(
            try XChaCha20Poly1305.seal(dataKey, key: passwordKey, associatedData: header.keyAssociatedData)
        )
        return (try header.resealing(token, dataKey: dataKey, now: now), dataKey)
    }

    /// The same envelope with `token` (and its context) sealed anew under `dataKey` (a fresh nonce) and
    /// `updatedAt` moved to `now`; the key boxes stay as they are.
    func resealing(_ token: RefreshToken, dataKey: SecureBytes, now: Date) throws(CryptoError) -> Envelope {
        var copy = self
        copy.updatedAt = Int64(now.timeIntervalSince1970)
        let (plaintext, payload) = SealedRecord.plaintext(of: token)
        copy.payload = payload
        let box = try XChaCha20Poly1305.seal(plaintext, key: dataKey, associatedData: copy.tokenAssociatedData)
        copy.nonce = PublicBase64URL.encode(box.nonce)
        copy.ciphertext = PublicBase64URL.encode(box.ciphertext)
        return copy
    }

    /// The sealed token, if `dataKey` is right and no byte of the header changed.
    func open(dataKey: SecureBytes) throws(CryptoError) -> SecureBytes {
        let sealed = XChaCha20Poly1305.SealedBox(
            nonce: try PublicBase64URL.decode(nonce),
            ciphertext: try PublicBase64URL.decode(ciphertext)
        )
        return try XChaCha20Poly1305.open(sealed, key: dataKey, associatedData: tokenAssociatedData)
    }

    /// The refresh token (and its context) sealed in the envelope, if `dataKey` is right, no byte of the header
    /// changed and the box holds what the header says.
    func openToken(dataKey: SecureBytes) throws(CryptoError) -> RefreshToken {
        guard let token = SealedRecord.token(from: try open(dataKey: dataKey), payload: payload, userId: userId) else {
            throw CryptoError(.authenticationFailed, "the sealed record is not a refresh token")
        }
        return token
    }

    /// The data key from the password path (version 2).
    func dataKey(passwordKey: SecureBytes) throws(CryptoError) -> SecureBytes {
        guard let passwordWrap else { throw CryptoError(.authenticationFailed, "the envelope has no password box") }
        return try passwordWrap.open(key: passwordKey, associatedData: keyAssociatedData)
    }

    /// The data key from the device path (version 2).
    func dataKey(deviceWrapKey: SecureBytes) throws(CryptoError) -> SecureBytes {
        guard let deviceWrap else { throw CryptoError(.authenticationFailed, "the envelope has no device box") }
        return try deviceWrap.open(key: deviceWrapKey, associatedData: keyAssociatedData)
    }

    /// The same envelope with `dataKey` sealed under the device path (nil: device unlock off).
    func withDeviceWrap(dataKey: SecureBytes, deviceWrapKey: SecureBytes?) throws(CryptoError) -> Envelope {
        var copy = self
        copy.deviceWrap = try deviceWrapKey.map { key throws(CryptoError) in
            Box(try XChaCha20Poly1305.seal(dataKey, key: key, associatedData: keyAssociatedData))
        }
        return copy
    }

    /// The KDF parameters; strict decoding, validated before any work is done with them.
    func parameters() throws(CryptoError) -> Argon2idParameters {
        let parameters = Argon2idParameters(
            opsLimit: kdf.opsLimit,
            memLimitBytes: kdf.memLimitBytes,
            salt: try PublicBase64URL.decode(kdf.salt)
        )
        try parameters.validate()
        return parameters
    }

    // MARK: Associated data

    /// What the key boxes authenticate: every field that stays while the key stays, each length-prefixed so
    /// no two headers give the same bytes.
    var keyAssociatedData: Data {
        var data = AssociatedData()
        data.field(format)
        data.field(userId)
        data.field(keyId)
        data.field(kdf.algorithm)
        data.number(kdf.opsLimit)
        data.number(kdf.memLimitBytes)
        data.field(kdf.salt)
        if let binding {
            data.number(1)
            data.field(binding.issuer)
            data.field(binding.clientId)
            data.field(binding.keyService)
        } else {
            data.number(0)
        }
        data.number(UInt64(bitPattern: createdAt))
        // Only when set, so the boxes sealed before protocol v2 existed keep their associated data.
        if let keyServiceProtocol { data.number(UInt64(bitPattern: Int64(keyServiceProtocol))) }
        return data.bytes
    }

    /// What the token box authenticates: version 1's whole header, or version 2's key header and `updatedAt`.
    var tokenAssociatedData: Data {
        var data = AssociatedData()
        if isVersion1 {
            data.field(format)
            data.field(userId)
            data.field(keyId)
            data.field(kdf.algorithm)
            data.number(kdf.opsLimit)
            data.number(kdf.memLimitBytes)
            data.field(kdf.salt)
            data.number(UInt64(bitPattern: createdAt))
        } else {
            data.field(keyAssociatedData)
        }
        data.number(UInt64(bitPattern: updatedAt))
        // Only when set, so the boxes sealed before session contexts existed keep their associated data.
        if let payload { data.field(payload) }
        return data.bytes
    }

    /// Length-prefixed fields and big-endian numbers.
    private struct AssociatedData {
        var bytes = Data()

        mutating func field(_ text: String) {
            field(Data(text.utf8))
        }

        mutating func field(_ value: Data) {
            number32(UInt32(value.count))
            bytes.append(value)
        }

        mutating func number(_ value: UInt64) {
            withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
        }

        private mutating func number32(_ value: UInt32) {
            withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
        }
    }

    // MARK: Encoding

    // The file is a JSON object: `format`, `userId`, `keyId`, `kdf` (`algorithm`, `opsLimit`, `memLimitBytes`,
    // `salt`), `nonce`, `ciphertext`, `createdAt` and `updatedAt` always; `binding` (``EnvelopeBinding/sealed``),
    // `keyServiceProtocol`, `passwordWrap` and `deviceWrap` (each `nonce`, `ciphertext`) and `payload` when set.
    // Written by ``JSONWriter``, laid out for a person to read, and read by the strict parser, not through `Codable`:
    // every login writes one, with every cache cold after Argon2id (issue 23). `JSONEncoder` wrote the envelopes of
    // earlier versions: the same members, which read the same. Every number is a whole one below 2^53, which a
    // `Double` holds exactly: a larger one is no envelope this library wrote, and is refused as damaged (an Argon2id
    // cost that large was refused too, as unusable: its ceilings are 64 passes and 4 GiB).

    /// The envelope as JSON.
    var json: JSONValue {
        var members: [String: JSONValue] = [
            "format": .string(format),
            "userId": .string(userId),
            "keyId": .string(keyId),
            "kdf": [
                "algorithm": .string(kdf.algorithm),
                "opsLimit": .number(Double(kdf.opsLimit)),
                "memLimitBytes": .number(Double(kdf.memLimitBytes)),
                "salt": .string(kdf.salt),
            ],
            "nonce": .string(nonce),
            "ciphertext": .string(ciphertext),
            "createdAt": .number(Double(createdAt)),
            "updatedAt": .number(Double(updatedAt)),
        ]
        members["binding"] = binding?.sealed
        members["keyServiceProtocol"] = keyServiceProtocol.map { .number(Double($0)) }
        members["passwordWrap"] = passwordWrap?.json
        members["deviceWrap"] = deviceWrap?.json
        members["payload"] = payload.map(JSONValue.string)
        return .object(members)
    }

    /// `value` as a whole number of magnitude below 2^53; nil for anything else (absent included).
    private static func whole(_ value: JSONValue?) -> Int64? {
        guard case .number(let number)? = value, abs(number) < 0x20_0000_0000_0000 else { return nil }
        return Int64(exactly: number)
    }

    /// The file's bytes (``json``, laid out).
    func encoded() -> Data {
        Data(JSONWriter.bytes(of: json, indented: true))
    }

    /// Decodes an envelope read from `path`; a record of another format is reported, never guessed at.
    static func decode(_ data: Data, path: String) throws(VaultError) -> Envelope {
        // One parse for a readable envelope (a login reads it up to three times). A record of a format this version
        // does not know is reported as such, whatever else it holds.
        let members: [String: JSONValue]
        do {
            members = try UntrustedJSON.members(from: data)
        } catch {
            throw .damagedRecord(path: path, "not an envelope (\(error))")
        }
        guard case .string(let format)? = members["format"] else {
            throw .damagedRecord(path: path, "not an envelope (no format field)")
        }
        guard format == currentFormat || format == version1 else {
            throw .unsupportedFormat(path: path, format: format)
        }
        guard let envelope = Envelope(json: members) else {
            throw .damagedRecord(path: path, "a field is missing or has the wrong type")
        }
        guard envelope.kdf.algorithm == kdfAlgorithm else {
            throw .unsupportedFormat(path: path, format: "\(envelope.format) with KDF \(envelope.kdf.algorithm)")
        }
        if let payload = envelope.payload, !SealedRecord.payloads.contains(payload), payload != loggedOutPayload {
            throw .unsupportedFormat(path: path, format: "\(envelope.format) holding \(payload)")
        }
        if let version = envelope.keyServiceProtocol {
            // Only v2 is ever written; v1 is the field's absence.
            guard version == KeyServiceVersion.v2.rawValue, !envelope.isVersion1 else {
                throw .unsupportedFormat(path: path, format: "\(envelope.format) with key-service protocol \(version)")
            }
        }
        guard envelope.isVersion1 || envelope.passwordWrap != nil else {
            throw .damagedRecord(path: path, "the password box is missing")
        }
        return envelope
    }
}

extension Envelope {
    /// The envelope ``json`` wrote (a member that may be absent also read as absent when null); nil when `members`
    /// is not one.
    init?(json members: [String: JSONValue]) {
        guard case .string(let format)? = members["format"], case .string(let userId)? = members["userId"],
            case .string(let keyId)? = members["keyId"], let kdf = members["kdf"]?.objectValue,
            case .string(let algorithm)? = kdf["algorithm"], let opsLimit = Self.whole(kdf["opsLimit"]),
            let memLimitBytes = Self.whole(kdf["memLimitBytes"]), case .string(let salt)? = kdf["salt"],
            case .string(let nonce)? = members["nonce"], case .string(let ciphertext)? = members["ciphertext"],
            let createdAt = Self.whole(members["createdAt"]), let updatedAt = Self.whole(members["updatedAt"]),
            opsLimit >= 0, memLimitBytes >= 0,
            case .some(let binding) = UntrustedJSON.optional(members["binding"], EnvelopeBinding.init(sealed:)),
            case .some(let keyServiceProtocol) = UntrustedJSON.optional(members["keyServiceProtocol"], Self.whole),
            case .some(let passwordWrap) = UntrustedJSON.optional(members["passwordWrap"], Box.init(json:)),
            case .some(let deviceWrap) = UntrustedJSON.optional(members["deviceWrap"], Box.init(json:)),
            case .some(let payload) = UntrustedJSON.optionalString("payload", in: members)
        else { return nil }
        self.init(
            format: format,
            userId: userId,
            keyId: keyId,
            kdf: KDF(
                algorithm: algorithm,
                opsLimit: UInt64(opsLimit),
                memLimitBytes: UInt64(memLimitBytes),
                salt: salt
            ),
            binding: binding,
            keyServiceProtocol: keyServiceProtocol.map { Int($0) },
            passwordWrap: passwordWrap,
            deviceWrap: deviceWrap,
            payload: payload,
            nonce: nonce,
            ciphertext: ciphertext,
            createdAt: createdAt,
            updatedAt: updatedAt
        )
    }
}
