import ArgumentParser
import Foundation
import Mixdown
import MixdownTools

struct GeneratePair: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate-pair",
        abstract: "Synthesise two recordings of one speech-like event, the second offset and drifting: test material for `mixdown sync`.")

    @Argument(help: "The reference to write (48 kHz, 16-bit WAV).", completion: .file())
    var reference: String
    @Argument(help: "The drifting recording to write (16-bit WAV).", completion: .file())
    var recording: String
    @Option(parsing: .unconditional, help: "Seconds of reference.")
    var duration: Int64 = 600
    @Option(parsing: .unconditional, help: "REF time at which REC's time 0 lands, seconds (negative: REC starts first).")
    var offset = 0.0
    @Option(parsing: .unconditional, help: "REC's drift, ppm (REC's duration x (1 + ppm/1e6) on REF's clock).")
    var ppm = 0.0
    @Option(name: .customLong("ppm-after-half"), parsing: .unconditional, help: "Another drift from half-way through REC.")
    var ppmAfterHalf: Double?
    @Option(name: .customLong("gain-db"), parsing: .unconditional, help: "REC's gain against REF, dB.")
    var gainDB = -6.0
    @Flag(help: "Band-limit REC (150 Hz to 2.5 kHz): another microphone.")
    var eq = false
    @Option(parsing: .unconditional, help: "Add white noise to REC at this SNR, dB.")
    var snr: Double?
    @Option(parsing: .unconditional, help: "REC's sample rate.")
    var rate = 48_000
    @Option(parsing: .unconditional, help: "REC's channel count.")
    var channels = 1
    @Option(parsing: .unconditional, help: "A seed for the material.")
    var seed: UInt64 = 7
    @Flag(help: "Make REC a recording of another event.")
    var unrelated = false
    @Option(name: .customLong("wander-ppm"), parsing: .unconditional, help: "REC's rate wanders around --ppm by this much, a sinusoid over --wander-period (a clock that follows the temperature).")
    var wanderPPM: Double?
    @Option(name: .customLong("wander-period"), parsing: .unconditional, help: "The wander's period, seconds (default: the duration).")
    var wanderPeriod: Double?
    @Option(name: .customLong("ramp-ppm-per-hour"), parsing: .unconditional, help: "REC's rate moves away from --ppm by this much every hour (a clock warming up).")
    var rampPPMPerHour: Double?
    @Option(name: .customLong("pause-at"), parsing: .unconditionalSingleValue, help: "REC paused at this time of its own, seconds (with --pause-gap; repeat both for more pauses).")
    var pauseAt: [Double] = []
    @Option(name: .customLong("pause-gap"), parsing: .unconditionalSingleValue, help: "Seconds of the event REC missed while paused (one per --pause-at, in their order).")
    var pauseGap: [Double] = []
    @Flag(help: "Print the truth as JSON.")
    var json = false

    func run() throws {
        guard duration >= 30 else { throw UsageError(message: "--duration \(duration): at least 30 s") }
        guard rate >= 8_000, rate <= 192_000 else { throw UsageError(message: "--rate \(rate): between 8000 and 192000") }
        guard channels == 1 || channels == 2 else { throw UsageError(message: "--channels \(channels): 1 or 2") }
        guard abs(ppm) <= 10_000, abs(ppmAfterHalf ?? 0) <= 10_000 else { throw UsageError(message: "--ppm: at most 10000 either way") }
        guard abs(offset) < Double(duration) / 2 else { throw UsageError(message: "--offset \(offset): less than half the duration") }
        guard wanderPPM == nil || rampPPMPerHour == nil else { throw UsageError(message: "--wander-ppm and --ramp-ppm-per-hour: one or the other") }
        guard pauseAt.count == pauseGap.count else { throw UsageError(message: "--pause-at and --pause-gap go together, one of each per pause") }
        for g in pauseGap where !(g > 0) { throw UsageError(message: "--pause-gap \(g): must be above 0 s") }
        for (a, b) in zip(pauseAt, pauseAt.dropFirst()) where !(b > a) { throw UsageError(message: "--pause-at \(b): pauses in order, each after the one before (\(a) s)") }
        if let a = wanderPPM, !(abs(a) <= 1000) { throw UsageError(message: "--wander-ppm \(a): at most 1000 either way") }
        if let p = wanderPeriod, !(p >= 10) { throw UsageError(message: "--wander-period \(p): at least 10 s") }
        var job = SyncTestPair(reference: reference, recording: recording)
        if let a = wanderPPM { job.wander = .sinusoid(amplitudePPM: a, periodSeconds: wanderPeriod ?? Double(duration)) }
        if let k = rampPPMPerHour { job.wander = .ramp(ppmPerHour: k) }
        job.pauses = zip(pauseAt, pauseGap).map { SyncTestPair.Pause(at: $0, gap: $1) }
        job.duration = duration
        job.offsetSeconds = offset
        job.ppm = ppm
        job.ppmAfterHalf = ppmAfterHalf
        job.gainDecibels = gainDB
        job.equalise = eq
        job.snrDecibels = snr
        job.recordingRate = rate
        job.recordingChannels = channels
        job.seed = seed
        job.unrelated = unrelated
        let truth = try job.run()
        if json { return try printJSON(truth) }
        print(String(format: "wrote %@ and %@: REC's time t is REF's %.6f + %.9f t", reference, recording, truth.offsetSeconds, truth.ratio))
    }
}
