// swift-tools-version:6.2
// CallAudio: a VoIP call audio stack for Linux (AVAudioSession semantics,
// voice-processing I/O on ALSA, Opus over RTP).

import PackageDescription
import Foundation

/// `CALLAUDIO_WERROR=1` (set by `Tools/test` and CI) turns every warning into an error.
let warningsAsErrors = ProcessInfo.processInfo.environment["CALLAUDIO_WERROR"] == "1"

let logging = Target.Dependency.product(name: "Logging", package: "swift-log")

let package = Package(
    name: "CallAudio",
    products: [
        .library(name: "AudioSession", targets: ["AudioSession"]),
        .library(name: "Opus", targets: ["Opus"]),
        .library(name: "SpeexDSP", targets: ["SpeexDSP"]),
        .library(name: "ALSA", targets: ["ALSA"]),
        .library(name: "WAV", targets: ["WAV"]),
        .library(name: "AudioAnalysis", targets: ["AudioAnalysis"]),
        // The call engine and what an embedding softphone imports beside it (Docs/embedding.md).
        .library(name: "VoiceCall", targets: ["VoiceCall"]),
        .library(name: "AudioIO", targets: ["AudioIO"]),
        .library(name: "VoiceProcessing", targets: ["VoiceProcessing"]),
        .library(name: "RTP", targets: ["RTP"]),
        .library(name: "SIP", targets: ["SIP"]),
        .library(name: "RoomAcoustics", targets: ["RoomAcoustics"]),
        .executable(name: "voicecall", targets: ["voicecall"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        // C libraries: one system-library target each, with a shim header for what Swift cannot import.
        .systemLibrary(name: "CALSA", path: "Sources/CALSA", pkgConfig: "alsa",
                       providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "COpus", path: "Sources/COpus", pkgConfig: "opus",
                       providers: [.apt(["libopus-dev"])]),
        .systemLibrary(name: "CSpeexDSP", path: "Sources/CSpeexDSP", pkgConfig: "speexdsp",
                       providers: [.apt(["libspeexdsp-dev"])]),

        // Swift wrappers: no C type crosses their public API.
        .target(name: "ALSA", dependencies: ["CALSA"]),
        .target(name: "Opus", dependencies: ["COpus"]),
        .target(name: "SpeexDSP", dependencies: ["CSpeexDSP"]),
        .target(name: "WAV"),
        // Signal measurement and synthesis shared by tests, tools and (later) the simulated room.
        .target(name: "AudioAnalysis"),

        // Policy: pure Swift, no C, no I/O.
        .target(name: "AudioSession", dependencies: [logging]),

        // Acoustics of a simulated room: impulse responses, echo paths, drift (pure Swift).
        .target(name: "RoomAcoustics", dependencies: ["AudioAnalysis", "SpeexDSP"]),
        // Full-duplex ALSA I/O thread, rings, devices and routes, the simulated room device.
        .target(name: "AudioIO", dependencies: ["ALSA", "AudioSession", "WAV", "AudioAnalysis", "RoomAcoustics", logging]),
        // Echo cancellation with aligned reference, noise suppression, AGC, VAD.
        .target(name: "VoiceProcessing", dependencies: ["SpeexDSP", "AudioAnalysis", logging]),
        // RTP/RTCP, Opus payload, jitter buffer, SDP, UDP (AudioAnalysis for its seeded generator).
        .target(name: "RTP", dependencies: ["Opus", "AudioAnalysis", logging]),
        // SIP call setup (RFC 3261 over UDP): messages, transactions, dialogs, a user agent.
        .target(name: "SIP", dependencies: ["RTP", logging]),
        // The call engine: calls, session lifecycle, media pipeline, SIP/SDP call setup.
        .target(name: "VoiceCall", dependencies: ["AudioSession", "AudioIO", "VoiceProcessing", "RTP", "SIP", "Opus", "RoomAcoustics", "AudioAnalysis", "WAV", logging]),

        // Executables.
        .executableTarget(
            name: "voicecall",
            dependencies: [
                "ALSA", "Opus", "SpeexDSP", "WAV", "AudioAnalysis", "RTP", "AudioIO", "AudioSession", "VoiceCall", "RoomAcoustics", "SIP", "VoiceProcessing",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/voicecall"
        ),
        .executableTarget(
            name: "aecbench",
            dependencies: [
                "VoiceProcessing", "RoomAcoustics", "SpeexDSP", "WAV", "AudioAnalysis",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/aecbench"
        ),

        // Counts heap allocations per thread (a malloc interposer): linked only into tests and benchmarks.
        .target(name: "CAllocationCounter", path: "Sources/CAllocationCounter"),

        // Tests: one target per module.
        .target(name: "TestSupport", dependencies: ["WAV", "AudioAnalysis", "CAllocationCounter", "RTP", "SIP"], path: "Tests/TestSupport"),
        .testTarget(name: "ALSATests", dependencies: ["ALSA", "TestSupport"]),
        .testTarget(name: "OpusTests", dependencies: ["Opus", "WAV", "TestSupport"]),
        .testTarget(name: "SpeexDSPTests", dependencies: ["SpeexDSP", "WAV", "TestSupport"]),
        .testTarget(name: "WAVTests", dependencies: ["WAV", "TestSupport"]),
        .testTarget(name: "AudioAnalysisTests", dependencies: ["AudioAnalysis", "TestSupport"]),
        .testTarget(name: "AudioSessionTests", dependencies: ["AudioSession"]),
        .testTarget(name: "RoomAcousticsTests", dependencies: ["RoomAcoustics", "TestSupport"]),
        .testTarget(name: "AudioIOTests", dependencies: ["AudioIO", "TestSupport"]),
        .testTarget(name: "VoiceProcessingTests", dependencies: ["VoiceProcessing", "RoomAcoustics", "TestSupport"]),
        .testTarget(name: "RTPTests", dependencies: ["RTP", "Opus", "AudioAnalysis", "TestSupport"]),
        .testTarget(name: "SIPTests", dependencies: ["SIP", "RTP", "AudioAnalysis", "TestSupport"]),
        .testTarget(name: "VoiceCallTests", dependencies: ["VoiceCall", "AudioSession", "AudioIO", "RoomAcoustics", "AudioAnalysis", "Opus", "RTP", "SIP", "TestSupport"]),
    ]
)

for target in package.targets where [.executable, .test, .regular].contains(target.type) {
    var settings = target.swiftSettings ?? []
    // Require `any` for existential types.
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    // Imports are internal unless marked: a wrapper cannot leak a C type by accident.
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    if warningsAsErrors {
        settings.append(.treatAllWarnings(as: .error))
    }
    target.swiftSettings = settings
}
