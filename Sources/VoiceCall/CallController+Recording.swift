import Logging
import WAV

/// Recording a call's two directions to a stereo WAV file, and playing audio into a call.
extension CallController {
    /// Starts recording `call` to `path` (``Call/startRecording(to:)``).
    func startRecording(_ call: Call, to path: String) throws(CallError) {
        guard let record = records[call.id], let media = record.media else {
            throw .invalidState("only a call with media is recorded (\(call.state))")
        }
        guard record.recording == nil else { throw .invalidState("call \(call.id) is being recorded already") }
        let writer: WAVStreamWriter
        do { writer = try WAVStreamWriter(path: path, sampleRate: media.rate, channels: 2) } catch {
            throw .media("cannot record: \(error)")
        }
        records[call.id]?.recording = CallRecordingJob(ring: media.recording, writer: writer)
        logger.info("call \(call.id): recording to \(path)")
    }

    /// Stops recording `call` and waits for the file (``Call/stopRecording()``).
    func stopRecording(_ call: Call) async throws(CallError) -> Double {
        guard let job = records[call.id]?.recording else { throw .invalidState("call \(call.id) is not being recorded") }
        records[call.id]?.recording = nil
        return try await Self.finish(job, sampleRate: records[call.id]?.media?.rate)
    }

    /// Waits for a stopped recording's file; the seconds it holds.
    static func finish(_ job: CallRecordingJob, sampleRate: Int?) async throws(CallError) -> Double {
        switch await job.finish() {
        case let .success(frames): return Double(frames) / Double(max(1, sampleRate ?? 1))
        case let .failure(error): throw .media("recording to \(job.path): \(error)")
        }
    }

    /// At the call's end: the recording's file is finished in the background.
    func endRecording(_ id: String) {
        guard let job = records[id]?.recording else { return }
        records[id]?.recording = nil
        let logger = self.logger
        Task {
            if case let .failure(error) = await job.finish() { logger.error("call \(id): recording to \(job.path): \(error)") }
        }
    }

    /// Plays `source` to `call`'s peer (``Call/play(_:mix:loops:)``), in place of the one playing.
    func play(_ source: CallAudioSource, mix: CallAudioMix, loops: Bool, on call: Call) async throws(CallError) -> CallPlayback {
        guard let rate = records[call.id]?.media?.rate else { throw .invalidState("only a call with media plays audio (\(call.state))") }
        // Off the controller: a long file takes a while to read and resample.
        let rendered = await Task.detached { () -> Result<[Int16], CallError> in
            do throws(CallError) { return .success(try source.render(rate: rate)) } catch { return .failure(error) }
        }.value
        let samples = try rendered.get()
        if let old = records[call.id]?.playback {
            old.stop()
            await old.finished()
        }
        guard let media = records[call.id]?.media, media.rate == rate else { throw .invalidState("the call's media went away") }
        let playback = CallPlayback(samples: samples, loops: loops, ring: media.playback, mix: mix, rate: rate)
        records[call.id]?.playback = playback
        logger.info("call \(call.id): playing \(source) to the peer")
        return playback
    }

    /// At the call's end, or when its media goes: the playback stops.
    func endPlayback(_ id: String) {
        records[id]?.playback?.stop()
        records[id]?.playback = nil
    }
}
