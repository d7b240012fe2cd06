import Foundation

/// A spinner line on standard error while Argon2id and network calls run; nothing when standard error is
/// not a terminal, so pipes and logs stay clean.
enum Progress {
    private static let frames = ["|", "/", "-", "\\"]

    /// Runs `body` with the line `message` drawn (and cleared afterwards) on a terminal.
    static func run<T>(_ message: String, _ body: () async throws -> T) async throws -> T {
        guard Terminal.stderrIsTerminal else { return try await body() }
        // The first frame is drawn before the work starts, so even quick work shows what it was.
        Terminal.writeError("\r\u{1B}[2K\(frames[0]) \(message)")
        let spinner = Task {
            var index = 1
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(120))
                if Task.isCancelled { break }
                Terminal.writeError("\r\u{1B}[2K\(frames[index % frames.count]) \(message)")
                index += 1
            }
        }
        let result: Result<T, any Error>
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        spinner.cancel()
        await spinner.value
        Terminal.writeError("\r\u{1B}[2K")
        return try result.get()
    }
}
