import CSRTP

/// libsrtp2's one-time setup (`srtp_init`: the crypto kernel and its self-tests). Swift runs a
/// global's initialiser once, atomically, whichever threads reach it first, so every context
/// waits for one call. `srtp_shutdown` is never called: the kernel lives as long as the process.
private let initialization = SRTPError(srtp_init())

enum Library {
    /// Initialises libsrtp2 on first use; throws what `srtp_init` returned if it failed.
    static func ready() throws(SRTPError) {
        if initialization.rawValue != 0 { throw initialization }
    }
}
