/// How long a test waits for something that should happen. Generous on purpose: a loaded CI
/// machine can starve a test for seconds, and the wait costs time only when the test fails.
/// Checks that something does *not* happen use their own short, explicit waits.
public let patientWait: Duration = .seconds(10)

/// Polls `condition` every 5 ms until it holds or `timeout` passes; returns its last value.
public func eventually(timeout: Duration = patientWait, _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return await condition()
}
