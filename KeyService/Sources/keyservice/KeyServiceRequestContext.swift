import Hummingbird
import NIOCore

/// The request context: Hummingbird's core storage and the client's address (for the per-client key limit).
struct KeyServiceRequestContext: RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
