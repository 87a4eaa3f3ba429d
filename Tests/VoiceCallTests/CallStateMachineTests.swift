import Platform
import Testing
import VoiceCall

@Suite("Call state machine")
struct CallStateMachineTests {
    @Test("An outgoing call rings, is answered, is held by an interruption, resumes and ends")
    func outgoingLifecycle() throws {
        var call = CallStateMachine()
        try call.apply(.dial); #expect(call.state == .outgoingRinging)
        try call.apply(.answered); #expect(call.state == .active)
        try call.apply(.interrupted); #expect(call.state == .held(.interrupted))
        try call.apply(.resumed); #expect(call.state == .active)
        try call.apply(.ended(.remoteHangUp)); #expect(call.state == .ended(.remoteHangUp))
    }

    @Test("The app's hold outlasts an interruption and only its resume ends it")
    func appHold() throws {
        #expect(try CallStateMachine.next(.active, .hold) == .held(.local))
        #expect(try CallStateMachine.next(.held(.interrupted), .hold) == .held(.local))
        #expect(try CallStateMachine.next(.held(.local), .interrupted) == .held(.local))
        #expect(try CallStateMachine.next(.held(.local), .resumed) == .active)
        for state in [CallState.idle, .outgoingRinging, .incomingRinging, .ended(.remoteHangUp)] {
            #expect(throws: InvalidCallTransition.self) { _ = try CallStateMachine.next(state, .hold) }
        }
    }

    @Test("An incoming call is answered by us, not by the peer")
    func incomingLifecycle() throws {
        var call = CallStateMachine()
        try call.apply(.incoming)
        #expect(throws: InvalidCallTransition.self) { try call.apply(.answered) }
        #expect(call.state == .incomingRinging)
        try call.apply(.answer)
        #expect(call.state == .active)
    }

    @Test("Every state but ended can end; an ended call accepts nothing", arguments: [
        CallState.idle, .outgoingRinging, .incomingRinging, .active, .held(.interrupted), .held(.local),
    ])
    func endsFromAnyLiveState(state: CallState) throws {
        #expect(try CallStateMachine.next(state, .ended(.localHangUp)) == .ended(.localHangUp))
        for event in [CallEvent.dial, .incoming, .answered, .answer, .interrupted, .hold, .resumed, .ended(.localHangUp)] {
            #expect(throws: InvalidCallTransition.self) { _ = try CallStateMachine.next(.ended(.remoteHangUp), event) }
        }
    }

    @Test("Events that do not apply are rejected and change nothing", arguments: [
        (CallState.idle, CallEvent.answer), (.idle, .resumed), (.outgoingRinging, .answer), (.outgoingRinging, .dial),
        (.incomingRinging, .interrupted), (.active, .dial), (.active, .answer), (.active, .resumed), (.held(.interrupted), .answer),
    ])
    func rejectsInvalidEvents(state: CallState, event: CallEvent) {
        let error = #expect(throws: InvalidCallTransition.self) { _ = try CallStateMachine.next(state, event) }
        #expect(error?.state == state)
    }
}
