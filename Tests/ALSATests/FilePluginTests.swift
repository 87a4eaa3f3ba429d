import Platform
import ALSA
import AudioAnalysis
import Foundation
import Testing
import TestSupport

@Suite("ALSA PCM through the file plugin")
struct FilePluginTests {
    /// Random 16-bit frames as raw little-endian bytes.
    func randomRaw(frames: Int, channels: Int, seed: UInt64) -> [UInt8] {
        var rng = SeededRandom(seed: seed)
        return (0..<(frames * channels * 2)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }

    @Test("Capture returns the input file byte for byte", arguments: [1, 2])
    func captureIsByteExact(channels: Int) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let frames = 48000
        let input = randomRaw(frames: frames, channels: channels, seed: 1)
        try Data(input).write(to: URL(fileURLWithPath: dir.file("in.raw")))
        let config = FilePCMConfiguration(name: "cap", inputFile: dir.file("in.raw"))
        var pcm = try PCM(name: config.name, configuration: config.text, stream: .capture)
        let granted = try pcm.configure(PCMParameters(sampleRate: 48000, channels: channels, periodFrames: 480))
        #expect(granted.sampleRate == 48000 && granted.channels == channels && granted.periodFrames == 480)

        let captured = UnsafeMutableRawBufferPointer.allocate(byteCount: input.count, alignment: 8)
        defer { captured.deallocate() }
        for period in 0..<(frames / 480) {
            let slice = UnsafeMutableRawBufferPointer(rebasing: captured[(period * 480 * granted.bytesPerFrame)...])
            #expect(try pcm.read(into: slice, frames: 480) == 480)
        }
        #expect(Array(captured) == input)
        #expect(pcm.xrunCount == 0)
    }

    @Test("Playback writes exactly the frames given")
    func playbackWritesExactly() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let output = randomRaw(frames: 16000 * 3 + 77, channels: 1, seed: 2)  // not a whole number of periods
        do {
            let config = FilePCMConfiguration(name: "play", outputFile: dir.file("out.raw"))
            var pcm = try PCM(name: config.name, configuration: config.text, stream: .playback)
            try pcm.configure(PCMParameters(sampleRate: 16000, channels: 1, periodFrames: 160))
            let written = try output.withUnsafeBytes { try pcm.write($0, frames: output.count / 2) }
            #expect(written == output.count / 2)
            try pcm.drain()
        }  // closing the PCM flushes the file
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir.file("out.raw"))))
        #expect(file == output)
    }

    @Test("Opening a PCM that does not exist fails with ALSA's message and the name")
    func missingPCM() {
        let error = #expect(throws: ALSAError.noSuchDevice) {
            _ = try PCM(name: "callaudio_no_such_pcm", stream: .playback)
        }
        #expect(error?.context.contains("callaudio_no_such_pcm") == true)
        #expect(error?.message == "No such file or directory")
    }

    @Test("Malformed configuration text is rejected")
    func malformedConfiguration() {
        #expect(throws: ALSAError.self) {
            _ = try PCM(name: "x", configuration: "pcm.x { type file slave.pcm { ", stream: .playback)
        }
    }

    @Test("An unusual rate is negotiated to what the device grants and reported")
    func reportsGrantedParameters() throws {
        let config = FilePCMConfiguration(name: "play")
        var pcm = try PCM(name: config.name, configuration: config.text, stream: .playback)
        // The null slave takes any rate; the point is that granted values are read back, not assumed.
        let granted = try pcm.configure(PCMParameters(sampleRate: 22050, channels: 2, periodFrames: 441, bufferFrames: 1764))
        #expect(granted == pcm.parameters)
        #expect(granted.sampleRate == 22050)
        #expect(granted.periodFrames > 0 && granted.bufferFrames >= granted.periodFrames * 2)
        #expect(try pcm.available() >= 0)
        #expect(try pcm.delay() == 0)
    }

    @Test("The PCM list includes the null device")
    func listsPCMs() {
        let names = ALSALibrary.pcmDevices().map(\.name)
        #expect(names.contains("null"))
    }
}
