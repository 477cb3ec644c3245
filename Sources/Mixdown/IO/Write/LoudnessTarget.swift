/// A deliverable's loudness: the integrated loudness a job's output is brought to (EBU
/// R128, LUFS) and the true-peak ceiling it must stay under (dBTP).
///
/// The default is linear: one gain for the whole file, measured on a first pass of the
/// render. When that gain would lift the true peak over the ceiling, the gain is lowered to
/// the ceiling instead and the output stays quieter than the target (the report says by how
/// much); with `limit`, a look-ahead true-peak limiter holds the peaks under the ceiling and
/// the target is reached.
public struct LoudnessTarget: Sendable, Equatable, Codable {
    /// Integrated loudness, LUFS (at most 0).
    public var integrated: Double
    /// True-peak ceiling, dBTP (at most 0). Default -1, EBU R128's and most platforms'.
    public var truePeak: Double
    /// Limit the peaks instead of lowering the gain.
    public var limit: Bool

    public init(integrated: Double, truePeak: Double = -1, limit: Bool = false) {
        self.integrated = integrated
        self.truePeak = truePeak
        self.limit = limit
    }

    /// LUFS: the quietest target. Under it the -70 LUFS absolute gate, not the relative gate
    /// 10 LU under the programme, decides which blocks count: at -70 it removes the whole
    /// programme (the output measures -inf, or NaN through a lossy codec).
    public static let lowestIntegrated = -60.0

    /// Refuses a target or ceiling above 0 (or not a number), naming the option.
    public func validate() throws(MixdownError) {
        guard integrated.isFinite, integrated <= 0, integrated >= Self.lowestIntegrated else {
            throw .invalidParameter(name: "--loudness", value: "\(integrated)",
                                    reason: "must be a loudness from -60 to 0 LUFS (-16 for podcasts, -23 for EBU R128 broadcast)")
        }
        guard truePeak.isFinite, truePeak <= 0, truePeak >= -30 else {
            throw .invalidParameter(name: "--true-peak", value: "\(truePeak)", reason: "must be a ceiling from -30 to 0 dBTP")
        }
    }
}
