import Foundation
import VaultTestSupport

/// Protocol 2's calls over this target's HTTP client (``KeyServiceV2Client``, shared with the other key-service suites).
typealias KeyServiceV2Calls = KeyServiceV2Client<HTTPAnswer>

extension HTTPAnswer: JSONAnswer {}

extension KeyServiceV2Client where Answer == HTTPAnswer {
    /// The calls below `base`, over `http`.
    init(base: URL, http: HTTPClient) {
        self.init(base: base) { url, fields in try await http.post(url, json: fields) }
    }
}
