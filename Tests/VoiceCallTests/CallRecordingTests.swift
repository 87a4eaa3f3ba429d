import Synchronization
import AudioAnalysis
import Foundation
import Testing
import TestSupport
@testable import VoiceCall
import VoiceProcessing
import WAV

/// Recording a call's two directions to a stereo WAV file.
@Suite("Call recording", .serialized)
struct CallRecordingTests {
    @Test("A recording holds what we send on the left and what we play on the right, for as long as it ran")
    func twoDirections() async throws {
        let plain: (inout CallConfiguration) -> Void = { $0.voiceProcessing.mode = .other }
        let alice = try Phone("alice", tone: 300, echo: 0, configure: plain)
        let bob = try Phone("bob", tone: 440, echo: 0, configure: plain)
        let (call, _) = try await alice.call(bob)
        let path = NSTemporaryDirectory() + "callaudio-recording-\(getpid()).wav"
        defer { unlink(path) }
        let started = ContinuousClock.now
        try await call.startRecording(to: path)
        await #expect(throws: CallError.self) { try await call.startRecording(to: path) }
        try await Task.sleep(for: .seconds(1.5))
        let seconds = try await call.stopRecording()
        let ran = ContinuousClock.now - started
        await #expect(throws: CallError.self) { try await call.stopRecording() }
        await call.hangUp()
        await alice.shutdown(); await bob.shutdown()

        let audio = try WAV.read(path)
        #expect(audio.channels == 2)
        #expect(audio.sampleRate == 16000)
        // Bounded by the wall time it ran, not a constant: under load the sleep itself runs long.
        #expect(seconds > 1.2 && seconds <= ran / .seconds(1) + 0.05, "\(seconds) s in \(ran)")
        #expect(abs(Double(audio.frameCount) / 16000 - seconds) < 0.001)
        let left = (0..<audio.frameCount).map { audio.samples[2 * $0] }, right = (0..<audio.frameCount).map { audio.samples[2 * $0 + 1] }
        let tail = { (x: [Float]) in Array(x[(x.count / 2)...]) }
        #expect(abs(Tone.dominantFrequency(tail(left), sampleRate: 16000) - 300) < 10, "we send alice's tone")
        #expect(abs(Tone.dominantFrequency(tail(right), sampleRate: 16000) - 440) < 10, "we play bob's tone")
        #expect(Levels.dBFS(tail(right)) > -40)
    }

    @Test("A recording to a path that cannot be written throws and changes nothing")
    func badPath() async throws {
        let alice = try Phone("alice"), bob = try Phone("bob")
        let (call, _) = try await alice.call(bob)
        await #expect(throws: CallError.self) { try await call.startRecording(to: "/nonexistent-dir/x.wav") }
        await #expect(throws: CallError.self) { try await call.stopRecording() }
        #expect(call.state == .active)
        await call.hangUp()
        await alice.shutdown(); await bob.shutdown()
    }
}

/// The I/O thread's side of a recording allocates nothing, and the writer gets every frame in order.
@Suite("Call recording ring")
struct CallRecordingRingTests {
    @Test("Pushing periods allocates nothing; draining returns them in order, and a full ring drops and counts")
    func pushAndDrain() throws {
        let ring = CallRecordingRing(frames: 960)
        ring.isOn.store(true, ordering: .relaxed)
        let sent = [Int16](repeating: 0, count: 320).enumerated().map { Int16($0.offset) }
        let played = sent.map { -$0 }
        var allocations: UInt64 = 0
        sent.withUnsafeBufferPointer { s in
            played.withUnsafeBufferPointer { p in
                let before = AllocationCounter.thisThread
                for _ in 0..<3 { ring.push(sent: s, played: p) }
                allocations = AllocationCounter.thisThread - before
            }
        }
        #expect(!AllocationCounter.isActive || allocations == 0)
        ring.push(sent: sent.withUnsafeBufferPointer { $0 }, played: played.withUnsafeBufferPointer { $0 })
        #expect(ring.droppedFrames.load(ordering: .relaxed) == 320, "the fourth period found the ring full")
        var drained: [Int16] = []
        try ring.drain { (samples) throws(WAVError) in drained += samples }
        #expect(drained.count == 3 * 640)
        #expect(Array(drained[0..<6]) == [0, 0, 1, -1, 2, -2])
        #expect(Array(drained[(2 * 640)..<(2 * 640 + 4)]) == [0, 0, 1, -1])
    }
}
