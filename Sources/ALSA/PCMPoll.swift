import CALSA
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What one wait on a PCM's poll descriptors found.
enum PCMWakeup: Equatable {
    /// The PCM can be read or written.
    case ready
    /// Woken, but the plugin says it is not ready (its event fired with too few frames), or a
    /// signal interrupted the wait.
    case notReady
    /// Nothing happened within the time given.
    case timedOut
    /// The PCM is in error: an xrun (`-EPIPE`), suspended (`-ESTRPIPE`), gone (`-ENODEV`), ...
    case failed(Int32)
}

/// One `poll` on a PCM's descriptors, at most as long as it is told: `snd_pcm_wait` in one
/// step. `snd_pcm_wait` itself polls again with the whole timeout after every wakeup that the
/// plugin's `revents` filters out and after `EINTR`, so a plugin woken often without frames
/// (pipewire's, with a stalled server) could hold it far past any deadline; here each wakeup
/// returns, and the caller checks its deadline.
///
/// Thread safety: as the PCM's; the descriptors are a buffer allocated once, so a wait does
/// not allocate.
struct PCMPoll: ~Copyable {
    /// alsa-lib's own limit on a PCM's descriptors.
    static let capacity = 16
    private let descriptors: UnsafeMutablePointer<pollfd>

    init() {
        descriptors = .allocate(capacity: Self.capacity)
        descriptors.initialize(repeating: pollfd(), count: Self.capacity)
    }

    deinit { descriptors.deallocate() }

    /// Waits until `availMin` frames can be moved, or `milliseconds` have passed, or a wakeup.
    /// As `snd_pcm_wait`, it first asks the PCM itself: a plugin need not signal what is ready.
    func wait(_ pcm: OpaquePointer, availMin: Int, milliseconds: Int32) -> PCMWakeup {
        let avail = snd_pcm_avail_update(pcm)
        if avail < 0 { return .failed(Int32(truncatingIfNeeded: avail)) }
        if avail >= availMin { return .ready }
        let count = snd_pcm_poll_descriptors_count(pcm)
        guard count > 0, count <= Self.capacity,
              snd_pcm_poll_descriptors(pcm, descriptors, UInt32(count)) == count else { return .failed(-EIO) }
        let n = poll(descriptors, nfds_t(count), milliseconds)
        if n < 0 { return errno == EINTR ? .notReady : .failed(-errno) }
        if n == 0 { return .timedOut }
        var revents: UInt16 = 0
        let r = snd_pcm_poll_descriptors_revents(pcm, descriptors, UInt32(count), &revents)
        if r < 0 { return .failed(r) }
        let events = Int32(revents)
        if events & (Int32(POLLERR) | Int32(POLLNVAL)) != 0 { return .failed(Self.stateError(pcm)) }
        return events & (Int32(POLLIN) | Int32(POLLOUT)) != 0 ? .ready : .notReady
    }

    /// The error a PCM's state stands for, as `snd_pcm_wait` reports it.
    private static func stateError(_ pcm: OpaquePointer) -> Int32 {
        switch snd_pcm_state(pcm) {
        case SND_PCM_STATE_XRUN: -EPIPE
        case SND_PCM_STATE_SUSPENDED: -ESTRPIPE
        case SND_PCM_STATE_DISCONNECTED: -ENODEV
        default: -EIO
        }
    }
}
