// swift-tools-version:6.2
// A softphone embedding CallAudio from another package: the one of Docs/embedding.md, run on
// simulated (or WAV-file) devices so it works on a machine without a sound card.

import Foundation
import PackageDescription

// A path dependency's identity is its directory's name, whatever the clone is called.
let callAudio = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent()
    .deletingLastPathComponent().standardizedFileURL.lastPathComponent

let package = Package(
    name: "Softphone",
    dependencies: [
        .package(path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "softphone",
            dependencies: [
                .product(name: "VoiceCall", package: callAudio),
                .product(name: "AudioIO", package: callAudio),
                .product(name: "AudioSession", package: callAudio),
                .product(name: "CallAudioTesting", package: callAudio),  // simulated devices and WAV files
            ],
            path: "Sources/Softphone"
        ),
    ]
)
