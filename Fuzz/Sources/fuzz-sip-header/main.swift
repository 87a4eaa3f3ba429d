import CFuzzer
import Foundation

// libFuzzer's driver runs the target's fuzz(_:_:) on each input (see Fuzz/Package.swift).
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzz(data!, size) })
