import AudioSession
import Testing

/// Spec section 4 (isBusy, chosen behaviour) and section 5 (on began the I/O is stopped).
@Suite("Registered I/O")
struct IOActivityTests {
    @Test("Deactivating with I/O running stops the I/O, deactivates, and reports isBusy")
    func deactivateWithIORunning() throws {
        let (system, _) = makeSystem()
        let call = try makeActiveCall(in: system)
        let stops = MessageLog()
        let io = try call.beginIO(named: "voice-processing") { stops.append("stopped") }
        #expect(call.isIORunning)

        #expect(throws: AudioSessionError.isBusy(stoppedIO: ["voice-processing"])) { try call.setActive(false) }

        #expect(stops.messages == ["stopped"])
        #expect(!call.isActive, "deactivated anyway")
        #expect(!io.isRunning)
        #expect(AudioSessionError.isBusy(stoppedIO: []).code == .isBusy)
    }

    @Test("Ending the I/O first makes deactivation clean")
    func cleanDeactivation() throws {
        let (system, _) = makeSystem()
        let call = try makeActiveCall(in: system)
        let stops = MessageLog()
        let io = try call.beginIO(named: "vpio") { stops.append("stopped") }
        io.end()
        io.end()  // idempotent
        try call.setActive(false)
        #expect(stops.messages.isEmpty, "end() is the I/O saying it stopped; the handler is not called")
    }

    @Test("Releasing the activity ends it")
    func releasingEnds() throws {
        let (system, _) = makeSystem()
        let call = try makeActiveCall(in: system)
        do {
            _ = try call.beginIO(named: "vpio") {}
        }
        #expect(!call.isIORunning)
    }

    @Test("I/O needs an active session")
    func ioNeedsActiveSession() {
        let (system, _) = makeSystem()
        let call = system.makeSession(name: "call")
        #expect(throws: AudioSessionError.sessionNotActive) { _ = try call.beginIO(named: "vpio") {} }
    }

    @Test("An interruption stops the I/O before began is delivered (a VoIP call goes on hold)")
    func interruptionStopsIOFirst() throws {
        let (system, _) = makeSystem()
        let voip = try makeActiveCall(in: system, mode: .voiceChat, name: "voip")
        let order = MessageLog()
        let io = try voip.beginIO(named: "vpio") { order.append("io stopped") }
        _ = voip.addObserver { notification in
            if let interruption = notification.interruption { order.append("\(interruption.type)") }
        }

        let phone = system.makeSession(name: "phone", priority: .phoneCall)
        try phone.setCategory(.playAndRecord, mode: .voiceChat)
        try phone.setActive(true)

        #expect(order.messages == ["io stopped", "began"])
        #expect(!io.isRunning)

        // On ended + shouldResume the call reactivates and restarts its I/O itself.
        try phone.setActive(false, options: .notifyOthersOnDeactivation)
        #expect(order.messages.last == "ended")
        try voip.setActive(true)
        let resumed = try voip.beginIO(named: "vpio") {}
        #expect(resumed.isRunning)
        resumed.end()
    }
}
