import Foundation

/// The gain that brings a render through the true-peak limiter to a loudness target.
///
/// Through the limiter, loudness is not gain plus a constant: the more it is driven the
/// more it takes off the peaks, and past some drive it only presses harder on the same
/// peaks (the loudness a material can reach under a ceiling is bounded). Each evaluation
/// is a whole pass over the render, so the search is bounded in passes and in gain:
/// - it starts from `start`, the gain that reaches the target without the limiter (the
///   limiter only takes loudness away, so the answer is at or above it, up to the gating);
/// - while below the target it steps up by the miss divided by the slope of the last two
///   passes, the slope held to 0.1...1 LU per dB (the first step assumes 1: it never
///   overshoots by more than the gating moves), and never past `deepest`; after
///   `climbingPasses` such steps without passing the target it tries `deepest` itself, so
///   every search that ends under the target has measured the deepest drive;
/// - once the target is bracketed, it narrows the bracket by false position (Illinois),
///   falling back to bisection when a step would leave it: so a loudness that is not quite
///   monotone in the gain (the relative gate flips blocks) cannot send it away.
/// It ends within `tolerance` LU, or reports the closest pass; a target still not reached
/// at the deepest drive is reported as such (`Outcome.reachable` false) with the loudest
/// pass, never as a gain of +100 dB.
///
/// `deepest` is a gain, not a distance from `start`: it does not move with the target, so
/// the loudness reached at it is what any target can be asked for (a refusal's suggestion
/// is reached when asked for: the search for it meets the same deepest pass).
struct LimiterGainSearch {
    var target: Double
    /// dB: the pure gain's solution.
    var start: Double
    /// dB: the highest gain the search may try (the limiter's deepest drive). Callers give
    /// the gain that brings the peaks to the ceiling plus `maximumLimiting`.
    var deepest: Double
    /// dB the limiter may take off the peaks at the deepest drive.
    static let maximumLimiting = 24.0
    /// dB under `start` the search may go (the gating can make a first pass too loud).
    var maximumCut = 24.0
    /// Steps up by the slope before the search tries `deepest`.
    var climbingPasses = 3
    /// LU.
    var tolerance = 0.05
    /// Passes at most, the first included.
    var maximumPasses = 8

    struct Outcome: Equatable {
        /// The gain of the pass closest to the target, dB.
        var gain: Double
        /// Its integrated loudness, LUFS.
        var reached: Double
        var passes: Int
        /// False when even the deepest drive allowed stays under the target: `gain` and
        /// `reached` are then the deepest pass's.
        var reachable: Bool
    }

    /// Runs the search; `loudness(gain)` is one pass (integrated LUFS through the limiter).
    func run(_ loudness: (Double) throws(MixdownError) -> Double) throws(MixdownError) -> Outcome {
        var tried: [(gain: Double, lufs: Double)] = []
        var below: (gain: Double, lufs: Double)? = nil, above: (gain: Double, lufs: Double)? = nil
        // Illinois: the side kept twice in a row has its miss halved.
        var keptSide = 0
        var belowWeight = 1.0, aboveWeight = 1.0
        var gain = start
        let ceiling = max(start, deepest), floor = start - maximumCut
        while tried.count < maximumPasses {
            let lufs = try loudness(gain)
            guard lufs.isFinite else { break }
            tried.append((gain, lufs))
            let miss = target - lufs
            if abs(miss) <= tolerance { break }
            // A fresh end point counts in full; the end kept twice in a row is halved.
            if miss > 0 {
                if below == nil || gain > below!.gain { below = (gain, lufs); belowWeight = 1 }
                if keptSide == 1 { aboveWeight *= 0.5 }
                keptSide = 1
            } else {
                if above == nil || gain < above!.gain { above = (gain, lufs); aboveWeight = 1 }
                if keptSide == -1 { belowWeight *= 0.5 }
                keptSide = -1
            }
            var next: Double
            if let b = below, let a = above, a.gain > b.gain {
                // False position on the bracket, weighted by Illinois.
                let fb = (b.lufs - target) * belowWeight, fa = (a.lufs - target) * aboveWeight
                next = b.gain - fb * (a.gain - b.gain) / (fa - fb)
                if !(next > b.gain && next < a.gain) { next = (a.gain + b.gain) / 2 }
            } else {
                // Outside a bracket: the slope of the last two passes, held to 0.1...1.
                var slope = 1.0
                if tried.count >= 2 {
                    let p = tried[tried.count - 2], q = tried[tried.count - 1]
                    if q.gain != p.gain { slope = min(1, max(0.1, (q.lufs - p.lufs) / (q.gain - p.gain))) }
                }
                next = gain + miss / slope
                if miss > 0 {
                    if gain >= ceiling { break }
                    next = tried.count >= climbingPasses ? ceiling : min(next, ceiling)
                } else {
                    if gain <= floor { break }
                    next = max(next, floor)
                }
            }
            if abs(next - gain) < 1e-6 { break }
            gain = next
        }
        guard let best = tried.min(by: { abs(target - $0.lufs) < abs(target - $1.lufs) }) else {
            return Outcome(gain: start, reached: -.infinity, passes: tried.count, reachable: false)
        }
        // Unreachable: never at or over the target, up to the deepest drive allowed (which
        // every search that stays under the target tries, by `climbingPasses`).
        if above == nil && abs(target - best.lufs) > tolerance && target > best.lufs {
            // The deepest pass, not the loudest: it is the one a search for any target meets.
            let deepestPass = tried.last(where: { $0.gain >= ceiling - 1e-9 }) ?? tried.max(by: { $0.lufs < $1.lufs })!
            return Outcome(gain: deepestPass.gain, reached: deepestPass.lufs, passes: tried.count, reachable: false)
        }
        return Outcome(gain: best.gain, reached: best.lufs, passes: tried.count, reachable: true)
    }
}
