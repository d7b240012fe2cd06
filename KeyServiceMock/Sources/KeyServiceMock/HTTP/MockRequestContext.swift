import Hummingbird
import NIOCore

/// The request context: Hummingbird's core storage plus the connection, which a
/// ``FaultInjection/Fault/dropConnection`` fault closes.
struct MockRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
