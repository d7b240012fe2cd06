/// What a SMART launch put in context: the patient and encounter an app works on, and how it was launched.
struct LaunchContext: Sendable {
    var patient: String?
    var encounter: String?
    /// An EHR launch (a `launch` id created with ``KeyServiceMockServer/createEHRLaunch(patient:encounter:)``),
    /// rather than a standalone one.
    var isEHRLaunch: Bool

    /// A standalone launch with nothing in context (a password grant, or a session from before a restart).
    static let none = LaunchContext(patient: nil, encounter: nil, isEHRLaunch: false)
}
