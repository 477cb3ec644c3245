import MixdownKernels

/// The filters that let the spectral stretch's long frame run at a lower rate: it sounds
/// only the band below its crossover (about 1 kHz), so its frames can be analysed from the
/// input decimated by D and its output made at the rate / D, then interpolated back
/// (docs/spectral.md, "The long frame at a lower rate").
///
/// Both are Kaiser-windowed sincs (`ResamplerFilter`, 120 dB), centred (no delay), run by
/// the C kernel's polyphase FIR (`resample`):
/// - `decimator`: one row over the full rate; it keeps the band the long frame analyses
///   flat (`analysed` Hz and `margin` Hz more, where a Hann window's sidelobes from what
///   the filter takes away fall 90 dB), and stops everything that would alias into it;
/// - `interpolator`: D rows over the decimated rate, flat over the long frame's output
///   (`sounded` Hz and below, and `spread` Hz more: its windows' main lobes) and stopping
///   its images.
struct DecimationFilters {
    let factor: Int
    let decimator: ResamplerFilter
    let interpolator: ResamplerFilter

    static let attenuation = 120.0

    /// The largest power of two D up to `maximum` for which both filters exist with a
    /// transition band at least as wide as the band they keep flat; nil for D = 1.
    /// Frequencies in Hz at `rate`.
    init?(rate: Double, analysed: Double, margin: Double, sounded: Double, spread: Double, maximum: Int) {
        var chosen: (Int, Double, Double)?
        var d = 2
        while d <= maximum {
            let low = rate / Double(d)   // the decimated rate
            let pass = analysed + margin
            // Aliases of the decimated rate fold onto the analysed band from low − analysed.
            let stop = low - analysed
            // The interpolator needs a transition band too: the output under 3/4 of the
            // decimated Nyquist frequency.
            guard stop - pass >= pass, sounded + spread <= 0.75 * low / 2 else { break }
            chosen = (d, pass, stop)
            d *= 2
        }
        guard let (factor, pass, stop) = chosen else { return nil }
        self.factor = factor
        let beta = ResamplerFilter.beta(forAttenuation: Self.attenuation)
        let nyquist = rate / 2, lowNyquist = rate / Double(factor) / 2
        decimator = ResamplerFilter(taps: Self.taps(pass: pass / nyquist, stop: stop / nyquist), layout: .exact(phases: 1),
                                    kaiserBeta: beta, passEdge: pass / nyquist, stopEdge: stop / nyquist)
        // Images of the output's band start at the decimated rate less its top. The sinc's
        // cutoff is at most the decimated Nyquist frequency, and the transition centred on it.
        let imagePass = (sounded + spread) / lowNyquist, imageStop = (rate / Double(factor) - sounded - spread) / lowNyquist
        let halfWidth = (imagePass + imageStop) / 2 > 1 ? min(1 - imagePass, imageStop - 1) : (imageStop - imagePass) / 2
        interpolator = ResamplerFilter(taps: Self.taps(pass: 0, stop: 2 * halfWidth), layout: .exact(phases: factor),
                                       kaiserBeta: beta, passEdge: imagePass, stopEdge: imageStop)
    }

    /// Kaiser's length for the attenuation over a transition from `pass` to `stop`
    /// (fractions of the input's Nyquist), rounded up to the kernel's 16 lanes.
    private static func taps(pass: Double, stop: Double) -> Int {
        let length = Int(((attenuation - 7.95) / (2.285 * Double.pi * (stop - pass))).rounded(.up)) + 1
        return (length + 15) / 16 * 16
    }
}

/// A filter laid out for the kernel's polyphase FIR (`resample`) over a run of `count`
/// outputs, each output's first input and row fixed. Allocated once; `free` releases it.
private struct FilterRun {
    let taps: Int32
    let bank: UnsafeMutablePointer<Float>
    let base: UnsafeMutablePointer<Int32>
    let phase: UnsafeMutablePointer<Int32>

    init(_ filter: ResamplerFilter, count: Int, base: (Int) -> Int, phase: (Int) -> Int) {
        taps = Int32(filter.taps)
        bank = UnsafeMutablePointer<Float>.allocate(capacity: filter.bank.count)
        bank.initialize(from: filter.bank, count: filter.bank.count)
        self.base = UnsafeMutablePointer<Int32>.allocate(capacity: count)
        self.phase = UnsafeMutablePointer<Int32>.allocate(capacity: count)
        for i in 0..<count {
            (self.base + i).initialize(to: Int32(base(i)))
            (self.phase + i).initialize(to: Int32(phase(i)))
        }
    }

    /// Outputs 0..<count into dst, output i reading src + base[i] with row phase[i].
    func run(_ dst: UnsafeMutablePointer<Float>, _ src: UnsafePointer<Float>, count: Int) {
        mx_kernels_active().pointee.resample(dst, src, base, phase, count, bank, taps)
    }

    func free() {
        bank.deallocate()
        base.deallocate()
        phase.deallocate()
    }
}

/// `channels` planes of `capacity` zeros.
private func zeroedPlanes(_ channels: Int, _ capacity: Int) -> [UnsafeMutablePointer<Float>] {
    (0..<channels).map { _ in
        let p = UnsafeMutablePointer<Float>.allocate(capacity: capacity)
        p.initialize(repeating: 0, count: capacity)
        return p
    }
}

/// A node's input decimated by D, for the long frame's lane: frame m is the input's frame
/// D·m through `DecimationFilters.decimator` (frames before the input's start and past its
/// end are silence, as the input window reads them). Computed as the lane needs it, from an
/// `InputWindow` that must still hold the full-rate frames it reads (`firstInput(of: end)` on).
/// Memory is allocated once.
final class DecimatedInput {
    let factor: Int
    let capacity: Int
    private let channels: [UnsafeMutablePointer<Float>]
    private let filter: ResamplerFilter
    private let kernel: FilterRun
    /// The first decimated frame held, and one past the last computed.
    private(set) var start: Int64
    private(set) var end: Int64

    /// Holds up to `capacity` decimated frames, the first at decimated frame `start`.
    init(channels: Int, capacity: Int, filter: ResamplerFilter, factor: Int, start: Int64) {
        self.factor = factor
        self.capacity = capacity
        self.filter = filter
        self.start = start
        end = start
        self.channels = zeroedPlanes(channels, capacity)
        kernel = FilterRun(filter, count: capacity, base: { $0 * factor }, phase: { _ in 0 })
    }

    deinit {
        channels.forEach { $0.deallocate() }
        kernel.free()
    }

    /// The first full-rate frame that decimated frame `m` reads.
    func firstInput(of m: Int64) -> Int64 { m * Int64(factor) - Int64(filter.taps / 2 - 1) }
    /// One past the last full-rate frame that decimated frame `m` reads.
    func endInput(of m: Int64) -> Int64 { m * Int64(factor) + Int64(filter.taps / 2 + 1) }

    /// Channel `c` at decimated frame `m` (which must be held).
    func pointer(_ c: Int, at m: Int64) -> UnsafeMutablePointer<Float> { channels[c] + Int(m - start) }

    /// Computes decimated frames up to `last` (inclusive) from `window`, which holds the
    /// full-rate frames they read; drops the frames before `keep` first when there is no room.
    func fill(through last: Int64, keeping keep: Int64, from window: InputWindow) {
        guard last >= end else { return }
        if last + 1 - start > Int64(capacity) {
            let drop = Int(keep - start), held = Int(end - keep)
            precondition(drop > 0 && last + 1 - keep <= Int64(capacity), "decimated input overflow")
            for p in channels { p.update(from: p + drop, count: held) }
            start = keep
        }
        let count = Int(last + 1 - end)
        for (c, p) in channels.enumerated() {
            kernel.run(p + Int(end - start), UnsafePointer(window.pointer(c, at: firstInput(of: end))), count: count)
        }
        end = last + 1
    }
}

/// The long frame's output at the decimated rate, interpolated back to the full rate
/// (`DecimationFilters.interpolator`). Frames are appended in order, a hop at a time;
/// `interpolate` reads the ones round the full-rate frames asked for.
final class DecimatedOutput {
    let factor: Int
    private let capacity: Int
    private let channels: [UnsafeMutablePointer<Float>]
    private let filter: ResamplerFilter
    private let kernel: FilterRun
    private let scratch: UnsafeMutablePointer<Float>
    private let outputs: Int
    /// The first decimated frame held, and one past the last appended.
    private var start: Int64
    private(set) var end: Int64

    /// Full-rate frames past the end that `interpolate` reads: the lane must have appended
    /// this much beyond them.
    var lookahead: Int64 { Int64(factor * (filter.taps / 2 + 1)) }

    /// For `interpolate` calls of `outputs` full-rate frames (a multiple of `factor`); the
    /// first frame appended will be decimated frame `first` (silence before it).
    init(channels: Int, outputs: Int, filter: ResamplerFilter, factor: Int, first: Int64) {
        precondition(outputs % factor == 0)
        self.factor = factor
        self.filter = filter
        self.outputs = outputs
        let capacity = 2 * (outputs / factor + filter.taps) + 64
        self.capacity = capacity
        start = first - Int64(filter.taps)
        end = first
        self.channels = zeroedPlanes(channels, capacity)
        kernel = FilterRun(filter, count: outputs, base: { $0 / factor }, phase: { $0 % factor })
        scratch = UnsafeMutablePointer<Float>.allocate(capacity: outputs)
        scratch.initialize(repeating: 0, count: outputs)
    }

    deinit {
        channels.forEach { $0.deallocate() }
        kernel.free()
        scratch.deallocate()
    }

    /// Appends `count` frames of each channel, times `gain`, at decimated frame `end`;
    /// drops the frames before `keep` first when there is no room.
    func append(_ source: (Int) -> UnsafeMutablePointer<Float>, count: Int, gain: Float, keeping keep: Int64) {
        if end + Int64(count) - start > Int64(capacity) {
            let drop = Int(keep - start), held = Int(end - keep)
            precondition(drop > 0 && end + Int64(count) - keep <= Int64(capacity), "decimated output overflow")
            for p in channels { p.update(from: p + drop, count: held) }
            start = keep
        }
        for (c, p) in channels.enumerated() {
            let from = source(c), to = p + Int(end - start)
            for t in 0..<count { to[t] = from[t] * gain }
        }
        end += Int64(count)
    }

    /// The first decimated frame that interpolating from full-rate frame `from` on reads.
    func firstRead(from: Int64) -> Int64 { from / Int64(factor) - Int64(filter.taps / 2 - 1) }

    /// Adds the full-rate frames `from ..< from + outputs` (`from` a multiple of the
    /// factor), times `envelope` where given, to `out`.
    func interpolate(from: Int64, into out: AudioBuffer, envelope: UnsafePointer<Float>?) {
        precondition(from % Int64(factor) == 0 && firstRead(from: from) >= start
                     && from / Int64(factor) + Int64(outputs / factor + filter.taps / 2 + 1) <= end)
        for (c, p) in channels.enumerated() {
            kernel.run(scratch, p + Int(firstRead(from: from) - start), count: outputs)
            let o = out[channel: c]
            if let envelope {
                for t in 0..<outputs { o[t] += scratch[t] * envelope[t] }
            } else {
                for t in 0..<outputs { o[t] += scratch[t] }
            }
        }
    }
}
