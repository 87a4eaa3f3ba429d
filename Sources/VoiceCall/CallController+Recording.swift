import Logging
import WAV

/// Recording a call's two directions to a stereo WAV file.
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
}
