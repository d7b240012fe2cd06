/// Thrown by a storage check to refuse an attempt before checking anything: the engine rolls the attempt's count
/// back, and the caller, which recorded why, answers without counting.
struct RefusedUnchecked: Error {}
