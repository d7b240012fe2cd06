/// Who is at the other end of a Unix-domain socket, as the kernel recorded it at connect.
package enum PeerCredentials {
    /// The user id of the process at the other end of `descriptor` (`SO_PEERCRED` on Linux, `getpeereid`
    /// elsewhere); nil when it cannot be read.
    package static func userID(of descriptor: Int32) -> uid_t? {
        #if os(Linux)
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }: three 32-bit fields on every Linux architecture.
        var credentials: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
            length == socklen_t(MemoryLayout.size(ofValue: credentials))
        else { return nil }
        return credentials.1
        #else
        var uid = uid_t()
        var gid = gid_t()
        return getpeereid(descriptor, &uid, &gid) == 0 ? uid : nil
        #endif
    }
}
