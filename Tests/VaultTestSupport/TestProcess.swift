public import Foundation
import Synchronization
import VaultPOSIX

#if canImport(Glibc)
import Glibc

private func posixWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    Glibc.write(descriptor, bytes, count)
}
private func ignoreSignal(_ number: Int32) { _ = Glibc.signal(number, SIG_IGN) }
private func posixOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { Glibc.open(path, flags, mode) }
private func posixPipe(_ ends: inout [Int32]) -> Int32 { Glibc.pipe(&ends) }
#elseif canImport(Darwin)
import Darwin

private func posixWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    Darwin.write(descriptor, bytes, count)
}
private func ignoreSignal(_ number: Int32) { _ = Darwin.signal(number, SIG_IGN) }
private func posixOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { Darwin.open(path, flags, mode) }
private func posixPipe(_ ends: inout [Int32]) -> Int32 { Darwin.pipe(&ends) }
#endif

/// A child process a test starts: `posix_spawn` (as `credential-vault exec` starts a command), never Foundation's
/// `Process`, whose `run()` crashed the test process in the parallel phase (issue 21).
///
/// The child leads a process group of its own; when the test is done with it (the end of
/// ``with(_:environment:directory:input:output:error:_:)``, or the last reference going) the whole group is killed
/// with SIGKILL, so no grandchild it started can outlive the test and hold a pipe open. It gets no descriptor of
/// the test process but the three it is given, and never the test process's standard output or error: a child
/// that outlives a crashed test process cannot hold `swift test`'s pipe and hang the run.
public final class TestProcess: Sendable {
    /// The child's standard input.
    public enum Input: Sendable {
        /// `/dev/null`.
        case none
        /// A pipe this process writes through ``write(_:)`` and closes with ``closeInput()``. Its end of file also
        /// tells a child that watches for it (`keyservice-mock --exit-on-stdin-eof`) that the test process is gone.
        case pipe
        /// These bytes, from an unlinked temporary file (nothing is written while the child runs: no SIGPIPE).
        case data(Data)
        /// The file at this URL.
        case file(URL)
    }

    /// Where the child's standard output or error goes.
    public enum Output: Sendable {
        /// `/dev/null`.
        case none
        /// A pipe this process reads: ``output`` or ``error``.
        case pipe
        /// The file at this URL, created or truncated.
        case file(URL)
        /// A descriptor of this process (a `FileHandle`'s, a pipe's write end the test reads); left open here.
        case descriptor(Int32)
        /// Standard error only: wherever standard output goes.
        case sameAsOutput
    }

    /// How the child ended.
    public enum Termination: Sendable, Equatable, CustomStringConvertible {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signaled(Int32)

        /// The exit status, or 128 + the signal as a shell reports it.
        public var status: Int32 {
            switch self {
            case .exited(let code): code
            case .signaled(let signal): 128 + signal
            }
        }

        /// `status 3`, `signal 9`.
        public var description: String {
            switch self {
            case .exited(let code): "status \(code)"
            case .signaled(let signal): "signal \(signal)"
            }
        }
    }

    /// What a child run to its end left: how it ended and what it printed.
    public struct Completed: Sendable {
        /// How it ended.
        public let termination: Termination
        /// Its standard output.
        public let output: Data
        /// Its standard error (empty when it went to standard output).
        public let error: Data

        /// Standard output as UTF-8 text.
        public var outputText: String { String(decoding: output, as: UTF8.self) }
        /// Standard error as UTF-8 text.
        public var errorText: String { String(decoding: error, as: UTF8.self) }
    }

    /// The child's process id, which is also its process group's id.
    public let pid: Int32
    /// The read end of the child's standard output, with ``Output/pipe``.
    public let output: FileHandle?
    /// The read end of the child's standard error, with ``Output/pipe``.
    public let error: FileHandle?
    private let input: Mutex<Int32?>
    private let state = Mutex<Termination?>(nil)
    private let ended = Mutex(false)

    /// Starts `arguments[0]` (a path, or a name looked up on `PATH`) with `environment` (this process's when nil),
    /// in `directory` (this process's when nil). Prefer ``with(_:environment:directory:input:output:error:_:)``,
    /// which ends the child's group at the end of the scope; a child started here is ended when the last reference
    /// to it goes.
    /// - Throws: ``ProcessSpawn/Failure`` when it cannot start; `CocoaError` when a file for its input or output
    ///   cannot be opened.
    public init(
        _ arguments: [String],
        environment: [String: String]? = nil,
        directory: URL? = nil,
        input: Input = .none,
        output: Output = .pipe,
        error: Output = .pipe
    ) throws {
        _ = Self.ignoreBrokenPipes
        // Every descriptor made here is close-on-exec and closed once the child has its copy.
        var closeAfterSpawn: [Int32] = []
        defer { for descriptor in closeAfterSpawn { close(descriptor) } }

        let childInput: Int32
        var writeEnd: Int32?
        switch input {
        case .none:
            childInput = try Self.open("/dev/null", O_RDONLY)
        case .pipe:
            let (read, write) = try Self.pipe()
            childInput = read
            writeEnd = write
        case .data(let bytes):
            childInput = try Self.unlinkedFile(holding: bytes)
        case .file(let url):
            childInput = try Self.open(url.path, O_RDONLY)
        }
        closeAfterSpawn.append(childInput)

        // The write end goes to the child; the read end stays here.
        func descriptor(for destination: Output, sameAs: Int32?) throws -> (child: Int32, readEnd: Int32?) {
            switch destination {
            case .none:
                let null = try Self.open("/dev/null", O_WRONLY)
                closeAfterSpawn.append(null)
                return (null, nil)
            case .pipe:
                let (read, write) = try Self.pipe()
                closeAfterSpawn.append(write)
                return (write, read)
            case .file(let url):
                let file = try Self.open(url.path, O_WRONLY | O_CREAT | O_TRUNC)
                closeAfterSpawn.append(file)
                return (file, nil)
            case .descriptor(let given):
                return (given, nil)
            case .sameAsOutput:
                guard let sameAs else { preconditionFailure("standard output cannot go where standard output goes") }
                return (sameAs, nil)
            }
        }
        let childOutput = try descriptor(for: output, sameAs: nil)
        let childError = try descriptor(for: error, sameAs: childOutput.child)
        self.output = childOutput.readEnd.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        self.error = childError.readEnd.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        self.input = Mutex(writeEnd)
        do {
            pid = try ProcessSpawn.spawn(
                arguments,
                environment: environment ?? ProcessInfo.processInfo.environment,
                descriptors: [(0, childInput), (1, childOutput.child), (2, childError.child)],
                closingOthers: true,
                directory: directory?.path,
                group: .own
            )
        } catch {
            if let writeEnd { close(writeEnd) }
            throw error
        }
    }

    deinit {
        end()
    }

    /// Runs `body` with the child started as ``init(_:environment:directory:input:output:error:)`` says, then kills
    /// the child's whole process group and waits for the child, however `body` ends.
    public static func with<Result>(
        _ arguments: [String],
        environment: [String: String]? = nil,
        directory: URL? = nil,
        input: Input = .none,
        output: Output = .pipe,
        error: Output = .pipe,
        _ body: (TestProcess) async throws -> Result
    ) async throws -> Result {
        let child = try TestProcess(
            arguments,
            environment: environment,
            directory: directory,
            input: input,
            output: output,
            error: error
        )
        do {
            let result = try await body(child)
            await child.endOnOwnThread()
            return result
        } catch {
            await child.endOnOwnThread()
            throw error
        }
    }

    /// Runs the child to its end, reading its standard output and error as it goes (both at once, so neither pipe
    /// can fill up and stall it); then kills whatever it left in its group.
    public static func run(
        _ arguments: [String],
        environment: [String: String]? = nil,
        directory: URL? = nil,
        input: Input = .none,
        mergingError: Bool = false
    ) async throws -> Completed {
        try await with(
            arguments,
            environment: environment,
            directory: directory,
            input: input,
            output: .pipe,
            error: mergingError ? .sameAsOutput : .pipe
        ) { child in
            async let error = child.readErrorToEnd()
            let output = await child.readOutputToEnd()
            return Completed(termination: await child.wait(), output: output, error: await error)
        }
    }

    /// Everything the child writes to its standard output until the pipe's end; empty without ``Output/pipe``.
    /// Read on a thread of its own, never on Swift's cooperative pool.
    public func readOutputToEnd() async -> Data {
        guard let output else { return Data() }
        return await Self.onOwnThread { output.readDataToEndOfFile() }
    }

    /// Everything the child writes to its standard error until the pipe's end; empty without ``Output/pipe``.
    public func readErrorToEnd() async -> Data {
        guard let error else { return Data() }
        return await Self.onOwnThread { error.readDataToEndOfFile() }
    }

    /// Writes `bytes` to the child's standard input (``Input/pipe``).
    /// - Throws: `POSIXError` when the child no longer reads it (EPIPE) or the input is closed.
    public func write(_ bytes: Data) throws {
        try input.withLock { descriptor in
            guard let descriptor else { throw POSIXError(.EBADF) }
            var rest = bytes[...]
            while !rest.isEmpty {
                let written = rest.withUnsafeBytes { posixWrite(descriptor, $0.baseAddress, $0.count) }
                if written < 0 {
                    if errno == EINTR { continue }
                    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                }
                rest = rest.dropFirst(written)
            }
        }
    }

    /// Writes `text` as UTF-8 to the child's standard input.
    public func write(_ text: String) throws {
        try write(Data(text.utf8))
    }

    /// Closes the child's standard input: it reads end of file.
    public func closeInput() {
        input.withLock { descriptor in
            if let open = descriptor { close(open) }
            descriptor = nil
        }
    }

    /// Sends `signal` to the child alone (not its group), unless it has been waited for.
    public func signal(_ signal: Int32) {
        state.withLock { termination in
            if termination == nil { _ = kill(pid, signal) }
        }
    }

    /// Sends SIGKILL to every process in the child's group.
    public func killGroup() {
        _ = kill(-pid, SIGKILL)
    }

    /// How the child ended, once it has; nil while it runs. Never blocks.
    public var termination: Termination? {
        state.withLock { termination in
            if termination == nil {
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid { termination = Self.termination(status) }
            }
            return termination
        }
    }

    /// Waits, on a thread of its own, for the child to end.
    public func wait() async -> Termination {
        await Self.onOwnThread { self.waitBlocking() }
    }

    /// Waits at most `timeout` for the child to end; nil when it still runs.
    public func wait(timeout: Duration) async -> Termination? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let termination { return termination }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return termination
    }

    /// Kills the group and waits for the child; the child's standard input is closed. Once only: after that the
    /// group's id may name another group.
    private func end() {
        let first = ended.withLock { ended in
            defer { ended = true }
            return !ended
        }
        guard first else { return }
        killGroup()
        _ = waitBlocking()
        closeInput()
    }

    private func endOnOwnThread() async {
        await Self.onOwnThread { self.end() }
    }

    /// Blocks in waitpid (the state's lock is not held meanwhile) until the child has ended.
    private func waitBlocking() -> Termination {
        var reapedElsewhere = 0
        while true {
            if let known = state.withLock({ $0 }) { return known }
            var status: Int32 = 0
            let result = waitpid(pid, &status, 0)
            if result == pid {
                return state.withLock { termination in
                    if termination == nil { termination = Self.termination(status) }
                    return termination ?? Self.termination(status)
                }
            }
            if result < 0 && errno == EINTR { continue }
            // ECHILD: a concurrent `termination` reaped it, and its answer is about to be in the state. After a
            // second without one, something else in this process reaped it: the status is lost.
            reapedElsewhere += 1
            if reapedElsewhere > 1_000 {
                return state.withLock { termination in
                    if termination == nil { termination = .exited(-1) }
                    return termination ?? .exited(-1)
                }
            }
            usleep(1_000)
        }
    }

    /// A `waitpid` status as a ``Termination``.
    private static func termination(_ status: Int32) -> Termination {
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
    }

    private static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await BlockingThread.run("test-process", body)
    }

    /// A write to a child that has gone fails with EPIPE instead of killing the test process.
    private static let ignoreBrokenPipes: Void = {
        ignoreSignal(SIGPIPE)
    }()

    private static func open(_ path: String, _ flags: Int32) throws -> Int32 {
        let descriptor = posixOpen(path, flags | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return descriptor
    }

    private static func pipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard posixPipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        // pipe2 is a GNU call the Glibc module does not import. A child spawned here meanwhile does not get them
        // (ProcessSpawn closes every descriptor above 2 in the child); close-on-exec keeps them from anything else.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return (ends[0], ends[1])
    }

    private static func unlinkedFile(holding bytes: Data) throws -> Int32 {
        let url = FileManager.default.temporaryDirectory.appending(path: "test-process-input-\(UUID().uuidString)")
        try bytes.write(to: url)
        defer { unlink(url.path) }
        return try open(url.path, O_RDONLY)
    }
}
