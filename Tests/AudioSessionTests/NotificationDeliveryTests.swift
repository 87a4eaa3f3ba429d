import AudioSession
import Testing

/// Spec sections 5 and 6 and the delivery contract: streams and observer closures,
/// delivered after the lock is released, in order.
@Suite("Notification delivery")
struct NotificationDeliveryTests {
    @Test("A stream delivers the same notifications, in order, and buffers them")
    func streamBuffersInOrder() async throws {
        let (system, hardware) = makeSystem()
        let call = try makeActiveCall(in: system)
        let stream = call.notifications()

        // Everything happens before anyone reads: the stream must buffer it.
        hardware.connect(.wiredHeadset())
        try call.overrideOutputAudioPort(.speaker)
        system.simulateMediaServicesLost()

        var received: [AudioSessionNotification] = []
        for await notification in stream {
            received.append(notification)
            if received.count == 3 { break }
        }
        #expect(received.map(\.routeChange?.reason) == [.newDeviceAvailable, .override, nil])
        #expect(received.last == .mediaServicesWereLost)
        #expect(received[1].routeChange?.previousRoute.ports == Ports(in: [.headsetMic], out: [.headphones]))
    }

    @Test("for-await with a case pattern picks one kind of notification")
    func streamPatternMatching() async throws {
        let (system, _) = makeSystem()
        let music = system.makeSession(name: "music")
        try music.setCategory(.playback)
        try music.setActive(true)
        let stream = music.notifications()
        let call = try makeActiveCall(in: system)
        try call.setActive(false, options: .notifyOthersOnDeactivation)

        var interruptions: [AudioSession.Interruption] = []
        for await case .interruption(let interruption) in stream {
            interruptions.append(interruption)
            if interruptions.count == 2 { break }
        }
        #expect(interruptions.map(\.type) == [.began, .ended])
        #expect(interruptions.last?.options == .shouldResume)
    }

    @Test("A stream finishes when its session is released")
    func streamFinishesWithSession() async throws {
        let (system, _) = makeSystem()
        var session: AudioSession? = system.makeSession(name: "short-lived")
        let stream = try #require(session).notifications()
        session = nil
        var count = 0
        for await _ in stream { count += 1 }
        #expect(count == 0)
    }

    @Test("A removed observer is no longer called")
    func removeObserver() throws {
        let (system, hardware) = makeSystem()
        let call = try makeActiveCall(in: system)
        let log = MessageLog()
        let token = call.addObserver { log.append($0.description) }

        hardware.connect(.wiredHeadset())
        call.removeObserver(token)
        hardware.disconnect(.wiredHeadset())

        #expect(log.messages.count == 1)
    }

    @Test("Each session receives only its own notifications")
    func notificationsArePerSession() throws {
        let (system, hardware) = makeSystem()
        let call = try makeActiveCall(in: system)
        let idle = system.makeSession(name: "idle")
        let callEvents = NotificationRecorder(call)
        let idleEvents = NotificationRecorder(idle)

        hardware.connect(.wiredHeadset())

        #expect(callEvents.routeChanges.count == 1)
        #expect(idleEvents.all.isEmpty, "inactive sessions get no route changes")
    }

    @Test("Observers run after the lock is released: they may call back into the session (resume on ended)")
    func observerMayReenter() throws {
        let (system, _) = makeSystem()
        let music = system.makeSession(name: "music")
        try music.setCategory(.playback)
        try music.setActive(true)
        let resumed = MessageLog()
        _ = music.addObserver { [weak music] notification in
            guard let music, let interruption = notification.interruption,
                  interruption.type == .ended, interruption.options.contains(.shouldResume) else { return }
            do {
                try music.setActive(true)
                resumed.append("resumed")
            } catch {
                resumed.append("failed: \(error)")
            }
        }

        let call = try makeActiveCall(in: system)
        try call.setActive(false, options: .notifyOthersOnDeactivation)

        #expect(resumed.messages == ["resumed"])
        #expect(music.isActive)
    }

    @Test("Notifications from a change made inside an observer arrive after the current ones, in order")
    func nestedChangesAreQueued() throws {
        let (system, hardware) = makeSystem()
        let call = try makeActiveCall(in: system)
        let log = MessageLog()
        _ = call.addObserver { [weak call] notification in
            log.append(notification.routeChange?.reason.rawValue ?? "other")
            // On the first plug, set the override from inside the observer.
            if notification.routeChange?.reason == .newDeviceAvailable {
                try? call?.overrideOutputAudioPort(.speaker)
                log.append("override set")
            }
        }

        hardware.connect(.wiredHeadset())

        #expect(log.messages == ["newDeviceAvailable", "override set", "override"])
    }

    @Test("Notifications arrive on the thread that caused the change, before the call returns")
    func deliveryIsSynchronous() async throws {
        let (system, hardware) = makeSystem()
        let call = try makeActiveCall(in: system)
        let events = NotificationRecorder(call)
        // Cause the change from another task; when it returns the observer has run.
        await Task.detached { hardware.connect(.wiredHeadset()) }.value
        #expect(events.routeChanges.count == 1)
    }
}
