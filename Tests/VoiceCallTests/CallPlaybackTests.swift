import AudioAnalysis
import Synchronization
import Foundation
import Testing
import TestSupport
@testable import VoiceCall
import VoiceProcessing
import WAV

/// Playing a file or a tone into a call: what the peer gets, in place of the microphone or
/// over it, stopped, looped, and the errors that change nothing.
@Suite("Playing audio into a call", .serialized)
struct CallPlaybackTests {
    /// The uplink recorded while `body` runs (after the voice processing and the playback).
    static func uplink(of call: Call, on phone: Phone, during body: () async throws -> Void) async rethrows -> [Float] {
        let start = await phone.controller.recordedUplink(of: call).count
        try await body()
        let all = await phone.controller.recordedUplink(of: call)
        return all.dropFirst(start).map { Float($0) / 32768 }
    }

    @Test("A tone replaces the microphone: the peer gets it at its level, then the microphone again")
    func toneReplacesTheMicrophone() async throws {
        let plain: (inout CallConfiguration) -> Void = { $0.voiceProcessing.mode = .other; $0.recordUplinkSeconds = 8 }
        let alice = try Phone("alice", tone: 300, echo: 0, configure: plain), bob = try Phone("bob")
        let (call, _) = try await alice.call(bob)
        try await Task.sleep(for: .milliseconds(300))
        let tone = CallTone(frequencies: [1000], level: -20, on: .seconds(1))
        let during = try await Self.uplink(of: call, on: alice) {
            let playback = try await call.play(.tone(tone))
            await playback.finished()
        }
        let after = try await Self.uplink(of: call, on: alice) { try await Task.sleep(for: .milliseconds(500)) }
        await call.hangUp()
        await alice.shutdown(); await bob.shutdown()
        // The middle of the tone: 1 kHz alone, peak -20 dBFS so RMS -23.
        let middle = Array(during[(during.count / 4)..<(during.count / 2)])
        #expect(abs(Tone.dominantFrequency(middle, sampleRate: 16000) - 1000) < 10)
        #expect(abs(Levels.dBFS(middle) + 23) < 0.5, "\(Levels.dBFS(middle)) dBFS")
        #expect(abs(Tone.dominantFrequency(after, sampleRate: 16000) - 300) < 10, "the microphone again")
        #expect(Double(during.count) / 16000 >= 1, "finished once the whole tone was sent")
        print("playback: a 1 s tone took \(Double(during.count) / 16000) s of uplink, \(Levels.dBFS(middle)) dBFS")
    }

    @Test("A file at another rate is resampled and mixed over the voice; a looping one plays until stopped")
    func fileMixesAndLoops() async throws {
        let path = NSTemporaryDirectory() + "callaudio-playback-\(getpid()).wav"
        defer { unlink(path) }
        try WAV.write(WAVAudio(sampleRate: 8000, samples: Tone.sine(frequency: 700, sampleRate: 8000, seconds: 0.25, amplitude: 0.1)),
                      to: path)
        let plain: (inout CallConfiguration) -> Void = { $0.voiceProcessing.mode = .other; $0.recordUplinkSeconds = 8 }
        let alice = try Phone("alice", tone: 300, echo: 0, configure: plain), bob = try Phone("bob")
        let (call, _) = try await alice.call(bob)
        try await Task.sleep(for: .milliseconds(300))
        let during = try await Self.uplink(of: call, on: alice) {
            let playback = try await call.play(.file(path), mix: .mixesWithMicrophone, loops: true)
            try await Task.sleep(for: .seconds(1))
            playback.stop()
            await playback.finished()
        }
        await call.hangUp()
        await alice.shutdown(); await bob.shutdown()
        let middle = Array(during[(during.count / 4)..<(3 * during.count / 4)])
        let spectrum = { (f: Double) in Levels.dBFS(Self.bandpass(middle, frequency: f)) }
        #expect(spectrum(700) > -30, "the file, looped past its 0.25 s: \(spectrum(700)) dBFS")
        #expect(spectrum(300) > -30, "the voice under it: \(spectrum(300)) dBFS")
    }

    @Test("Errors change nothing: a missing file, a tone out of range, a call without media")
    func errors() async throws {
        let alice = try Phone("alice"), bob = try Phone("bob")
        let (call, _) = try await alice.call(bob)
        await #expect(throws: CallError.self) { _ = try await call.play(.file("/nonexistent/x.wav")) }
        await #expect(throws: CallError.self) { _ = try await call.play(.tone(CallTone(frequencies: [9000], on: .seconds(1)))) }
        await #expect(throws: CallError.self) { _ = try await call.play(.tone(CallTone(frequencies: [440], level: 3, on: .seconds(1)))) }
        #expect(call.state == .active)
        await call.hangUp()
        await #expect(throws: CallError.self) { _ = try await call.play(.tone(.beep)) }
        await alice.shutdown(); await bob.shutdown()
    }

    /// A crude band-pass: the signal times a complex sinusoid, averaged over 10 ms blocks.
    static func bandpass(_ x: [Float], frequency: Double) -> [Float] {
        let block = 160
        return stride(from: 0, to: x.count - block, by: block).map { start in
            var re = 0.0, im = 0.0
            for n in start..<(start + block) {
                let phase = 2 * Double.pi * frequency * Double(n) / 16000
                re += Double(x[n]) * cos(phase)
                im += Double(x[n]) * sin(phase)
            }
            return Float(2 * (re * re + im * im).squareRoot() / Double(block))
        }
    }
}

/// The I/O thread's side of a playback allocates nothing, mixes or replaces, and drops what
/// was queued when asked.
@Suite("Call playback ring")
struct CallPlaybackRingTests {
    @Test("Pulling periods allocates nothing; it replaces or mixes, fills a short period with silence, and a flush drops the queue")
    func pullMixAndFlush() {
        let ring = CallPlaybackRing(frames: 1000)
        #expect(ring.write(ArraySlice([Int16](repeating: 100, count: 600))) == 600)
        ring.isOn.store(true, ordering: .relaxed)
        ring.replaces.store(true, ordering: .relaxed)
        var period = [Int16](repeating: 7, count: 320)
        var allocations: UInt64 = 0
        period.withUnsafeMutableBufferPointer { p in
            let before = AllocationCounter.thisThread
            ring.pull(into: p)
            allocations = AllocationCounter.thisThread - before
        }
        #expect(!AllocationCounter.isActive || allocations == 0)
        #expect(period.allSatisfy { $0 == 100 })
        ring.replaces.store(false, ordering: .relaxed)
        period = [Int16](repeating: 7, count: 320)
        period.withUnsafeMutableBufferPointer { ring.pull(into: $0) }
        #expect(Array(period[..<280]).allSatisfy { $0 == 107 } && Array(period[280...]).allSatisfy { $0 == 7 })
        #expect(ring.shortPeriods.load(ordering: .relaxed) == 1)
        #expect(ring.write(ArraySlice([Int16](repeating: 5, count: 300))) == 300)
        ring.flush()
        period = [Int16](repeating: 7, count: 320)
        period.withUnsafeMutableBufferPointer { ring.pull(into: $0) }
        #expect(period.allSatisfy { $0 == 7 }, "flushed: nothing added")
    }
}
