import Foundation
import Testing

@testable import CredentialVault

/// A login writes the envelope with its rotated token; the next login reads those bytes back up to three times. The
/// storage keeps what it wrote by its exact bytes, so that read decodes nothing, and what it keeps is exactly what the
/// bytes decode to.
@Suite("the envelope a login wrote is known by its bytes")
struct EnvelopeDecodeCacheTests {
    @Test("after a login that rotated the token, the storage knows the written bytes and what they decode to")
    func writtenEnvelopeIsKnown() async throws {
        try await AuthFixture.with { fixture in
            let userId = try await fixture.register()
            let store = try #require(fixture.configuration.storeDirectory)
            let name = StoreFile.envelope.name(userId: userId)
            let before = try Data(contentsOf: store.appending(path: name))
            let auth = try fixture.restarted().auth
            _ = try await auth.loginWithPassword(password: AuthFixture.password)

            let written = try Data(contentsOf: store.appending(path: name))
            #expect(written != before, "the login wrote no rotated token, so this test shows nothing")
            let known = try #require(await auth.userStorage.lastDecodedEnvelope)
            #expect(known.name == name)
            #expect(known.bytes == written, "the storage keeps an older envelope than the one it wrote")
            #expect(try Envelope.decode(written, path: name).encoded() == known.envelope.encoded())
            // The next login opens what was written.
            _ = try await auth.loginWithPassword(password: AuthFixture.password)
        }
    }
}
