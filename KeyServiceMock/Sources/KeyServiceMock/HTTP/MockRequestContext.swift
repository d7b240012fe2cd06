import Hummingbird
import NIOCore

/// The request context: Hummingbird's core storage plus the connection, which a
/// ``FaultInjection/Fault/dropConnection`` fault closes.
struct MockRequestContext: RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// The client's address, for the key service's per-client limit.
    var remoteAddress: SocketAddress? { channel.remoteAddress }
}
