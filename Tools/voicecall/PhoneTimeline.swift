import AudioIO
import Simulation
import Synchronization
import WAV

/// The WAV files of `voicecall phone` on one timeline across the devices its calls open (a call
/// opens a new device each time it takes the audio back, after a hold or for a second call):
/// the input goes on where the talker is by the clock, and the output holds what every device
/// played, at the time it played it, with silence between.
///
/// Thread safety: any thread (the device factory runs on the controller's task, the output is
/// written by the command's).
final class PhoneTimeline: Sendable {
    private struct Segment {
        var start: Duration
        var played: [Float]
    }

    private struct State {
        var origin: ContinuousClock.Instant?
        var finished: [Segment] = []
        var current: (start: Duration, device: SimulatedRoomDevice)?
    }

    private let state = Mutex(State())

    /// Time since the first device opened (zero before it); a device opened now starts here.
    func now() -> Duration {
        state.withLock { state in state.origin.map { ContinuousClock.now - $0 } ?? .zero }
    }

    /// Takes `device`, opened at `start` (from ``now()``), as the one playing from now on. The one
    /// before it was stopped (released for a hold, or failed) before a new one was asked for, so
    /// its recording is final.
    func add(_ device: SimulatedRoomDevice, openedAt start: Duration) {
        state.withLock { state in
            if state.origin == nil { state.origin = ContinuousClock.now - start }
            if let current = state.current {
                state.finished.append(Segment(start: current.start, played: current.device.recording.played))
            }
            state.current = (start, device)
        }
    }

    /// What the devices played, each from the time it opened (call once the last device
    /// stopped); nil when none opened.
    func played() -> WAVAudio? {
        state.withLock { state in
            guard let current = state.current else { return nil }
            let sampleRate = current.device.format.sampleRate
            let segments = state.finished + [Segment(start: current.start, played: current.device.recording.played)]
            var samples: [Float] = []
            for segment in segments {
                let offset = Int(Double(sampleRate) * Self.seconds(segment.start))
                if offset > samples.count { samples += repeatElement(0, count: offset - samples.count) }
                samples += segment.played
            }
            return WAVAudio(sampleRate: sampleRate, samples: samples)
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }
}
