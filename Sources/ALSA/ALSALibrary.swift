import CALSA

/// Library-wide alsa-lib services: configuration parsing, the PCM list, error output.
///
/// Thread safety: every function is safe to call from any thread except the
/// real-time I/O thread (they allocate).
public enum ALSALibrary {
    /// alsa-lib prints its own errors to stderr before returning them; CallAudio
    /// reports them as ``ALSAError`` values instead, so that output is switched off once.
    static func silenceErrorOutput() {
        _ = silenced
    }

    private static let silenced: Bool = {
        _ = callaudio_snd_lib_silence_errors()
        return true
    }()

    /// Parses ALSA configuration text into a new top-level tree the caller must delete.
    static func parseConfiguration(_ text: String) throws(ALSAError) -> OpaquePointer {
        var input: OpaquePointer?
        let bytes = Array(text.utf8)
        let r = bytes.withUnsafeBufferPointer { buf in
            buf.withMemoryRebound(to: CChar.self) { snd_input_buffer_open(&input, $0.baseAddress, buf.count) }
        }
        try alsaCheck(r, "snd_input_buffer_open")
        defer { snd_input_close(input) }
        var config: OpaquePointer?
        try alsaCheck(snd_config_top(&config), "snd_config_top")
        let loaded = snd_config_load(config, input)
        guard loaded >= 0, let config else {
            snd_config_delete(config)
            throw ALSAError(code: loaded, context: "parsing ALSA configuration: \(text.prefix(200))")
        }
        return config
    }

    /// The PCMs the system's ALSA configuration defines (`snd_device_name_hint`).
    ///
    /// Includes software PCMs such as `null`, `default` and `pulse` when their plugins are installed.
    public static func pcmDevices() -> [PCMDeviceInfo] {
        silenceErrorOutput()
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) >= 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        var devices: [PCMDeviceInfo] = []
        var i = 0
        while let hint = hints[i] {
            i += 1
            guard let name = take(snd_device_name_get_hint(hint, "NAME")) else { continue }
            let description = (take(snd_device_name_get_hint(hint, "DESC")) ?? "")
                .split(whereSeparator: \.isNewline).joined(separator: " ")
            let io = take(snd_device_name_get_hint(hint, "IOID"))  // nil means both directions
            let streams: Set<PCMStream> = io == "Input" ? [.capture] : io == "Output" ? [.playback] : [.playback, .capture]
            devices.append(PCMDeviceInfo(name: name, description: description, streams: streams))
        }
        return devices
    }

    /// The plugin type of PCM `name` in the system's ALSA configuration (`hw`, `plug`, `pulse`,
    /// `pipewire`, ...), or nil when no such PCM is defined. This is how a tool tells which sound
    /// server `default` reaches without opening it.
    public static func pcmType(named name: String) -> String? {
        silenceErrorOutput()
        var configuration: OpaquePointer?
        guard snd_config_update_ref(&configuration) >= 0, let top = configuration else { return nil }
        defer { snd_config_unref(top) }
        var definition: OpaquePointer?
        guard snd_config_search_definition(top, "pcm", name, &definition) >= 0, let definition else { return nil }
        defer { snd_config_delete(definition) }
        var node: OpaquePointer?
        var type: UnsafePointer<CChar>?
        guard snd_config_search(definition, "type", &node) >= 0, snd_config_get_string(node, &type) >= 0,
              let type else { return nil }
        return String(cString: type)
    }

    /// Converts and frees a string alsa-lib allocated with malloc.
    private static func take(_ pointer: UnsafeMutablePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}
