import CALSA

/// A sound card the kernel has now, as alsa-lib's control interface describes it
/// (`snd_ctl_card_info`): what a USB headset plugged in adds and unplugged takes away.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SoundCard: Sendable, Hashable {
    /// The card's index now (`hw:N`); another card may take it once this one is gone.
    public var index: Int
    /// The card's id (`hw:CARD=ID`), the same each time the same device is plugged in.
    public var id: String
    /// The name a person recognises (`Jabra EVOLVE 20 MS`).
    public var name: String
    /// The kernel driver (`USB-Audio` for a USB headset, `HDA-Intel` for a laptop's codec).
    public var driver: String
    /// Whether its first PCM device plays and records.
    public var hasPlayback: Bool
    public var hasCapture: Bool

    public init(index: Int, id: String, name: String, driver: String, hasPlayback: Bool, hasCapture: Bool) {
        self.index = index
        self.id = id
        self.name = name
        self.driver = driver
        self.hasPlayback = hasPlayback
        self.hasCapture = hasCapture
    }

    /// Whether the card is a USB audio device (a headset, a speakerphone, a dongle).
    public var isUSB: Bool { driver == "USB-Audio" }

    /// The PCM of its first device by id, with format and rate conversion (`plughw:CARD=ID,DEV=0`).
    public var pcmName: String { "plughw:CARD=\(id),DEV=0" }
}

extension ALSALibrary {
    /// The sound cards present now (`snd_card_next`, `snd_ctl_card_info`), in index order; a
    /// card whose control device cannot be opened is left out.
    public static func soundCards() -> [SoundCard] {
        silenceErrorOutput()
        var cards: [SoundCard] = []
        var index: Int32 = -1
        while snd_card_next(&index) >= 0, index >= 0 {
            if let card = soundCard(index) { cards.append(card) }
        }
        return cards
    }

    private static func soundCard(_ index: Int32) -> SoundCard? {
        var ctl: OpaquePointer?
        guard snd_ctl_open(&ctl, "hw:\(index)", 0) >= 0, let ctl else { return nil }
        defer { snd_ctl_close(ctl) }
        var info: OpaquePointer?
        guard snd_ctl_card_info_malloc(&info) >= 0, let info else { return nil }
        defer { snd_ctl_card_info_free(info) }
        guard snd_ctl_card_info(ctl, info) >= 0 else { return nil }
        return SoundCard(index: Int(index), id: String(cString: snd_ctl_card_info_get_id(info)),
                         name: String(cString: snd_ctl_card_info_get_name(info)),
                         driver: String(cString: snd_ctl_card_info_get_driver(info)),
                         hasPlayback: hasStream(ctl, SND_PCM_STREAM_PLAYBACK), hasCapture: hasStream(ctl, SND_PCM_STREAM_CAPTURE))
    }

    /// Whether PCM device 0 of the card has `stream` (`snd_ctl_pcm_info`).
    private static func hasStream(_ ctl: OpaquePointer, _ stream: snd_pcm_stream_t) -> Bool {
        var info: OpaquePointer?
        guard snd_pcm_info_malloc(&info) >= 0, let info else { return false }
        defer { snd_pcm_info_free(info) }
        snd_pcm_info_set_device(info, 0)
        snd_pcm_info_set_subdevice(info, 0)
        snd_pcm_info_set_stream(info, stream)
        return snd_ctl_pcm_info(ctl, info) >= 0
    }
}
