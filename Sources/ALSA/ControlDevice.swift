import CALSA
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An open ALSA control device (`hw:0`, `hw:CARD=PCH`): reads jack switches such as
/// "Headphone Jack" and "Headset Mic Jack" and reports their changes as events.
///
/// Thread safety: not thread-safe; use from one thread at a time (normally a jack
/// monitor thread). It may be moved between threads.
public struct ControlDevice: ~Copyable {
    private let handle: OpaquePointer
    /// The name it was opened by.
    public let name: String

    /// Opens a control device and subscribes to its element events.
    ///
    /// The corresponding C functions are `snd_ctl_open` and `snd_ctl_subscribe_events`.
    public init(name: String) throws(ALSAError) {
        ALSALibrary.silenceErrorOutput()
        var ctl: OpaquePointer?
        let r = snd_ctl_open(&ctl, name, SND_CTL_NONBLOCK)
        guard r >= 0, let ctl else { throw ALSAError(code: r, context: "snd_ctl_open '\(name)'") }
        let s = snd_ctl_subscribe_events(ctl, 1)
        guard s >= 0 else {
            snd_ctl_close(ctl)
            throw ALSAError(code: s, context: "snd_ctl_subscribe_events '\(name)'")
        }
        handle = ctl
        self.name = name
    }

    deinit { snd_ctl_close(handle) }

    /// The value of boolean card-interface element `element` (a jack: `true` when plugged).
    ///
    /// The corresponding C function is `snd_ctl_elem_read`.
    public func readSwitch(_ element: String) throws(ALSAError) -> Bool {
        var id: OpaquePointer?, value: OpaquePointer?
        try alsaCheck(snd_ctl_elem_id_malloc(&id), "snd_ctl_elem_id_malloc")
        defer { snd_ctl_elem_id_free(id) }
        try alsaCheck(snd_ctl_elem_value_malloc(&value), "snd_ctl_elem_value_malloc")
        defer { snd_ctl_elem_value_free(value) }
        snd_ctl_elem_id_set_interface(id, SND_CTL_ELEM_IFACE_CARD)
        snd_ctl_elem_id_set_name(id, element)
        snd_ctl_elem_value_set_id(value, id)
        try alsaCheck(snd_ctl_elem_read(handle, value), "reading '\(element)' on '\(name)'")
        return snd_ctl_elem_value_get_boolean(value, 0) != 0
    }

    /// Waits up to `timeoutMilliseconds` for element events and returns the names of the
    /// elements whose value changed (empty on timeout).
    ///
    /// The corresponding C functions are `snd_ctl_poll_descriptors`, `poll` and `snd_ctl_read`.
    public func waitForChanges(timeoutMilliseconds: Int32) throws(ALSAError) -> [String] {
        var pfd = pollfd()
        guard snd_ctl_poll_descriptors(handle, &pfd, 1) == 1 else {
            throw ALSAError(code: -EINVAL, context: "snd_ctl_poll_descriptors '\(name)'")
        }
        let ready = poll(&pfd, 1, timeoutMilliseconds)
        guard ready > 0 else { return [] }
        var event: OpaquePointer?
        try alsaCheck(snd_ctl_event_malloc(&event), "snd_ctl_event_malloc")
        defer { snd_ctl_event_free(event) }
        var changed: [String] = []
        while snd_ctl_read(handle, event) > 0 {
            guard snd_ctl_event_get_type(event) == SND_CTL_EVENT_ELEM else { continue }
            let mask = snd_ctl_event_elem_get_mask(event)
            guard mask != SND_CTL_EVENT_MASK_REMOVE, mask & UInt32(SND_CTL_EVENT_MASK_VALUE) != 0 else { continue }
            changed.append(String(cString: snd_ctl_event_elem_get_name(event)))
        }
        return changed
    }
}

// A control device may be handed to a monitor thread: it is non-copyable, so one owner uses it at a time.
extension ControlDevice: @unchecked Sendable {}
