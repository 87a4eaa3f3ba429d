// swift-tools-version:6.2
// libFuzzer targets for what a peer controls: SIP messages and header values, digest
// challenges, SDP and offer/answer, RTP, RTCP, telephone events, the Opus payload, and the SIP
// user agent driven by sequences of datagrams. Built and run by `Tools/fuzz` (Docs/fuzzing.md):
//
//   swift build -c release --package-path Fuzz -Xswiftc -sanitize=fuzzer,address
//
// Each target is an executable whose main runs libFuzzer's driver on its fuzz(_:_:).

import Foundation
import PackageDescription

// A path dependency's identity is its directory's name, whatever the clone is called.
let callAudio = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent()
    .standardizedFileURL.lastPathComponent

let sip = Target.Dependency.product(name: "SIP", package: callAudio)
let rtp = Target.Dependency.product(name: "RTP", package: callAudio)
let opus = Target.Dependency.product(name: "Opus", package: callAudio)
let platform = Target.Dependency.product(name: "Platform", package: callAudio)
let sdp = Target.Dependency.product(name: "SDP", package: callAudio)
let negotiation = Target.Dependency.product(name: "MediaNegotiation", package: callAudio)
let embedded = Target.Dependency.product(name: "SIPEmbedded", package: callAudio)

/// Target name, and the products it needs (only these products are built).
let targets: [(String, [Target.Dependency])] = [
    ("fuzz-sip-message", [sip]),
    ("fuzz-sip-header", [sip]),
    ("fuzz-digest", [sip]),
    ("fuzz-sdp", [sdp, negotiation, rtp, opus, platform]),
    ("fuzz-rtp", [rtp, opus, platform]),
    ("fuzz-rtcp", [rtp]),
    ("fuzz-telephone-event", [rtp]),
    ("fuzz-opus-payload", [rtp, opus]),
    ("fuzz-user-agent", [sip, embedded, sdp, negotiation, platform]),
]

let package = Package(
    name: "CallAudioFuzz",
    dependencies: [
        .package(path: ".."),
    ],
    targets: [.target(name: "CFuzzer")] + targets.map { name, dependencies in
        // main.swift hands libFuzzer's driver the target's fuzz(_:_:) (LLVMFuzzerTestOneInput).
        .executableTarget(name: name, dependencies: ["CFuzzer"] + dependencies, path: "Sources/\(name)")
    }
)
