import ALSA
@testable import AudioIO
import AudioSession
import Synchronization
import Testing
import TestSupport

/// USB audio devices plugged in and pulled out while a session runs: no USB headset can be
/// plugged in here, so the cards come from a source the test changes, behind the same
/// protocol as ALSA's (`ALSASoundCards`); the rest is the production hardware and session.
@Suite("USB audio hot-plug on ALSA")
struct USBHotPlugTests {
    /// Sound cards a test plugs in and pulls out.
    final class Cards: SoundCardSource {
        private let list = Mutex<[SoundCard]>([])
        func cards() -> [SoundCard] { list.withLock { $0 } }
        func set(_ cards: [SoundCard]) { list.withLock { $0 = cards } }
    }

    static let laptopCodec = SoundCard(index: 0, id: "PCH", name: "HDA Intel PCH", driver: "HDA-Intel", hasPlayback: true, hasCapture: true)
    static let headset = SoundCard(index: 1, id: "Headset", name: "Jabra EVOLVE 20 MS", driver: "USB-Audio", hasPlayback: true, hasCapture: true)
    static let dac = SoundCard(index: 2, id: "DAC", name: "USB Audio DAC", driver: "USB-Audio", hasPlayback: true, hasCapture: false)

    static func observe(_ cards: Cards) throws -> (ALSAAudioHardware, AudioSession, JackEventTests.Changes) {
        let hardware = ALSAAudioHardware(routeMap: JackEventTests.map, soundCards: cards)
        let session = AudioSystem(hardware: hardware).makeSession(name: "call")
        try session.setCategory(.playAndRecord)
        try session.setActive(true)
        let changes = JackEventTests.Changes()
        _ = session.addObserver { if let change = $0.routeChange { changes.append(change) } }
        return (hardware, session, changes)
    }

    @Test("A USB headset plugged in takes the route on its own card; pulled out, the route goes back")
    func aHeadsetTakesTheRouteAndGivesItBack() throws {
        let cards = Cards()
        let (hardware, session, changes) = try Self.observe(cards)
        hardware.cardsChanged([Self.laptopCodec, Self.headset])
        #expect(changes.all.map(\.reason) == [.newDeviceAvailable])
        #expect(session.currentRoute.outputTypes == [.usbAudio] && session.currentRoute.inputTypes == [.usbAudio])
        #expect(session.currentRoute.outputs.first?.portName == "Jabra EVOLVE 20 MS")
        #expect(hardware.devices.map(\.id) == ["builtIn", "usb:Headset"])
        let (capture, playback) = hardware.sources(of: session.currentRoute)
        #expect(capture == .named("plughw:CARD=Headset,DEV=0") && playback == .named("plughw:CARD=Headset,DEV=0"))

        changes.removeAll()
        hardware.cardsChanged([Self.laptopCodec, Self.headset])  // the same list again: nothing
        hardware.cardsChanged([Self.laptopCodec])
        #expect(changes.all.map(\.reason) == [.oldDeviceUnavailable])
        #expect(session.currentRoute.outputTypes == [.builtInSpeaker] && session.currentRoute.inputTypes == [.builtInMic])
        #expect(hardware.devices.map(\.id) == ["builtIn"])
    }

    @Test("A USB DAC takes the output and leaves the input on the built-in microphone; a built-in card is not a device")
    func aPlaybackOnlyCardTakesTheOutputOnly() throws {
        let (hardware, session, _) = try Self.observe(Cards())
        hardware.cardsChanged([Self.laptopCodec, Self.dac])
        #expect(session.currentRoute.outputTypes == [.usbAudio])
        #expect(session.currentRoute.inputTypes == [.builtInMic])
        #expect(hardware.devices.map(\.id) == ["builtIn", "usb:DAC"])
    }

    @Test("The card watcher hears a card come and go within a couple of seconds")
    func theWatcherFollowsTheCards() async throws {
        let cards = Cards()
        let (_, session, _) = try Self.observe(cards)
        cards.set([Self.headset])
        #expect(await eventually(timeout: .seconds(5)) { session.currentRoute.outputTypes == [.usbAudio] })
        cards.set([])
        #expect(await eventually(timeout: .seconds(5)) { session.currentRoute.outputTypes == [.builtInSpeaker] })
    }

    @Test("ALSA's own list of cards: each has an id and a driver (none at all on a machine without sound cards)")
    func alsaListsItsCards() {
        for card in ALSALibrary.soundCards() {
            #expect(!card.id.isEmpty && !card.driver.isEmpty)
            #expect(card.pcmName == "plughw:CARD=\(card.id),DEV=0")
        }
    }
}
