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
