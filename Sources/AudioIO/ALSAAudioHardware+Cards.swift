import ALSA
import AudioSession
import Synchronization

// USB audio devices (headsets, speakerphones) as they are plugged in and pulled out: each USB
// card is a device with a `usbAudio` input and output named after the card, on its first PCM
// through `plughw:CARD=ID`, so it takes the route when it comes (last in wins) and gives it
// back when it goes, as a headset jack does. Built-in cards are the route map's business.

extension ALSAAudioHardware {
    /// The device id of a USB card: stable across plugs (its ALSA id, not its index).
    static func usbDeviceID(_ card: SoundCard) -> String { "usb:\(card.id)" }

    /// The USB cards among `cards`, by device id.
    static func usbCards(in cards: [SoundCard]) -> [String: SoundCard] {
        Dictionary(cards.filter(\.isUSB).map { (usbDeviceID($0), $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The session's device for a USB card.
    static func usbDevice(_ card: SoundCard) -> AudioDevice {
        let id = usbDeviceID(card)
        func port(_ direction: String) -> AudioSessionPortDescription {
            AudioSessionPortDescription(portType: .usbAudio, portName: card.name, uid: "\(id):\(direction)")
        }
        return AudioDevice(id: id, name: card.name, inputs: card.hasCapture ? [port("capture")] : [],
                           outputs: card.hasPlayback ? [port("playback")] : [])
    }

    /// The PCM of a USB card's port, nil for a port that is not one.
    func usbSource(uid: String) -> PCMSource? {
        guard uid.hasPrefix("usb:"), let colon = uid.lastIndex(of: ":") else { return nil }
        let id = String(uid[..<colon])
        return state.withLock { $0.usbCards[id] }.map { .named($0.pcmName) }
    }

    /// The cards present changed (on the card watcher's thread): USB cards that came are new
    /// devices, the ones gone are unavailable.
    func cardsChanged(_ cards: [SoundCard]) {
        let now = Self.usbCards(in: cards)
        let (came, went) = state.withLock { s -> ([SoundCard], [String]) in
            let came = now.filter { s.usbCards[$0.key] == nil }.sorted { $0.key < $1.key }.map(\.value)
            let went = s.usbCards.keys.filter { now[$0] == nil }.sorted()
            s.usbCards = now
            s.order.removeAll { went.contains($0) }
            s.order += came.map(Self.usbDeviceID)
            return (came, went)
        }
        for id in went { emit(.deviceDisconnected(deviceID: id)) }
        for card in came { emit(.deviceConnected(Self.usbDevice(card))) }
    }
}
