import AudioSession
import Testing

/// Spec section 4: record permission; without it capture delivers silence, never an error.
@Suite("Record permission")
struct RecordPermissionTests {
    @Test("The Linux default grants permission")
    func grantedByDefault() throws {
        let (system, _) = makeSystem()
        let call = try makeActiveCall(in: system)
        #expect(call.recordPermission == .granted)
        #expect(!call.capturesSilence)
    }

    @Test("Denied permission: requests answer false and capture delivers silence, while activation still succeeds")
    func deniedCapturesSilence() async throws {
        let (system, _) = makeSystem(recordPermissionPolicy: .alwaysDeny)
        let call = try makeActiveCall(in: system)
        #expect(call.isActive, "never an error in the audio path")
        #expect(call.recordPermission == .denied)
        #expect(await call.requestRecordPermission() == false)
        #expect(call.capturesSilence)
    }

    @Test("Undetermined until asked; the request (async or callback) answers with the policy",
          arguments: [true, false])
    func askPolicy(grant: Bool) async throws {
        let (system, _) = makeSystem(recordPermissionPolicy: .ask(grant: grant))
        let call = system.makeSession(name: "call")
        #expect(call.recordPermission == .undetermined)
        #expect(call.capturesSilence, "no permission yet: silence")

        #expect(await call.requestRecordPermission() == grant)
        #expect(call.recordPermission == (grant ? .granted : .denied))
        #expect(call.capturesSilence == !grant)

        let answers = MessageLog()
        call.requestRecordPermission { answers.append("\($0)") }
        #expect(answers.messages == ["\(grant)"], "a determined permission is answered as it is")
    }

    @Test("Changing the policy resets the permission to its starting value")
    func changingPolicy() {
        let (system, _) = makeSystem()
        system.recordPermissionPolicy = .alwaysDeny
        #expect(system.recordPermission == .denied)
        system.recordPermissionPolicy = .ask(grant: true)
        #expect(system.recordPermission == .undetermined)
    }
}

/// The system asks by itself the first time a session that records starts input.
@Suite("Record permission asked when input starts")
struct RecordPermissionOnInputTests {
    @Test("Under .ask, the first I/O of a recording session asks; the answer is remembered",
          arguments: [true, false])
    func firstInputAsks(grant: Bool) throws {
        let (system, _) = makeSystem(recordPermissionPolicy: .ask(grant: grant))
        let call = try makeActiveCall(in: system)
        #expect(call.recordPermission == .undetermined, "activation alone does not ask")

        let io = try call.beginIO(named: "voice") {}

        #expect(call.recordPermission == (grant ? .granted : .denied))
        #expect(call.capturesSilence == !grant)
        io.end()
        let again = try call.beginIO(named: "voice") {}
        #expect(system.recordPermission == (grant ? .granted : .denied), "asked once")
        again.end()
    }

    @Test("I/O of a session that does not record does not ask")
    func playbackDoesNotAsk() throws {
        let (system, _) = makeSystem(recordPermissionPolicy: .ask(grant: true))
        let music = system.makeSession(name: "music")
        try music.setCategory(.playback)
        try music.setActive(true)
        let io = try music.beginIO(named: "player") {}
        #expect(system.recordPermission == .undetermined)
        io.end()
    }

    @Test("A denied permission is not asked again when input starts")
    func deniedStaysDenied() throws {
        let (system, _) = makeSystem(recordPermissionPolicy: .alwaysDeny)
        let call = try makeActiveCall(in: system)
        let io = try call.beginIO(named: "voice") {}
        #expect(call.recordPermission == .denied && call.capturesSilence)
        io.end()
    }
}
