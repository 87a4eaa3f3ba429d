extension SystemState {
    // MARK: - Hardware events

    mutating func handle(_ event: AudioHardwareEvent, _ effects: inout Effects) {
        switch event {
        case let .deviceConnected(device):
            let before = isInputAvailable
            connect(device, &effects)
            postInputAvailabilityChanges(since: before)
        case let .deviceDisconnected(deviceID):
            let before = isInputAvailable
            disconnect(deviceID: deviceID, &effects)
            postInputAvailabilityChanges(since: before)
        case let .deviceChanged(device):
            let before = isInputAvailable
            change(device, &effects)
            postInputAvailabilityChanges(since: before)
        case let .proximityChanged(newProximity):
            guard newProximity != proximity else { return }
            proximity = newProximity
            reevaluateRoutes(reason: .override, &effects)
        case let .builtInMicMuteChanged(muted):
            setBuiltInMicMuted(muted, &effects)
        case .mediaServicesLost:
            loseMediaServices(&effects)
        case .mediaServicesReset:
            resetMediaServices(&effects)
        case let .outputVolumeChanged(volume):
            setOutputVolume(volume)
        }
    }

    private mutating func connect(_ device: AudioDevice, _ effects: inout Effects) {
        devices.removeAll { $0.id == device.id }
        devices.append(device)
        if !device.inputs.isEmpty {
            // Last in wins: a new input device takes over from an explicit preference.
            for id in orderedIDs { sessions[id]?.preferredInputUID = nil }
        }
        let cleared = clearOverrides()
        reevaluateRoutes(reason: .newDeviceAvailable, alwaysNotify: cleared, &effects)
        let snapshot = self
        endInterruptions(by: .routeDisconnected) { !snapshot.lacksSuitableRoute($0, snapshot.route(for: $0)) }
    }

    /// One plug, not two: a device whose second jack switched keeps its place, preferences for
    /// the ports it kept and the overrides; only the route follows its ports.
    private mutating func change(_ device: AudioDevice, _ effects: inout Effects) {
        guard let index = devices.firstIndex(where: { $0.id == device.id }) else { return connect(device, &effects) }
        let gone = Set(devices[index].ports.map(\.uid)).subtracting(device.ports.map(\.uid))
        devices[index] = device
        for id in orderedIDs where gone.contains(sessions[id]?.preferredInputUID ?? "") {
            sessions[id]?.preferredInputUID = nil
        }
        reevaluateRoutes(reason: .routeConfigurationChange, &effects)
    }

    private mutating func disconnect(deviceID: String, _ effects: inout Effects) {
        guard let device = devices.first(where: { $0.id == deviceID }) else { return }
        devices.removeAll { $0.id == deviceID }
        let gone = Set(device.ports.map(\.uid))
        for id in orderedIDs where gone.contains(sessions[id]?.preferredInputUID ?? "") {
            sessions[id]?.preferredInputUID = nil
        }
        let cleared = clearOverrides()
        reevaluateRoutes(reason: .oldDeviceUnavailable, alwaysNotify: cleared, &effects)
    }

    /// Muting interrupts the sessions that record from the built-in microphone (the system
    /// route's input) unless they set ``AudioSession/CategoryOptions/overrideMutedMicrophoneInterruption``
    /// (they record silence); unmuting ends those interruptions.
    private mutating func setBuiltInMicMuted(_ muted: Bool, _ effects: inout Effects) {
        guard muted != isBuiltInMicMuted else { return }
        isBuiltInMicMuted = muted
        guard muted else { return endInterruptions(by: .builtInMicMute) }
        let recording = activeSessions.filter {
            $0.configuration.category.hasInput && !$0.configuration.options.contains(.overrideMutedMicrophoneInterruption)
                && currentRoute(for: $0).inputs.contains { $0.portType == .builtInMic }
        }
        for session in recording {
            interrupt(session.id, reason: .builtInMicMuted, by: .builtInMicMute, &effects)
        }
        if !recording.isEmpty { reevaluateRoutes(reason: .categoryChange, only: [], &effects) }
    }

    /// Every session is told, active or not (on iOS any app may observe the volume).
    private mutating func setOutputVolume(_ volume: Float) {
        guard volume != outputVolume else { return }
        outputVolume = volume
        for id in orderedIDs { post(.outputVolumeChanged(volume), to: id) }
    }

    /// Every session becomes inactive (I/O stopped) and is told; activation fails until the reset.
    mutating func loseMediaServices(_ effects: inout Effects) {
        guard !isMediaServicesLost else { return }
        stopEverything(&effects)
        isMediaServicesLost = true
        for id in orderedIDs { post(.mediaServicesWereLost, to: id) }
    }

    /// Every session's properties go back to their defaults and every session is told.
    mutating func resetMediaServices(_ effects: inout Effects) {
        stopEverything(&effects)
        isMediaServicesLost = false
        for id in orderedIDs {
            sessions[id]?.resetProperties()
            post(.mediaServicesWereReset, to: id)
        }
    }

    private mutating func stopEverything(_ effects: inout Effects) {
        for id in orderedIDs {
            makeInactive(id, &effects)
            sessions[id]?.interruptedBy = nil
            sessions[id]?.portOverride = .none
        }
    }

    /// Switches to other hardware: what the caller read from it outside the lock replaces the old devices, proximity and values.
    mutating func replaceHardware(_ newHardware: any AudioHardware, reading: HardwareReading, _ effects: inout Effects) {
        let before = isInputAvailable
        defer { postInputAvailabilityChanges(since: before) }
        effects.released.append(hardware)
        hardware = newHardware
        devices = reading.devices
        proximity = reading.proximity
        hardwareValues = reading.values
        inputGain = reading.inputGain
        isInputGainSettable = reading.isInputGainSettable
        setOutputVolume(reading.outputVolume)
        for id in orderedIDs { sessions[id]?.preferredInputUID = nil }
        let cleared = clearOverrides()
        // With a route owner, configure the new hardware at commit even if the route looks the same.
        hardwareRequest = routeOwner == nil ? .idle : nil
        reevaluateRoutes(reason: .routeConfigurationChange, alwaysNotify: cleared, &effects)
    }
}
