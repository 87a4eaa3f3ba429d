import ToolSupport
import Platform
import AudioAnalysis
import Foundation
import Opus
import Simulation
import RTP
import SpeexDSP
import Synchronization
import VoiceProcessing
import WAV

/// The bare-library side of `callbench cost`: one endpoint's per-frame work done by calling
/// the `SpeexDSP` and `Opus` wrappers directly, with the settings a call uses, and nothing else
/// (no threads per call, rings, RTP, jitter buffer, delay estimation or simulated room).
///
/// Per 20 ms frame: decode the far end's packet (the loudspeaker signal), cancel the echo and
/// run the preprocessor (residual echo, noise, AGC) on each 10 ms half of the microphone
/// against what the loudspeaker played, and encode the result.
enum CostBaseline {
    /// One endpoint's input, computed before timing starts so only the library calls are timed.
    struct Signals: Sendable {
        /// The far end's packets, Opus as a call encodes it.
        let packets: [[UInt8]]
        /// The microphone at the call's rate: the talker, the echo of the decoded packets
        /// through the room, and a little noise (as ``SimulatedRoomDevice`` makes it).
        let microphone: [Int16]
        /// The microphone and the loudspeaker signal at the processing rate (the same arrays at 16 kHz).
        let microphone16: [Int16]
        let render16: [Int16]

        /// 20 ms frames the signals last; the runs loop over them.
        let frames: Int

        init(near: [Float], far: [Float], room: EchoPathConfiguration, rate: Int, frames: Int, seed: UInt64) throws {
            self.frames = frames
            let codec = OpusCallConfiguration(sampleRate: rate)
            let period = codec.framesPerPacket, count = frames * period
            let encoder = try codec.makeEncoder(), decoder = try codec.makeDecoder()
            let farPCM = (0..<count).map { WAVAudio.int16(far[$0 % far.count]) }
            var packets: [[UInt8]] = [], render: [Float] = []
            for start in stride(from: 0, to: count, by: period) {
                let packet = try encoder.encode(Array(farPCM[start..<(start + period)]))
                packets.append(packet)
                render += try decoder.decode(packet).map { Float($0) / 32768 }
            }
            let echo = Convolution.filter(render, with: room.impulseResponse)
            let noise = Tone.noise(count: count, rms: 0.0005, seed: seed)
            let microphone = (0..<count).map { WAVAudio.int16(near[$0 % near.count] + room.gain * echo[$0] + noise[$0]) }
            self.packets = packets
            self.microphone = microphone
            let processing = VoiceProcessingConfiguration().processingSampleRate
            let needed = frames * processing * codec.frameMilliseconds / 1000
            microphone16 = try Self.resampled(microphone.map { Float($0) / 32768 }, from: rate, to: processing, count: needed)
            render16 = try Self.resampled(render, from: rate, to: processing, count: needed)
        }

        private static func resampled(_ x: [Float], from rate: Int, to processing: Int, count: Int) throws -> [Int16] {
            let y = try SpeexResampler.resample(x, from: rate, to: processing, quality: 3)
            return (0..<count).map { $0 < y.count ? WAVAudio.int16(y[$0]) : 0 }
        }
    }

    /// Runs `streams` endpoints' frames `frames` concurrently, one thread each (as the call engine
    /// runs one I/O thread per call), and returns what the process used meanwhile.
    /// - Parameters:
    ///   - fecFrames: how many of the frames, the first ones, are coded with in-band FEC, as a call
    ///     codes its frames until the peer's first receiver report says nothing is lost.
    ///   - paced: one frame per 20 ms, as a sound card would hand them over, instead of back to back.
    ///   - throughUnit: clean the microphone with a ``VoiceProcessingUnit`` (the library's alignment,
    ///     monitoring and framing around the same SpeexDSP calls) instead of the bare SpeexDSP calls.
    static func measure(_ sides: [Signals], streams: Int, frames: Range<Int>, fecFrames: Int, rate: Int,
                        paced: Bool, throughUnit: Bool = false) throws -> CostClock.Usage {
        let failures = Failures()
        let group = DispatchGroup()
        let before = CostClock.process()
        for k in 0..<streams {
            let signals = sides[k % sides.count]
            group.enter()
            Thread {
                do {
                    try run(signals, frames: frames, fecFrames: fecFrames, rate: rate, paced: paced, throughUnit: throughUnit)
                } catch { failures.add("\(error)") }
                group.leave()
            }.start()
        }
        group.wait()
        let used = CostClock.process() - before
        if let failure = failures.first { throw CostError("bare library run: \(failure)") }
        return used
    }

    /// One endpoint: the states a call makes (same settings as `VoiceProcessingUnit` and
    /// `OpusCallConfiguration.makeEncoder()`), then the frames.
    private static func run(_ s: Signals, frames: Range<Int>, fecFrames: Int, rate: Int, paced: Bool, throughUnit: Bool) throws {
        let voice = VoiceProcessingConfiguration(deviceSampleRate: rate)
        let codec = OpusCallConfiguration(sampleRate: rate)
        let fp = voice.processingSampleRate, frame = fp * voice.blockMilliseconds / 1000
        guard case let .speex(tail) = voice.echoCanceller else { throw CostError("the default canceller is not SpeexDSP") }
        let canceller = try SpeexEchoCanceller(frameSize: frame, filterLength: Int(tail * Double(fp)), sampleRate: fp)
        var preprocessor = try voice.makePreprocessor(blockSize: frame, sampleRate: fp)
        if voice.suppressesResidualEcho { preprocessor.attach(canceller) }
        let unit = throughUnit ? try VoiceProcessingUnit(configuration: voice) : nil
        // A call starts at the configured expected loss (FEC on) and, on a network that loses nothing,
        // moves to no FEC at the first RTCP report, 1 to 3 s of wall time in.
        let encoder = try codec.makeEncoder(), decoder = try codec.makeDecoder()
        let lossless = ExpectedLossEstimator.setting(forLoss: 0)

        let period = codec.framesPerPacket, period16 = fp * codec.frameMilliseconds / 1000
        let played = UnsafeMutableBufferPointer<Int16>.allocate(capacity: period)
        let processed = UnsafeMutableBufferPointer<Int16>.allocate(capacity: period16)
        let captured = UnsafeMutableBufferPointer<Int16>.allocate(capacity: period)
        let packet = UnsafeMutableRawBufferPointer.allocate(byteCount: OpusEncoder.maxPacketBytes, alignment: 16)
        defer { played.deallocate(); processed.deallocate(); captured.deallocate(); packet.deallocate() }
        try s.microphone.withUnsafeBufferPointer { microphone in
            try s.microphone16.withUnsafeBufferPointer { microphone16 in
                try s.render16.withUnsafeBufferPointer { render16 in
                    var deadline = MonotonicClock.nanoseconds()
                    for n in frames {
                        if paced {
                            deadline += UInt64(codec.frameMilliseconds) * 1_000_000
                            Pacer.sleep(until: deadline)
                        }
                        if n - frames.lowerBound == fecFrames { try encoder.setExpectedPacketLoss(percent: lossless) }
                        let i = n % s.frames
                        _ = try s.packets[i].withUnsafeBytes { try decoder.decode($0, into: played) }
                        let microphonePeriod = UnsafeBufferPointer(rebasing: microphone[(i * period)..<((i + 1) * period)])
                        let input: UnsafeBufferPointer<Int16>
                        if let unit {
                            // As a call does it: the device's period against what it played.
                            _ = captured.update(fromContentsOf: microphonePeriod)
                            unit.process(capture: captured, render: UnsafeBufferPointer(played), timing: .zero)
                            input = UnsafeBufferPointer(captured)
                        } else {
                            for sub in stride(from: 0, to: period16, by: frame) {
                                let at = i * period16 + sub
                                let output = UnsafeMutableBufferPointer(rebasing: processed[sub..<(sub + frame)])
                                canceller.cancel(capture: UnsafeBufferPointer(rebasing: microphone16[at..<(at + frame)]),
                                                 reference: UnsafeBufferPointer(rebasing: render16[at..<(at + frame)]),
                                                 output: output)
                                _ = preprocessor.process(output)
                            }
                            // At 16 kHz the cleaned frame is coded, as in a call; at other rates the call
                            // resamples it back first, which the bare run leaves out: it codes the microphone.
                            input = rate == fp ? UnsafeBufferPointer(processed) : microphonePeriod
                        }
                        _ = try encoder.encode(input, into: packet)
                    }
                }
            }
        }
    }
}

/// Errors from the bare threads, collected for the control thread.
private final class Failures: Sendable {
    private let list = Mutex<[String]>([])
    func add(_ message: String) { list.withLock { $0.append(message) } }
    var first: String? { list.withLock { $0.first } }
}

/// A failure of the cost benchmark itself.
struct CostError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// CPU time, the measure of cost: unlike wall time it does not depend on how many other
/// threads share the cores.
enum CostClock {
    /// What the whole process used, every thread included: user plus system CPU seconds, and
    /// context switches (a preemption costs a thread its caches).
    struct Usage {
        var seconds = 0.0, switches = 0, preemptions = 0

        static func - (a: Usage, b: Usage) -> Usage {
            Usage(seconds: a.seconds - b.seconds, switches: a.switches - b.switches, preemptions: a.preemptions - b.preemptions)
        }
    }

    /// What the process used so far.
    static func process() -> Usage {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return Usage(seconds: seconds(usage.ru_utime) + seconds(usage.ru_stime),
                     switches: usage.ru_nvcsw + usage.ru_nivcsw, preemptions: usage.ru_nivcsw)
    }

    /// CPU nanoseconds of the calling thread so far.
    static func threadNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

// MARK: - The result

/// What `callbench cost` measured. A "call" in the percentages is one endpoint: one capture and
/// one playback stream in real time; a two-endpoint call costs twice that. The JSON keys (the
/// properties in snake case: `cpu_per_call_percent`, `ratio`, ...) are part of the command-line contract.
struct CostReport: Codable {
    var calls: Int, seconds: Double, rate: Int, paced: Bool
    var audioSeconds = 0.0, wallSeconds = 0.0, cpuSeconds = 0.0, roomCPUSeconds = 0.0, bareAudioSeconds = 0.0, bareCPUSeconds = 0.0
    /// With `--breakdown`: the bare frames cleaned by `VoiceProcessingUnit` instead (nil without).
    var unitCPUSeconds: Double?, unitRatio: Double?
    /// With `--runs` above 1: every run's ratio and CPU per endpoint (this report is the median run's).
    var runRatios: [Double] = [], runCPUPerCallPercent: [Double] = []
    /// Frames the calls coded with in-band FEC on (all endpoints), and the bare runs (all threads).
    var framesEncodedWithFEC = 0, bareFramesEncodedWithFEC = 0
    /// CPU until every call is connected, and from the last endpoint's quota to the end of shutdown.
    var setupCPUSeconds = 0.0, hangUpCPUSeconds = 0.0
    /// CPU of the calls' I/O threads (the media callback and the room).
    var ioThreadCPUSeconds = 0.0
    /// Context switches, and those of them that were preemptions, in the calls and the bare runs.
    var contextSwitches = 0, preemptions = 0, bareContextSwitches = 0, barePreemptions = 0
    var cpuPerCallPercent = 0.0, cpuPerCallWithRoomsPercent = 0.0, cpuPerTwoEndpointCallPercent = 0.0
    var bareCPUPerCallPercent = 0.0, ratio = 0.0, speed = 0.0
    var packetsSent = 0, packetsReceived = 0, packetsLost = 0, fecRecovered = 0, concealedMs = 0.0
    /// The largest share of one endpoint's audio that was concealed, %.
    var maxConcealedPercent = 0.0

    init(calls: Int, seconds: Double, rate: Int, paced: Bool) {
        self.calls = calls
        self.seconds = seconds
        self.rate = rate
        self.paced = paced
    }

    /// The shares of one core, once the calls and the bare runs are measured.
    mutating func finish() {
        cpuPerCallPercent = 100 * (cpuSeconds - roomCPUSeconds) / audioSeconds
        cpuPerCallWithRoomsPercent = 100 * cpuSeconds / audioSeconds
        cpuPerTwoEndpointCallPercent = 2 * cpuPerCallPercent
        bareCPUPerCallPercent = 100 * bareCPUSeconds / bareAudioSeconds
        ratio = cpuPerCallPercent / bareCPUPerCallPercent
        unitRatio = unitCPUSeconds.map { $0 / bareCPUSeconds }
        speed = audioSeconds / Double(2 * calls) / wallSeconds
    }

    func print(json: Bool) {
        func row(_ name: String, _ cpu: Double, _ note: String = "", audio: Double? = nil) {
            let percent = 100 * cpu / (audio ?? audioSeconds)
            Swift.print(name.padding(toLength: 40, withPad: " ", startingAt: 0)
                        + String(format: "%7.2f  %8.2f %%  %8.2f %%", cpu, percent, 2 * percent) + note)
        }
        Swift.print(String(format: "%d calls (%d endpoints) at %d Hz, %.0f s of audio per endpoint, %@: %.1fx real time (%.1f s)",
                           calls, 2 * calls, rate, seconds, paced ? "paced" : "unpaced", speed, wallSeconds))
        Swift.print("share of one core in real time".padding(toLength: 40, withPad: " ", startingAt: 0)
                    + "  CPU s    endpoint    2-endpoint call")
        row("calls, whole process (getrusage)", cpuSeconds)
        row("  simulated rooms", roomCPUSeconds)
        row("  media callbacks (I/O threads)", ioThreadCPUSeconds - roomCPUSeconds)
        row("  network threads, SIP, control", cpuSeconds - ioThreadCPUSeconds)
        row("calls without the rooms", cpuSeconds - roomCPUSeconds, "   target <= 3 %: " + (cpuPerCallPercent <= 3 ? "met" : "not met"))
        row("bare library calls", bareCPUSeconds, audio: bareAudioSeconds)
        if let unitCPUSeconds, let unitRatio {
            row("  through VoiceProcessingUnit", unitCPUSeconds, String(format: "   %.3f x bare", unitRatio), audio: bareAudioSeconds)
        }
        Swift.print(String(format: "ratio calls / bare: %.3f (target <= 1.15: %@)", ratio, ratio <= 1.15 ? "met" : "not met"))
        Swift.print(String(format: "included above: setting up every call %.2f CPU s, hanging up and shutting down %.2f CPU s",
                           setupCPUSeconds, hangUpCPUSeconds))
        Swift.print(String(format: "context switches per endpoint and second of audio: calls %.0f (%.0f preemptions), bare %.0f (%.0f)",
                           Double(contextSwitches) / audioSeconds, Double(preemptions) / audioSeconds,
                           Double(bareContextSwitches) / bareAudioSeconds, Double(barePreemptions) / bareAudioSeconds))
        let fecShare = 100 * Double(framesEncodedWithFEC) / (50 * audioSeconds)
        let bareFECShare = 100 * Double(bareFramesEncodedWithFEC) / (50 * bareAudioSeconds)
        Swift.print(String(format: "frames coded with in-band FEC (until the first receiver report): calls %.1f %%, bare %.1f %%%@",
                           fecShare, bareFECShare,
                           bareFECShare < fecShare - 1 ? " (only the bare run's second half can code it: the ratio is too high; run longer)" : ""))
        Swift.print(String(format: "packets sent %d, received %d, lost %d; FEC recovered %d; concealed %.1f s (at most %.2f %% of one endpoint's audio)%@",
                           packetsSent, packetsReceived, packetsLost, fecRecovered, concealedMs / 1000, maxConcealedPercent,
                           paced ? "" : " (unpaced ends run at different speeds)"))
        if json { printJSONLine(self, snakeCase: true) }
    }
}
