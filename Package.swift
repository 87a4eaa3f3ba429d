// swift-tools-version:6.2
// CallAudio: a VoIP call audio stack for Linux (AVAudioSession semantics,
// voice-processing I/O on ALSA, Opus over RTP).

import PackageDescription
import Foundation

/// `CALLAUDIO_WERROR=1` (set by `Tools/test` and CI) turns every warning into an error.
let warningsAsErrors = ProcessInfo.processInfo.environment["CALLAUDIO_WERROR"] == "1"
/// `CALLAUDIO_OPTIMIZE_DSP=1` (set by `Tools/test` and CI) compiles the signal-processing modules
/// optimized in debug builds too. The call suites run many calls at once, each with voice
/// processing and a simulated room on a real-time I/O thread; unoptimized, that Swift DSP took
/// about 90 % of the test process's CPU and more than 2 cores could give.
let optimizesSignalProcessing = ProcessInfo.processInfo.environment["CALLAUDIO_OPTIMIZE_DSP"] == "1"
let signalProcessingModules: Set<String> = ["DSP", "VoiceProcessing", "Simulation", "AudioAnalysis"]

let logging = Target.Dependency.product(name: "Logging", package: "swift-log")

let package = Package(
    name: "CallAudio",
    products: [
        // The call engine and what an embedding softphone imports beside it (Docs/embedding.md).
        .library(name: "VoiceCall", targets: ["VoiceCall"]),
        .library(name: "AudioSession", targets: ["AudioSession"]),
        .library(name: "AudioIO", targets: ["AudioIO"]),
        .library(name: "VoiceProcessing", targets: ["VoiceProcessing"]),
        .library(name: "SIP", targets: ["SIP"]),
        .library(name: "RTP", targets: ["RTP"]),
        .library(name: "SDP", targets: ["SDP"]),
        .library(name: "MediaNegotiation", targets: ["MediaNegotiation"]),
        // The C libraries' wrappers and the platform layer, for direct use.
        .library(name: "Opus", targets: ["Opus"]),
        .library(name: "SpeexDSP", targets: ["SpeexDSP"]),
        .library(name: "ALSA", targets: ["ALSA"]),
        .library(name: "OpenSSL", targets: ["OpenSSL"]),
        .library(name: "SRTP", targets: ["SRTP"]),
        .library(name: "SpanDSP", targets: ["SpanDSP"]),
        .library(name: "DNS", targets: ["DNS"]),
        .library(name: "Janus", targets: ["Janus"]),
        .library(name: "Platform", targets: ["Platform"]),
        // For tests, demos and benches, never for a shipped softphone: simulated rooms and
        // devices, signal measurement, WAV files, the DSP kernels they use.
        .library(name: "CallAudioTesting", targets: ["Simulation", "AudioAnalysis", "WAV", "DSP"]),
        // SIP user agents on virtual time, without sockets (as swift-nio's NIOEmbedded): for tests of apps and the fuzzer.
        .library(name: "SIPEmbedded", targets: ["SIPEmbedded"]),
        .executable(name: "voicecall", targets: ["voicecall"]),
        .executable(name: "callbench", targets: ["callbench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // `swift package generate-documentation`: the modules' DocC catalogs (Tools/test builds them).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    ],
    targets: [
        // C libraries: one system-library target each, with a shim header for what Swift cannot import.
        .systemLibrary(name: "CALSA", path: "Sources/CALSA", pkgConfig: "alsa",
                       providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "COpus", path: "Sources/COpus", pkgConfig: "opus",
                       providers: [.apt(["libopus-dev"])]),
        .systemLibrary(name: "CSpeexDSP", path: "Sources/CSpeexDSP", pkgConfig: "speexdsp",
                       providers: [.apt(["libspeexdsp-dev"])]),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSRTP", path: "Sources/CSRTP", pkgConfig: "libsrtp2",
                       providers: [.apt(["libsrtp2-dev"])]),
        .systemLibrary(name: "CSpanDSP", path: "Sources/CSpanDSP", pkgConfig: "spandsp",
                       providers: [.apt(["libspandsp-dev"])]),
        // glibc's stub resolver (libresolv, in libc6-dev): no pkg-config file, the modulemap links it.
        .systemLibrary(name: "CResolv", path: "Sources/CResolv"),

        // Swift wrappers: no C type crosses their public API.
        .target(name: "ALSA", dependencies: ["CALSA", "Platform"]),
        .target(name: "Opus", dependencies: ["COpus"]),
        .target(name: "SpeexDSP", dependencies: ["CSpeexDSP"]),
        // TLS and DTLS over memory (sans-IO): SIP over TLS, DTLS-SRTP.
        .target(name: "OpenSSL", dependencies: ["COpenSSL"]),
        // SRTP and SRTCP (RFC 3711, RFC 7714) through libsrtp2: keys, in-place protect and unprotect.
        .target(name: "SRTP", dependencies: ["CSRTP"]),
        // G.711 and G.722 codecs and packet loss concealment through spandsp.
        .target(name: "SpanDSP", dependencies: ["CSpanDSP"]),
        // DNS lookups for SIP (RFC 3263): SRV and A/AAAA through glibc's resolver.
        .target(name: "DNS", dependencies: ["CResolv", "Platform"]),
        .target(name: "WAV"),

        // Platform: sockets and addresses, the named thread, the monotonic clock, the seeded generator.
        .target(name: "Platform"),
        // DSP kernels the voice processing runs: FFTs, the sinc kernel, the interpolating ring.
        .target(name: "DSP"),
        // Signal measurement and synthesis for tests, tools and the simulation: levels, alignment, tones.
        .target(name: "AudioAnalysis", dependencies: ["DSP", "Platform"]),

        // Policy: pure Swift, no C, no I/O.
        .target(name: "AudioSession", dependencies: [logging]),

        // Full-duplex ALSA I/O thread, devices and routes.
        .target(name: "AudioIO", dependencies: ["ALSA", "AudioSession", "Platform", logging]),
        // Echo cancellation with aligned reference, noise suppression, AGC, VAD.
        .target(name: "VoiceProcessing", dependencies: ["SpeexDSP", "DSP", "Platform", logging]),
        // Session descriptions (RFC 4566): the model, its parser and writer.
        .target(name: "SDP", dependencies: ["Platform"]),
        // RTP/RTCP, Opus payload, jitter buffer, telephone events.
        .target(name: "RTP", dependencies: ["Opus", "SpanDSP", "SpeexDSP", "Platform", "SRTP", "OpenSSL", logging]),
        // Offer/answer (RFC 3264) for Opus and telephone events: from descriptions to stream configurations.
        .target(name: "MediaNegotiation", dependencies: ["SDP", "RTP", "Opus", "Platform", "SRTP"]),
        // SIP call setup (RFC 3261 over UDP): messages, transactions, dialogs, a user agent.
        .target(name: "SIP", dependencies: ["Platform", "DNS", "OpenSSL", logging]),
        // The Janus AudioBridge client (conference legs): Janus's HTTP API over URLSession.
        .target(name: "Janus"),
        // The call engine: calls, session lifecycle, media pipeline, SIP/SDP call setup.
        .target(name: "VoiceCall", dependencies: ["AudioSession", "AudioIO", "VoiceProcessing", "RTP", "SIP", "SDP", "MediaNegotiation", "Opus", "SpeexDSP", "Platform", "DSP", "SRTP", "OpenSSL", "WAV", "Janus", logging]),

        // Beside the library, for tools and tests only: simulated rooms (impulse responses, echo
        // paths, drift), the simulated room device, the network impairment relay.
        .target(name: "Simulation", dependencies: ["AudioIO", "AudioAnalysis", "DSP", "Platform", "SpeexDSP", "WAV"]),
        // SIP user agents and hand-written peers on an in-memory network on virtual time.
        .target(name: "SIPEmbedded", dependencies: ["SIP", "Platform"]),

        // Executables.
        .executableTarget(
            name: "voicecall",
            dependencies: [
                "ToolSupport", "ALSA", "Opus", "SpeexDSP", "WAV", "AudioAnalysis", "RTP", "AudioIO", "AudioSession", "VoiceCall", "Simulation", "SIP", "VoiceProcessing", "Platform", "SDP", "MediaNegotiation", "Janus",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/voicecall"
        ),
        .executableTarget(
            name: "callbench",
            dependencies: [
                "ToolSupport", "ALSA", "Opus", "SpeexDSP", "WAV", "AudioAnalysis", "RTP", "AudioIO", "AudioSession", "VoiceCall",
                "Simulation", "VoiceProcessing", "Platform", "MediaNegotiation", "SpanDSP",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/callbench"
        ),
        // What the command-line tools share: codec options, failures and JSON, speech files, pacing.
        .target(
            name: "ToolSupport",
            dependencies: ["Opus", "SpeexDSP", "WAV", "Platform", logging, .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tools/ToolSupport"
        ),
        .executableTarget(
            name: "aecbench",
            dependencies: [
                "VoiceProcessing", "Simulation", "SpeexDSP", "WAV", "AudioAnalysis", "Platform",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/aecbench"
        ),

        // Counts heap allocations per thread (a malloc interposer): linked only into tests and benchmarks.
        .target(name: "CAllocationCounter", path: "Sources/CAllocationCounter"),

        // Tests: one target per module.
        .target(name: "TestSupport", dependencies: ["WAV", "AudioAnalysis", "CAllocationCounter", "Platform", "SIP"], path: "Tests/TestSupport"),
        .testTarget(name: "ArchitectureTests"),
        .testTarget(name: "PlatformTests", dependencies: ["Platform", "TestSupport"]),
        .testTarget(name: "ALSATests", dependencies: ["ALSA", "Platform", "TestSupport"]),
        .testTarget(name: "OpusTests", dependencies: ["Opus", "WAV", "Platform", "TestSupport"]),
        .testTarget(name: "OpenSSLTests", dependencies: ["OpenSSL", "TestSupport"]),
        .testTarget(name: "SRTPTests", dependencies: ["SRTP", "TestSupport"]),
        .testTarget(name: "SpanDSPTests", dependencies: ["SpanDSP", "WAV", "TestSupport"]),
        .testTarget(name: "DNSTests", dependencies: ["DNS", "Platform", "TestSupport"]),
        .testTarget(name: "JanusTests", dependencies: ["Janus", "Platform", "TestSupport"]),
        .testTarget(name: "SpeexDSPTests", dependencies: ["SpeexDSP", "WAV", "TestSupport"]),
        .testTarget(name: "WAVTests", dependencies: ["WAV", "TestSupport"]),
        .testTarget(name: "AudioAnalysisTests", dependencies: ["AudioAnalysis", "DSP", "Platform", "TestSupport"]),
        .testTarget(name: "AudioSessionTests", dependencies: ["AudioSession"]),
        .testTarget(name: "SimulationTests", dependencies: ["Simulation", "AudioAnalysis", "DSP", "Platform", "TestSupport"]),
        .testTarget(name: "AudioIOTests", dependencies: ["AudioIO", "Simulation", "AudioAnalysis", "Platform", "TestSupport"]),
        .testTarget(name: "VoiceProcessingTests", dependencies: ["VoiceProcessing", "Simulation", "AudioAnalysis", "DSP", "Platform", "TestSupport"]),
        .testTarget(name: "RTPTests", dependencies: ["RTP", "Opus", "AudioAnalysis", "Platform", "Simulation", "SDP", "MediaNegotiation", "SRTP", "OpenSSL", "TestSupport"]),
        .testTarget(name: "SDPTests", dependencies: ["SDP", "MediaNegotiation", "RTP", "Opus", "Platform", "SRTP", "TestSupport"]),
        .testTarget(name: "SIPTests", dependencies: ["SIP", "SIPEmbedded", "DNS", "OpenSSL", "Platform", "SDP", "MediaNegotiation", "AudioAnalysis", "TestSupport"]),
        .testTarget(name: "VoiceCallTests", dependencies: ["Janus", "VoiceCall", "AudioSession", "AudioIO", "Simulation", "AudioAnalysis", "Opus", "RTP", "SIP", "SDP", "MediaNegotiation", "Platform", "SRTP", "OpenSSL", "WAV", "TestSupport"]),
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
    if optimizesSignalProcessing, signalProcessingModules.contains(target.name) {
        settings.append(.unsafeFlags(["-O"], .when(configuration: .debug)))
    }
    target.swiftSettings = settings
}
