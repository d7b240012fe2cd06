extension VaultConfiguration {
    /// The parameters the configuration adds to every authorization request: ``authorizationParameters``, then
    /// `max_age`, `acr_values` and `login_hint` from ``maxAge``, ``acrValues`` and ``loginHint`` (which win).
    var authorizationRequestParameters: [String: String] {
        var fields = authorizationParameters
        if let maxAge { fields["max_age"] = String(maxAge) }
        if !acrValues.isEmpty { fields["acr_values"] = acrValues.joined(separator: " ") }
        if let loginHint { fields["login_hint"] = loginHint }
        return fields
    }
}
