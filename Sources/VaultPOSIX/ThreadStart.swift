/// What a thread started by ``BlockingThread/start(_:_:)`` runs, passed through `pthread_create`'s one pointer.
final class ThreadStart: Sendable {
    /// The thread's name.
    let name: String
    /// The thread's work.
    let work: @Sendable () -> Void

    init(name: String, work: @escaping @Sendable () -> Void) {
        self.name = name
        self.work = work
    }

    /// Names the calling thread (best effort: a name the system refuses leaves it unnamed).
    func nameCurrentThread() {
        #if canImport(Darwin)
        _ = pthread_setname_np(name)
        #else
        // Linux takes at most 15 bytes and a NUL; glibc's pthread_setname_np (not imported by the Glibc module, built
        // without _GNU_SOURCE) is looked up at run time.
        typealias SetName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> CInt
        guard let symbol = dlsym(nil, "pthread_setname_np") else { return }
        let short = String(decoding: Array(name.utf8.prefix(15)), as: UTF8.self)
        _ = unsafeBitCast(symbol, to: SetName.self)(pthread_self(), short)
        #endif
    }
}
