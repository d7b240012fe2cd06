import CredentialVaultSMART
import Testing

/// Scopes as SMART App Launch 2.2 defines them ("Scopes and Launch Context", HL7/smart-app-launch
/// `input/pages/scopes-and-launch-context.md`): v1 `.read` is v2 `.rs`, `.write` is `.cud`, `.*` is `.cruds`; v2
/// letters are a subset of `cruds` in that order (the page's own counter-example: `.dus` is not a scope).
@Suite("SMART scopes, v1 and v2")
struct SMARTScopeTests {
    @Test(
        "v1 scopes map to v2 exactly as the specification's equivalence says",
        arguments: [
            ("patient/Observation.read", "patient/Observation.rs"),
            ("patient/*.write", "patient/*.cud"),
            ("user/*.*", "user/*.cruds"),
            ("system/Patient.read", "system/Patient.rs"),
        ]
    )
    func version1(_ written: String, _ version2: String) throws {
        let scope = try #require(SMARTScope(written))
        #expect(scope.isVersion1)
        #expect(scope.version2 == version2)
        #expect(scope.text == written)
    }

    @Test(
        "v1 .write is create, update and delete: it neither reads nor searches (Swift-SMART's fork mapped it to .cruds)"
    )
    func writeIsNotRead() throws {
        let scope = try #require(SMARTScope("patient/*.write"))
        #expect(scope.interactions == [.create, .update, .delete])
        #expect(!scope.covers("Observation", .read))
        #expect(!scope.covers("Observation", .search))
        #expect(scope.covers("Observation", .update))
    }

    @Test(
        "v2 scopes keep their letters, type, context and query",
        arguments: [
            ("patient/Observation.rs", "Observation", "rs"),
            ("user/Encounter.cu", "Encounter", "cu"),
            ("patient/Observation.r", "Observation", "r"),
            ("user/*.cruds", "*", "cruds"),
        ]
    )
    func version2(_ written: String, _ type: String, _ letters: String) throws {
        let scope = try #require(SMARTScope(written))
        #expect(!scope.isVersion1)
        #expect(scope.resourceType == type)
        #expect(Set(letters.map { SMARTScope.Interaction(rawValue: $0)! }) == scope.interactions)
        #expect(scope.version2 == written)
    }

    @Test("a v2 scope's query is kept, and it covers only what matches it, so not the whole type")
    func query() throws {
        let text =
            "patient/Observation.rs?category=http://terminology.hl7.org/CodeSystem/observation-category|laboratory"
        let scope = try #require(SMARTScope(text))
        #expect(scope.query == "category=http://terminology.hl7.org/CodeSystem/observation-category|laboratory")
        #expect(scope.context == .patient)
        #expect(scope.version2 == text)
        #expect(!scope.covers("Observation", .read))
    }

    @Test(
        "what is not a resource scope is not read as one",
        arguments: [
            "openid", "fhirUser", "launch", "launch/patient", "offline_access", "patient/Observation.dus",
            "patient/Observation.rr", "patient/Observation.", "practitioner/Observation.read", "patient/.read",
            "patient/Observation.read?category=x", "patient/Obs-ervation.rs",
        ]
    )
    func notResourceScopes(_ text: String) {
        #expect(SMARTScope(text) == nil)
    }

    @Test("a granted scope string is kept exactly and answers what it covers")
    func granted() {
        let granted = SMARTScopes(
            "launch/patient openid fhirUser offline_access patient/Patient.read user/Observation.rs"
        )
        #expect(
            granted.text == "launch/patient openid fhirUser offline_access patient/Patient.read user/Observation.rs"
        )
        #expect(granted.contains("offline_access"))
        #expect(!granted.contains("online_access"))
        #expect(granted.covers("Patient", .read))
        #expect(granted.covers("Patient", .search))
        #expect(granted.covers("Observation", .search))
        #expect(!granted.covers("Observation", .create))
        #expect(!granted.covers("Encounter", .read))
        #expect(granted.resourceScopes.map(\.version2) == ["patient/Patient.rs", "user/Observation.rs"])
    }
}
