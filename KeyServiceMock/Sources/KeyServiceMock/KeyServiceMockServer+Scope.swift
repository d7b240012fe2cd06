extension KeyServiceMockServer {
    /// Runs `body` against a server started with `configuration`, and stops the server before returning.
    ///
    /// The server is stopped (listener closed, requests in flight finished, state closed) whether
    /// `body` returns or throws, so nothing of it outlives the call; a state directory is free for the
    /// next server as soon as this returns.
    ///
    /// ```swift
    /// try await KeyServiceMockServer.withServer { server in
    ///     let answer = try await post(server.keyServiceURL.appendingPathComponent("createkey"), ...)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - configuration: how to start the server; the defaults listen on a free port of 127.0.0.1.
    ///   - isolation: the caller's actor, inherited; `body` runs on it.
    ///   - body: what to do with the running server; its result is returned.
    /// - Returns: what `body` returned, after the server has stopped.
    /// - Throws: ``KeyServiceMockError`` when the server cannot start (then `body` does not run), or
    ///   what `body` throws.
    @discardableResult
    public static func withServer<Result>(
        _ configuration: KeyServiceMockConfiguration = .init(),
        isolation: isolated (any Actor)? = #isolation,
        _ body: (KeyServiceMockServer) async throws -> Result
    ) async throws -> Result {
        let server = try await start(configuration)
        let result: Result
        do {
            result = try await body(server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        return result
    }
}
