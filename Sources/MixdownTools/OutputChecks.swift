import Mixdown
import Foundation

/// How far an output's length is from the exact target round(N · R) (half away from zero).
public struct LengthCheck: Sendable, Codable, Equatable {
    public let inputFrames: Int64
    public let targetFrames: Int64
    public let outputFrames: Int64
    /// output − target: 0 when exact, negative when frames are missing.
    public let difference: Int64

    public static func measure(original: String, output: String, ratio: StretchRatio) throws(MixdownError) -> LengthCheck {
        let a = try AudioFileInfo.read(path: original), b = try AudioFileInfo.read(path: output)
        let target = ratio.outputFrames(forInput: a.frames)
        return LengthCheck(inputFrames: a.frames, targetFrames: target, outputFrames: b.frames, difference: b.frames - target)
    }
}

/// Signal to noise-and-distortion of a file that should hold one sine: the sine of the
/// given frequency (and DC) is fitted by least squares to channel 0, and SINAD is the
/// fitted sine's power over the residual's, in dB. The first and last `margin` are left
/// out (edge effects of any stretcher). Reads the file in blocks: constant memory.
public struct SineFit: Sendable, Codable, Equatable {
    public let frequency: Double
    public let amplitude: Double
    public let sinadDecibels: Double

    public static func measure(path: String, frequency: Double,
                               margin: MediaTime = MediaTime(value: 1, timescale: 2)) throws(MixdownError) -> SineFit {
        let info = try AudioFileInfo.read(path: path)
        guard frequency.isFinite, frequency > 0, frequency < Double(info.sampleRate) / 2 else {
            throw .invalidParameter(name: "--frequency", value: "\(frequency)", reason: "must lie between 0 and half the sample rate (\(info.sampleRate / 2) Hz)")
        }
        let skip = margin.frames(atRate: info.sampleRate)
        guard info.frames > 2 * skip + 16 else {
            throw .invalidParameter(name: "file", value: "'\(path)'", reason: "is too short to measure (\(info.frames) frames)")
        }
        let range = skip..<(info.frames - skip)
        let w = 2 * Double.pi * frequency / Double(info.sampleRate)
        // Pass 1: normal equations for x ≈ a·cos + b·sin + c (the phase rotates exactly per
        // frame from the frame index, so no drift of an incremented angle).
        var m = [[Double]](repeating: [Double](repeating: 0, count: 3), count: 3)
        var v = [Double](repeating: 0, count: 3)
        try Self.scan(path, range) { n, x in
            let basis = [cos(w * Double(n)), sin(w * Double(n)), 1]
            for i in 0..<3 { v[i] += basis[i] * x; for j in 0..<3 { m[i][j] += basis[i] * basis[j] } }
        }
        let coef = Self.solve(m, v)
        // Pass 2: the residual.
        var signal = 0.0, residual = 0.0
        try Self.scan(path, range) { n, x in
            let s = coef[0] * cos(w * Double(n)) + coef[1] * sin(w * Double(n))
            signal += s * s
            let e = x - s - coef[2]
            residual += e * e
        }
        return SineFit(frequency: frequency, amplitude: (coef[0] * coef[0] + coef[1] * coef[1]).squareRoot(),
                       sinadDecibels: 10 * log10(signal / max(residual, 1e-300)))
    }

    /// Gaussian elimination with partial pivoting on a small dense system.
    static func solve(_ matrix: [[Double]], _ rhs: [Double]) -> [Double] {
        var a = matrix, b = rhs
        let n = b.count
        for col in 0..<n {
            let pivot = (col..<n).max { abs(a[$0][col]) < abs(a[$1][col]) }!
            a.swapAt(col, pivot); b.swapAt(col, pivot)
            for row in (col + 1)..<n {
                let f = a[row][col] / a[col][col]
                for c in col..<n { a[row][c] -= f * a[col][c] }
                b[row] -= f * b[col]
            }
        }
        var x = [Double](repeating: 0, count: n)
        for row in stride(from: n - 1, through: 0, by: -1) {
            var s = b[row]
            for c in (row + 1)..<n { s -= a[row][c] * x[c] }
            x[row] = s / a[row][row]
        }
        return x
    }

    static func scan(_ path: String, _ range: Range<Int64>, _ body: (Int64, Double) -> Void) throws(MixdownError) {
        let source = try FileSource(path: path, range: range)
        let block = 65_536
        try source.prepare(maximumFrames: block)
        let buffer = AudioBuffer(format: source.format, capacity: block)
        var n = range.lowerBound
        while true {
            let status = try source.render(into: buffer, frames: block)
            let p = buffer[channel: 0]
            for i in 0..<status.frames { body(n + Int64(i), Double(p[i])) }
            n += Int64(status.frames)
            if status.ended { break }
        }
    }
}
