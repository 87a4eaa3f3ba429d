import DSP
import AudioAnalysis

/// A point in a room, in metres.
///
/// Thread safety: a value type; safe from any thread.
public struct Point3: Sendable, Equatable, Codable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public var z: Double

    public init(_ x: Double, _ y: Double, _ z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }

    /// Euclidean distance to `other`.
    public func distance(to other: Point3) -> Double {
        let dx = x - other.x, dy = y - other.y, dz = z - other.z
        return (dx * dx + dy * dy + dz * dz).squareRoot()
    }

    public var description: String { "(\(x), \(y), \(z))" }
}

/// A rectangular room with the same absorption on every surface, and its impulse responses by
/// the image-source method (Allen and Berkley, 1979).
///
/// Absorption comes from the reverberation time: Eyring's formula
/// `RT60 = 0.161 V / (-S ln(1 - alpha))` by default, or Sabine's `RT60 = 0.161 V / (S alpha)`.
/// Each image source contributes `beta^reflections / (4 pi d)` at delay `d / c`, placed with a
/// Hann-windowed sinc of 81 taps so fractional delays stay band-limited; a second-order
/// Butterworth high-pass at 40 Hz (as Allen and Berkley recommend) removes the DC that the sum
/// of many positive images builds up. The result is deterministic.
///
/// Thread safety: a value type; safe from any thread.
public struct ShoeboxRoom: Sendable, Equatable, Codable {
    /// How the wall absorption is derived from RT60.
    public enum AbsorptionFormula: String, Sendable, Codable {
        case eyring
        case sabine
    }

    /// Length, width and height in metres.
    public var size: Point3
    /// Reverberation time in seconds (energy decay of 60 dB).
    public var rt60: Double
    public var formula: AbsorptionFormula
    /// Metres per second.
    public var speedOfSound: Double

    public init(size: Point3, rt60: Double, formula: AbsorptionFormula = .eyring, speedOfSound: Double = 343) {
        self.size = size
        self.rt60 = rt60
        self.formula = formula
        self.speedOfSound = speedOfSound
    }

    /// Room volume in cubic metres.
    public var volume: Double { size.x * size.y * size.z }
    /// Wall, floor and ceiling area in square metres.
    public var surface: Double { 2 * (size.x * size.y + size.x * size.z + size.y * size.z) }

    /// The energy absorption coefficient of every surface, in (0, 1].
    public var absorption: Double {
        let ratio = 0.161 * volume / (surface * max(rt60, 1e-3))
        switch formula {
        case .eyring: return 1 - Math.exp(-ratio)
        case .sabine: return min(1, ratio)
        }
    }

    /// The pressure reflection coefficient, `sqrt(1 - absorption)`.
    public var reflection: Double { (1 - absorption).squareRoot() }

    /// Whether `point` lies inside the room.
    public func contains(_ point: Point3) -> Bool {
        (0...size.x).contains(point.x) && (0...size.y).contains(point.y) && (0...size.z).contains(point.z)
    }

    /// The impulse response from `source` to `microphone`.
    ///
    /// - Parameters:
    ///   - sampleRate: in Hz.
    ///   - length: seconds of response to compute (default: `rt60`, where the decay has reached -60 dB).
    /// - Returns: the response in pressure units (the direct path at distance d has amplitude 1 / (4 pi d)).
    /// - Precondition: both points inside the room and at least 1 cm apart.
    public func impulseResponse(source: Point3, microphone: Point3, sampleRate: Int, length: Double? = nil) -> [Float] {
        precondition(contains(source) && contains(microphone), "source and microphone must be inside the room")
        precondition(source.distance(to: microphone) >= 0.01, "source and microphone must be at least 1 cm apart")
        let fs = Double(sampleRate)
        let seconds = length ?? rt60
        let halfWidth = 40
        let count = Int((seconds * fs).rounded(.up)) + halfWidth + 1
        var ir = [Double](repeating: 0, count: count)
        let maxDistance = seconds * speedOfSound
        let beta = reflection
        // beta^k for every reflection count an image within range can have.
        let maxOrders = Int(maxDistance / min(size.x, size.y, size.z)) * 2 + 8
        var betaPower = [Double](repeating: 1, count: maxOrders + 1)
        for k in 1...maxOrders { betaPower[k] = betaPower[k - 1] * beta }
        let nx = Int(maxDistance / (2 * size.x)) + 1
        let ny = Int(maxDistance / (2 * size.y)) + 1
        let nz = Int(maxDistance / (2 * size.z)) + 1
        for i in -nx...nx {
            for u in 0...1 {
                let px = Double(1 - 2 * u) * source.x + 2 * Double(i) * size.x - microphone.x
                let rx = abs(i - u) + abs(i)
                for j in -ny...ny {
                    for v in 0...1 {
                        let py = Double(1 - 2 * v) * source.y + 2 * Double(j) * size.y - microphone.y
                        let ry = abs(j - v) + abs(j)
                        let pxy = px * px + py * py
                        if pxy > maxDistance * maxDistance { continue }
                        for k in -nz...nz {
                            for w in 0...1 {
                                let pz = Double(1 - 2 * w) * source.z + 2 * Double(k) * size.z - microphone.z
                                let d = (pxy + pz * pz).squareRoot()
                                if d > maxDistance { continue }
                                let reflections = rx + ry + abs(k - w) + abs(k)
                                let amplitude = betaPower[min(reflections, maxOrders)] / (4 * Double.pi * d)
                                addTap(&ir, at: d / speedOfSound * fs, amplitude: amplitude, halfWidth: halfWidth)
                            }
                        }
                    }
                }
            }
        }
        highPass(&ir, cutoff: 40, sampleRate: fs)
        return ir.map { Float($0) }
    }

    /// Adds `amplitude` at fractional position `tau` as a Hann-windowed sinc.
    private func addTap(_ ir: inout [Double], at tau: Double, amplitude: Double, halfWidth: Int) {
        let first = max(0, Int((tau - Double(halfWidth)).rounded(.up)))
        let last = min(ir.count - 1, Int((tau + Double(halfWidth)).rounded(.down)))
        guard first <= last else { return }
        // sin(pi (n - tau)) = -(-1)^n sin(pi tau): one sine per image.
        let s = Math.sin(Double.pi * tau)
        for n in first...last {
            let t = Double(n) - tau
            let sinc: Double
            if abs(t) < 1e-9 {
                sinc = 1
            } else {
                let sign: Double = n & 1 == 0 ? -1 : 1
                sinc = sign * s / (Double.pi * t)
            }
            let window = 0.5 * (1 + Math.cos(Double.pi * t / Double(halfWidth + 1)))
            ir[n] += amplitude * sinc * window
        }
    }

    /// Second-order Butterworth high-pass (bilinear transform), applied once, forwards.
    private func highPass(_ x: inout [Double], cutoff: Double, sampleRate: Double) {
        let k = Math.tan(Double.pi * cutoff / sampleRate)
        let q = 1 / 2.0.squareRoot()
        let norm = 1 / (1 + k / q + k * k)
        let b0 = norm, b1 = -2 * norm, b2 = norm
        let a1 = 2 * (k * k - 1) * norm, a2 = (1 - k / q + k * k) * norm
        var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0
        for n in x.indices {
            let x0 = x[n]
            let y0 = b0 * x0 + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
            x2 = x1; x1 = x0; y2 = y1; y1 = y0
            x[n] = y0
        }
    }
}
