extension AudioSession {
    /// A validated (category, mode, options) triple, and what it means in effect.
    ///
    /// ``AudioSession/setCategory(_:mode:options:)`` builds one with ``validated(category:mode:options:)``
    /// and replaces the session's configuration with it as a whole: options are not sticky
    /// across category changes.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public struct Configuration: Hashable, Sendable, CustomStringConvertible {
        /// The category.
        public let category: Category
        /// The mode that was asked for, even if the category does not support it.
        public let requestedMode: Mode
        /// The options that were asked for, without implied options.
        public let requestedOptions: CategoryOptions

        /// A new session's configuration: ``Category/soloAmbient``, ``Mode/default``, no options.
        ///
        /// Thread safety: safe from any thread.
        public static let initial = Configuration(uncheckedCategory: .soloAmbient, mode: .default, options: [])

        init(uncheckedCategory category: Category, mode: Mode, options: CategoryOptions) {
            self.category = category
            self.requestedMode = mode
            self.requestedOptions = options
        }

        /// Validates a triple against the spec's tables.
        ///
        /// - Parameters:
        ///   - category: The category.
        ///   - mode: The mode. A mode the category does not support is accepted; ``mode`` reads ``Mode/default``.
        ///   - options: The options. Every option must be in ``Category/acceptedOptions``.
        /// - Returns: The configuration.
        /// - Throws: ``AudioSessionError/categoryOptionNotAccepted(option:category:)`` naming the
        ///   first option (in ``CategoryOptions/allOptions`` order) the category does not accept.
        ///
        /// Thread safety: safe from any thread.
        public static func validated(
            category: Category, mode: Mode, options: CategoryOptions
        ) throws(AudioSessionError) -> Configuration {
            let refused = options.subtracting(category.acceptedOptions)
            if let first = CategoryOptions.allOptions.first(where: { refused.contains($0) }) {
                throw .categoryOptionNotAccepted(option: first, category: category)
            }
            return Configuration(uncheckedCategory: category, mode: mode, options: options)
        }

        /// Whether the requested mode is not supported by the category, so ``mode`` is ``Mode/default``.
        ///
        /// Thread safety: safe from any thread.
        public var modeFellBack: Bool {
            !category.supportedModes.contains(requestedMode)
        }

        /// The mode in effect: the requested mode, or ``Mode/default`` if the category does not support it.
        ///
        /// Thread safety: safe from any thread.
        public var mode: Mode {
            modeFellBack ? .default : requestedMode
        }

        /// The options in effect: the requested options plus those implied by the category
        /// (``Category/ambient`` mixes, so it reads ``CategoryOptions/mixWithOthers``), by the mode
        /// and by other options.
        ///
        /// Thread safety: safe from any thread.
        public var options: CategoryOptions {
            let byCategory: CategoryOptions = category.mixesWithOthersByDefault ? .mixWithOthers : []
            return requestedOptions.union(byCategory).union(mode.impliedOptions).implied
        }

        /// Whether this session mixes with others (does not interrupt them on activation).
        ///
        /// Thread safety: safe from any thread.
        public var isMixable: Bool {
            // audioProcessing has no I/O, so it has nothing to interrupt anyone with.
            category == .audioProcessing || options.contains(.mixWithOthers)
        }

        /// A readable summary, for example `playAndRecord/voiceChat [allowBluetooth]`.
        ///
        /// Thread safety: safe from any thread.
        public var description: String {
            "\(category)/\(mode) \(options)"
        }
    }
}
