/// The priority of the calling thread.
package enum ThreadPriority {
    /// Lowers the calling thread alone below the rest of the process, best effort: on Linux nice 10 (under NPTL the
    /// nice value is per thread, and "who" 0 names the calling thread), elsewhere the utility quality of service.
    /// If the kernel refuses, the thread runs at normal priority.
    package static func lowerCurrentThread() {
        #if os(Linux)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #elseif canImport(Darwin)
        _ = pthread_set_qos_class_self_np(QOS_CLASS_UTILITY, 0)
        #endif
    }
}
