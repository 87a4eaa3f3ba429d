#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Names the calling thread, as `top -H`, `ps -L` and `perf` show it (the kernel keeps 15 bytes).
/// Through procfs, since the Glibc module does not import `pthread_setname_np`. Call it once,
/// as the thread starts: it opens a file and allocates.
package func nameCurrentThread(_ name: String) {
    let fd = open("/proc/thread-self/comm", O_WRONLY)
    guard fd >= 0 else { return }
    _ = Array(name.utf8.prefix(15)).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}
