import Foundation
import SpeexDSP
import WAV

/// What ``Call/play(_:mix:loops:)`` sends to the peer: an announcement, hold music, a tone.
///
/// Thread safety: a value type; safe to use from any thread.
public enum CallAudioSource: Sendable, Equatable {
    /// A WAV file (mono or stereo, 16-bit or float, any rate), mixed to mono and
    /// resampled to the call's rate; at most ``maximumSeconds`` long.
    case file(String)
    /// A tone, one cycle of it (on, then off) at a time.
    case tone(CallTone)

    /// The longest file played (longer files are refused: they are held in memory at the call's rate).
    public static let maximumSeconds = 600.0
}

/// A tone: sines summed, on for a while then off, as telephone tones are.
///
/// Thread safety: a value type; safe to use from any thread.
public struct CallTone: Sendable, Equatable {
    /// The frequencies summed, in Hz (each under half the call's rate).
    public var frequencies: [Double]
    /// The peak of the sum, in dBFS.
    public var level: Double
    /// How long it sounds, then how long it is silent (a steady tone: `off` zero).
    public var on: Duration
    public var off: Duration

    public init(frequencies: [Double], level: Double = -13, on: Duration, off: Duration = .zero) {
        self.frequencies = frequencies
        self.level = level
        self.on = on
        self.off = off
    }

    /// The European ringback (ETSI ES 201 970): 425 Hz, 1 s on, 4 s off.
    public static let ringback = CallTone(frequencies: [425], on: .seconds(1), off: .seconds(4))
    /// The North American ringback: 440 and 480 Hz, 2 s on, 4 s off.
    public static let northAmericanRingback = CallTone(frequencies: [440, 480], on: .seconds(2), off: .seconds(4))
    /// A short beep: 1 kHz for 200 ms (a notice that a recording started, say).
    public static let beep = CallTone(frequencies: [1000], on: .milliseconds(200))
}

/// How a playback meets the microphone in what the peer hears.
///
/// Thread safety: a value type; safe to use from any thread.
public enum CallAudioMix: Sendable, Equatable {
    /// The peer hears the playback alone (an announcement, hold music).
    case replacesMicrophone
    /// The peer hears the playback over our voice (a beep, music under speech).
    case mixesWithMicrophone
}

extension CallAudioSource {
    /// The source's samples at `rate`, mono: the whole file, or one cycle of the tone.
    func render(rate: Int) throws(CallError) -> [Int16] {
        switch self {
        case .tone(let tone): return try tone.render(rate: rate)
        case .file(let path): return try Self.renderFile(path, rate: rate)
        }
    }

    private static func renderFile(_ path: String, rate: Int) throws(CallError) -> [Int16] {
        let audio: WAVAudio
        do { audio = try WAV.read(path) } catch { throw .media("cannot play \(path): \(error)") }
        let frames = audio.samples.count / max(1, audio.channels)
        guard frames > 0 else { throw .media("cannot play \(path): it holds no audio") }
        guard Double(frames) / Double(audio.sampleRate) <= maximumSeconds else {
            throw .media("cannot play \(path): longer than \(Int(maximumSeconds)) s")
        }
        var mono = [Float](repeating: 0, count: frames)
        for frame in 0..<frames {
            var sum: Float = 0
            for channel in 0..<audio.channels { sum += audio.samples[frame * audio.channels + channel] }
            mono[frame] = sum / Float(audio.channels)
        }
        if audio.sampleRate != rate {
            do {
                let resampler = try SpeexResampler(inputRate: audio.sampleRate, outputRate: rate)
                mono = resampler.resampleAll(mono)
            } catch {
                throw .media("cannot play \(path) at \(rate) Hz: \(error)")
            }
        }
        return mono.map(WAVAudio.int16)
    }
}

extension CallTone {
    /// One cycle (on, then off) at `rate`.
    func render(rate: Int) throws(CallError) -> [Int16] {
        guard !frequencies.isEmpty, frequencies.allSatisfy({ $0 > 0 && $0 < Double(rate) / 2 }) else {
            throw .invalidState("a tone's frequencies must lie between 0 and \(rate / 2) Hz: \(frequencies)")
        }
        guard level <= 0, on > .zero, off >= .zero else {
            throw .invalidState("a tone sounds for a while at a level of at most 0 dBFS (\(level) dBFS, \(on) on, \(off) off)")
        }
        let onFrames = Self.frames(on, rate: rate), offFrames = Self.frames(off, rate: rate)
        let amplitude = Foundation.pow(10, level / 20) / Double(frequencies.count)
        var cycle = [Int16](repeating: 0, count: onFrames + offFrames)
        for n in 0..<onFrames {
            var sum = 0.0
            for f in frequencies { sum += Foundation.sin(2 * Double.pi * f * Double(n) / Double(rate)) }
            cycle[n] = WAVAudio.int16(Float(amplitude * sum))
        }
        return cycle
    }

    private static func frames(_ duration: Duration, rate: Int) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * rate + Int(Double(attoseconds) / 1e18 * Double(rate))
    }
}
