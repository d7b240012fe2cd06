import Foundation
import VaultPOSIX

/// A program that asks for the password where no terminal is (`CREDENTIAL_VAULT_ASKPASS`, else `SSH_ASKPASS`), as
/// ssh and git run one: it gets the prompt as its only argument and prints the password on its standard output.
struct Askpass {
    /// The program, as the variable names it (looked up on PATH when it has no slash).
    let program: String
    /// The variable that named it.
    let variable: String

    /// The longest answer read: a password is a line, not a file.
    static let maximumAnswer = 4096

    /// The askpass program the environment names, or nil when neither variable is set (or both are empty).
    static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Askpass? {
        for variable in ["CREDENTIAL_VAULT_ASKPASS", "SSH_ASKPASS"] {
            if let program = environment[variable], !program.isEmpty {
                return Askpass(program: program, variable: variable)
            }
        }
        return nil
    }

    /// Runs the program with `prompt` and returns the first line it printed. Its standard input is /dev/null (ours
    /// may be a helper protocol's); its standard error is ours. The bytes read are zeroed before returning.
    /// - Throws: ``CLIError`` when it cannot be run, fails, or prints no password.
    func read(_ prompt: String) throws -> String {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw CLIError.other("cannot make a pipe for \(variable) (errno \(errno))") }
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { if null >= 0 { close(null) } }
        let pid: pid_t
        do {
            pid = try ChildProcess.spawn(
                [program, prompt],
                environment: ProcessInfo.processInfo.environment,
                descriptors: [(child: 0, parent: null >= 0 ? null : STDIN_FILENO), (child: 1, parent: ends[1])],
                onlyStandardDescriptors: true
            )
        } catch let error as UnixSocket.Failure {
            close(ends[0])
            close(ends[1])
            throw CLIError(status: .deviceUnlockRefused, description: "\(variable): \(error.description)")
        }
        close(ends[1])
        var answer: [UInt8] = []
        answer.reserveCapacity(Self.maximumAnswer + 1)
        defer { for index in answer.indices { answer[index] = 0 } }
        var buffer = [UInt8](repeating: 0, count: 512)
        defer { for index in buffer.indices { buffer[index] = 0 } }
        while answer.count <= Self.maximumAnswer {
            let count = buffer.withUnsafeMutableBytes { VaultPOSIX.read(ends[0], $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            answer.append(contentsOf: buffer[0..<min(count, Self.maximumAnswer + 1 - answer.count)])
        }
        close(ends[0])
        let exited = ProcessSpawn.waitForExit(pid) ?? ExitStatus.failure.rawValue
        guard exited == 0 else {
            throw CLIError(
                status: .deviceUnlockRefused,
                description: "the askpass program (\(variable)) ended with status \(exited): no password was given"
            )
        }
        guard answer.count <= Self.maximumAnswer else {
            throw CLIError.usage("the askpass program (\(variable)) printed more than one short line")
        }
        let line = answer.firstIndex(of: UInt8(ascii: "\n")).map { answer[..<$0] } ?? answer[...]
        let trimmed = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
        guard let password = String(validating: trimmed, as: UTF8.self) else {
            throw CLIError.usage("the password from the askpass program (\(variable)) is not valid UTF-8")
        }
        guard !password.isEmpty else {
            throw CLIError(
                status: .deviceUnlockRefused,
                description: "the askpass program (\(variable)) printed no password"
            )
        }
        return password
    }
}
