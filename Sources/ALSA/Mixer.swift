import CALSA
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An open ALSA mixer on a control device (`hw:0`, or the `pulse` and `pipewire` control
/// plugins, whose "Master" and "Capture" elements are the sound server's default sink and
/// source): reads and sets simple elements' volumes as 0 to 1 over each element's raw range,
/// and waits for their changes.
///
/// The raw range is what the element's owner shows: the `pulse` plugin's is PulseAudio's
/// volume (0 to 100 %, what `pactl` prints), the `pipewire` plugin's its cubic volume (what
/// `wpctl` prints), a card's the codec's steps.
///
/// Thread safety: not thread-safe; use from one thread at a time. It may be moved between threads.
public struct Mixer: ~Copyable {
    private let handle: OpaquePointer
    /// The control device it was opened on.
    public let device: String

    /// Opens the mixer of control device `device` and loads its simple elements.
    ///
    /// The corresponding C functions are `snd_mixer_open`, `snd_mixer_attach`,
    /// `snd_mixer_selem_register` and `snd_mixer_load`.
    public init(device: String) throws(ALSAError) {
        ALSALibrary.silenceErrorOutput()
        var mixer: OpaquePointer?
        try alsaCheck(snd_mixer_open(&mixer, 0), "snd_mixer_open")
        guard let mixer else { throw ALSAError(code: -ENOMEM, context: "snd_mixer_open") }
        for (result, what) in [(snd_mixer_attach(mixer, device), "snd_mixer_attach"),
                               (snd_mixer_selem_register(mixer, nil, nil), "snd_mixer_selem_register"),
                               (snd_mixer_load(mixer), "snd_mixer_load")] where result < 0 {
            snd_mixer_close(mixer)
            throw ALSAError(code: result, context: "\(what) '\(device)'")
        }
        handle = mixer
        self.device = device
    }

    deinit { snd_mixer_close(handle) }

    /// The volume of simple element `element` in `direction`, from 0 to 1 (its first channel).
    ///
    /// The corresponding C functions are `snd_mixer_selem_get_playback_volume` and
    /// `snd_mixer_selem_get_capture_volume`, with their `_range` siblings.
    public func volume(_ element: String, _ direction: MixerDirection) throws(ALSAError) -> Float {
        let elem = try find(element, direction)
        var low = 0, high = 0, value = 0
        let playback = direction == .playback
        try alsaCheck(playback ? snd_mixer_selem_get_playback_volume_range(elem, &low, &high)
                               : snd_mixer_selem_get_capture_volume_range(elem, &low, &high), "volume range of '\(element)'")
        try alsaCheck(playback ? snd_mixer_selem_get_playback_volume(elem, SND_MIXER_SCHN_FRONT_LEFT, &value)
                               : snd_mixer_selem_get_capture_volume(elem, SND_MIXER_SCHN_FRONT_LEFT, &value), "volume of '\(element)'")
        guard high > low else { return 1 }
        return Float(value - low) / Float(high - low)
    }

    /// Sets every channel of simple element `element` in `direction` to `volume` (0 to 1, of
    /// its raw range, rounded to the nearest step).
    ///
    /// The corresponding C functions are `snd_mixer_selem_set_playback_volume_all` and
    /// `snd_mixer_selem_set_capture_volume_all`.
    public func setVolume(_ element: String, _ direction: MixerDirection, to volume: Float) throws(ALSAError) {
        let elem = try find(element, direction)
        var low = 0, high = 0
        let playback = direction == .playback
        try alsaCheck(playback ? snd_mixer_selem_get_playback_volume_range(elem, &low, &high)
                               : snd_mixer_selem_get_capture_volume_range(elem, &low, &high), "volume range of '\(element)'")
        let value = low + Int((Double(min(max(volume, 0), 1)) * Double(high - low)).rounded())
        try alsaCheck(playback ? snd_mixer_selem_set_playback_volume_all(elem, value)
                               : snd_mixer_selem_set_capture_volume_all(elem, value), "setting the volume of '\(element)'")
    }

    /// Whether the switch of simple element `element` in `direction` is on (its first channel:
    /// off is muted); nil when the element has no switch there.
    ///
    /// The corresponding C functions are `snd_mixer_selem_get_playback_switch` and
    /// `snd_mixer_selem_get_capture_switch`.
    public func isSwitchedOn(_ element: String, _ direction: MixerDirection) -> Bool? {
        guard let elem = lookup(element) else { return nil }
        var value: Int32 = 0
        switch direction {
        case .playback:
            guard snd_mixer_selem_has_playback_switch(elem) != 0,
                  snd_mixer_selem_get_playback_switch(elem, SND_MIXER_SCHN_FRONT_LEFT, &value) >= 0 else { return nil }
        case .capture:
            guard snd_mixer_selem_has_capture_switch(elem) != 0,
                  snd_mixer_selem_get_capture_switch(elem, SND_MIXER_SCHN_FRONT_LEFT, &value) >= 0 else { return nil }
        }
        return value != 0
    }

    /// Waits up to `timeoutMilliseconds` for changes and applies them to the elements' values;
    /// returns whether anything changed (false on timeout).
    ///
    /// The corresponding C functions are `snd_mixer_poll_descriptors`, `poll` and
    /// `snd_mixer_handle_events`.
    public func waitForChanges(timeoutMilliseconds: Int32) throws(ALSAError) -> Bool {
        let count = snd_mixer_poll_descriptors_count(handle)
        guard count > 0 else { throw ALSAError(code: -EINVAL, context: "snd_mixer_poll_descriptors_count '\(device)'") }
        var descriptors = [pollfd](repeating: pollfd(), count: Int(count))
        let filled = descriptors.withUnsafeMutableBufferPointer { snd_mixer_poll_descriptors(handle, $0.baseAddress, UInt32(count)) }
        try alsaCheck(filled, "snd_mixer_poll_descriptors '\(device)'")
        let ready = poll(&descriptors, nfds_t(filled), timeoutMilliseconds)
        guard ready > 0 else { return false }
        let handled = snd_mixer_handle_events(handle)
        try alsaCheck(handled, "snd_mixer_handle_events '\(device)'")
        return handled > 0
    }

    private func find(_ element: String, _ direction: MixerDirection) throws(ALSAError) -> OpaquePointer {
        guard let elem = lookup(element),
              (direction == .playback ? snd_mixer_selem_has_playback_volume(elem) : snd_mixer_selem_has_capture_volume(elem)) != 0
        else { throw ALSAError(code: -ENOENT, context: "no \(direction) volume '\(element)' on '\(device)'") }
        return elem
    }

    /// Simple element `element` (index 0), if the mixer has it.
    private func lookup(_ element: String) -> OpaquePointer? {
        var id: OpaquePointer?
        guard snd_mixer_selem_id_malloc(&id) >= 0 else { return nil }
        defer { snd_mixer_selem_id_free(id) }
        snd_mixer_selem_id_set_index(id, 0)
        snd_mixer_selem_id_set_name(id, element)
        return snd_mixer_find_selem(handle, id)
    }
}

/// Which way a mixer element's volume goes.
public enum MixerDirection: Sendable, CustomStringConvertible {
    case playback
    case capture

    public var description: String { self == .playback ? "playback" : "capture" }
}

// A mixer may be handed to a monitor thread: it is non-copyable, so one owner uses it at a time.
extension Mixer: @unchecked Sendable {}
