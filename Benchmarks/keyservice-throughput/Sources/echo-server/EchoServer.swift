import Foundation
import Hummingbird
import Logging

/// The body `/echo` decodes and sends back: the same shape and size as a key-service request.
struct EchoBody: Codable, ResponseEncodable {
    let keyid: String
    let secret: String
}

/// Serves `POST /echo` on 127.0.0.1 (port from the first argument, 0 by default) and prints
/// `echo-server listening on http://127.0.0.1:PORT` when ready.
@main
struct EchoServer {
    static func main() async throws {
        let port = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 0
        let router = Router()
        router.post("echo") { request, context -> EchoBody in
            try await request.decode(as: EchoBody.self, context: context)
        }
        var logger = Logger(label: "echo-server")
        logger.logLevel = .warning
        let application = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { channel in
                let line = "echo-server listening on http://127.0.0.1:\(channel.localAddress?.port ?? port)\n"
                FileHandle.standardOutput.write(Data(line.utf8))
            },
            logger: logger
        )
        try await application.runService()
    }
}
