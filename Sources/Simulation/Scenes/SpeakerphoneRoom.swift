/// A phone on a table in speaker mode in a furnished room: loudspeaker and microphone 12 cm apart.
///
/// Thread safety: stateless; safe from any thread.
public enum SpeakerphoneRoom {
    /// The loudspeaker-to-microphone echo, scaled so the echo of a full-level loudspeaker signal is
    /// about as loud as the talker (signal-to-echo ratio near 0 dB: a hard case for an echo canceller).
    public static func echoPath(sampleRate: Int) -> EchoPathConfiguration {
        let room = ShoeboxRoom(size: Point3(4.5, 3.8, 2.7), rt60: 0.3)
        let ir = room.impulseResponse(source: Point3(2.0, 1.5, 0.8), microphone: Point3(2.12, 1.5, 0.8),
                                      sampleRate: sampleRate, length: 0.3)
        let energy = ir.reduce(0) { $0 + $1 * $1 }
        return EchoPathConfiguration(sampleRate: sampleRate, impulseResponse: ir, gain: energy > 0 ? 1 / energy.squareRoot() : 1)
    }
}
