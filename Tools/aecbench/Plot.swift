import Foundation

/// Small SVG line charts that open in any browser: no plotting library needed.
struct SVGPlot {
    struct Series {
        var name: String
        var color: String
        /// (x, y) points; nil y breaks the line.
        var points: [(Double, Double?)]
        var dashed = false
    }

    var title: String
    var xLabel: String
    var yLabel: String
    var xRange: ClosedRange<Double>
    var yRange: ClosedRange<Double>
    var series: [Series] = []
    /// Shaded x spans with a label (double talk, a path change).
    var spans: [(ClosedRange<Double>, String)] = []
    /// Horizontal reference lines with a label.
    var guides: [(Double, String)] = []
    var width = 900.0
    var height = 380.0

    static let palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#7f7f7f"]

    func render() -> String {
        let left = 64.0, right = 170.0, top = 36.0, bottom = 48.0
        let plotW = width - left - right, plotH = height - top - bottom
        func x(_ v: Double) -> Double { left + (v - xRange.lowerBound) / (xRange.upperBound - xRange.lowerBound) * plotW }
        func y(_ v: Double) -> Double {
            let c = min(max(v, yRange.lowerBound), yRange.upperBound)
            return top + (1 - (c - yRange.lowerBound) / (yRange.upperBound - yRange.lowerBound)) * plotH
        }
        func f(_ v: Double) -> String { String(format: "%.1f", v) }
        var s = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(f(left))" y="22" font-size="15" font-weight="bold">\(escape(title))</text>

            """
        for (span, label) in spans {
            s += "<rect x=\"\(f(x(span.lowerBound)))\" y=\"\(f(top))\" width=\"\(f(x(span.upperBound) - x(span.lowerBound)))\" height=\"\(f(plotH))\" fill=\"#f2e6c9\"/>\n"
            s += "<text x=\"\(f(x(span.lowerBound) + 4))\" y=\"\(f(top + 14))\" fill=\"#8a6d3b\">\(escape(label))</text>\n"
        }
        // Grid and ticks.
        for t in ticks(yRange) {
            s += "<line x1=\"\(f(left))\" x2=\"\(f(left + plotW))\" y1=\"\(f(y(t)))\" y2=\"\(f(y(t)))\" stroke=\"#e5e5e5\"/>\n"
            s += "<text x=\"\(f(left - 6))\" y=\"\(f(y(t) + 4))\" text-anchor=\"end\">\(label(t))</text>\n"
        }
        for t in ticks(xRange) {
            s += "<line x1=\"\(f(x(t)))\" x2=\"\(f(x(t)))\" y1=\"\(f(top))\" y2=\"\(f(top + plotH))\" stroke=\"#eeeeee\"/>\n"
            s += "<text x=\"\(f(x(t)))\" y=\"\(f(top + plotH + 16))\" text-anchor=\"middle\">\(label(t))</text>\n"
        }
        for (value, text) in guides {
            s += "<line x1=\"\(f(left))\" x2=\"\(f(left + plotW))\" y1=\"\(f(y(value)))\" y2=\"\(f(y(value)))\" stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n"
            s += "<text x=\"\(f(left + 4))\" y=\"\(f(y(value) - 4))\" fill=\"#666\">\(escape(text))</text>\n"
        }
        s += "<rect x=\"\(f(left))\" y=\"\(f(top))\" width=\"\(f(plotW))\" height=\"\(f(plotH))\" fill=\"none\" stroke=\"#333\"/>\n"
        s += "<text x=\"\(f(left + plotW / 2))\" y=\"\(f(height - 10))\" text-anchor=\"middle\">\(escape(xLabel))</text>\n"
        s += "<text transform=\"translate(16 \(f(top + plotH / 2))) rotate(-90)\" text-anchor=\"middle\">\(escape(yLabel))</text>\n"
        for (index, line) in series.enumerated() {
            var path = ""
            var pen = false
            for (px, py) in line.points {
                guard let py, xRange.contains(px) else { pen = false; continue }
                path += "\(pen ? "L" : "M")\(f(x(px))) \(f(y(py))) "
                pen = true
            }
            let dash = line.dashed ? " stroke-dasharray=\"6 3\"" : ""
            s += "<path d=\"\(path)\" fill=\"none\" stroke=\"\(line.color)\" stroke-width=\"1.6\"\(dash)/>\n"
            let ly = top + 16 + Double(index) * 18
            s += "<line x1=\"\(f(left + plotW + 12))\" x2=\"\(f(left + plotW + 36))\" y1=\"\(f(ly - 4))\" y2=\"\(f(ly - 4))\" stroke=\"\(line.color)\" stroke-width=\"2\"\(dash)/>\n"
            s += "<text x=\"\(f(left + plotW + 42))\" y=\"\(f(ly))\">\(escape(line.name))</text>\n"
        }
        return s + "</svg>\n"
    }

    func write(to path: String) throws {
        try render().write(toFile: path, atomically: true, encoding: .utf8)
    }

    private func ticks(_ range: ClosedRange<Double>) -> [Double] {
        let span = range.upperBound - range.lowerBound
        let raw = span / 8
        let magnitude = pow(10, floor(log10(raw)))
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? raw
        var t = ceil(range.lowerBound / step) * step
        var result: [Double] = []
        while t <= range.upperBound + 1e-9 {
            result.append(t)
            t += step
        }
        return result
    }

    private func label(_ v: Double) -> String {
        v == v.rounded() ? String(Int(v)) : String(format: "%.1f", v)
    }

    private func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
    }
}

enum Plots {
    /// Levels in dBFS per 20 ms block (nil below -90 dBFS), for the signals plot.
    static func envelope(_ x: [Float], sampleRate: Int) -> [(Double, Double?)] {
        let block = sampleRate / 50
        var points: [(Double, Double?)] = []
        var start = 0
        while start + block <= x.count {
            var e = 0.0
            for i in start..<(start + block) { e += Double(x[i]) * Double(x[i]) }
            let db = e > 0 ? 10 * log10(e / Double(block)) : -200
            points.append((Double(start + block / 2) / Double(sampleRate), max(db, -90)))
            start += block
        }
        return points
    }
}
