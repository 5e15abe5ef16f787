// The error band a prediction basis implies, and the tie rule that uses it (plan's answer).
//
// Each basis (calibrated / transferred / datasheet-only, hardware::PredictionBasis) carries the
// median |error| measured for predictions of that basis against real vLLM runs in
// docs/validation.md; the numbers are in one table in error_band.cpp with the section each comes
// from. A basis the validation never scored has no band ("unknown"), never a guessed one.
//
// A candidate's cost band is the band of the metric that set its GPU count: its binding SLO's
// metric (TTFT, TPOT/ITL, E2E), or TPOT when the count is set by saturation (a replica's
// throughput is its decode step time, which mean TPOT measures). Two candidates tie when their
// costs differ by less than their combined band sqrt(a² + b²) (independent errors).
#ifndef SERVESIM_SIM_PLANNING_ERROR_BAND_H_
#define SERVESIM_SIM_PLANNING_ERROR_BAND_H_

#include <optional>
#include <string>

namespace servesim::planning {

struct ErrorBand {
  std::string basis;   // "calibrated" | "transferred" | "datasheet-only"
  double ttft = 0;     // median |error| of mean TTFT, a fraction (0.124 = ±12.4%)
  double tpot = 0;     // median |error| of mean TPOT
  double e2e = 0;      // median |error| of mean E2E latency
  std::string source;  // "docs/validation.md §6, median over the 16 serving groups"
};

// The band of a basis label; nullopt for a label the validation has no measured error for.
std::optional<ErrorBand> error_band(const std::string& basis);

// How well-founded a basis is: 0 calibrated, 1 transferred, 2 datasheet-only, 3 anything else.
int basis_rank(const std::string& basis);

// The band (fraction) on the cost of a candidate of `basis` whose count is set by `binding`
// (a binding SLO's text such as "p99_ttft_ms<=500" or "rag/p99_tpot_ms<=50", or "saturation");
// nullopt when the basis has no band.
std::optional<double> cost_band(const std::string& basis, const std::string& binding);

// sqrt(a² + b²): the band on the difference of two independent predictions.
double combined_band(double a, double b);

// The widest cost band a candidate can have once verified, from its basis before (at the
// target load): a basis moves with the load per replica only between calibrated and transferred
// (the profile's domain includes the rate; classify_prediction), so their widest entry for
// either, datasheet-only's own widest for datasheet-only (no profile stays no profile), and the
// widest of the whole table for any other label.
double widest_cost_band(const std::string& basis);

// "±12% TTFT, ±4.4% TPOT, ±15% E2E (transferred, docs/validation.md §6 …)", or
// "band unknown (basis X has no measured error in docs/validation.md)".
std::string band_text(const std::string& basis);

// What the same basis measured on runs nobody here produced (docs/validation.md §7: 61 public
// `vllm bench serve` runs on A100 80GB; nothing was fitted on them): the median |error| of mean
// TTFT, mean TPOT and benchmark duration, fractions. Only the bases those runs were scored under
// have one: transferred (the shipped A100 profile off its domain) and datasheet-only
// (--calibration none). A buyer reads the band of error_band() as how well servesim does where
// its data reach, and this one as how far off it has been where they do not.
struct IndependentError {
  std::string basis;
  double ttft = 0;
  double tpot = 0;
  double duration = 0;
  std::string source;
};
std::optional<IndependentError> independent_error(const std::string& basis);

// The line `simulate` prints under its prediction basis: band_text(basis), then, where the basis
// has one, "; on independent public runs: 45% TTFT, 31% TPOT, 37% duration (docs/validation.md
// §7, ...)".
std::string expected_error_text(const std::string& basis);

// A fraction as a person writes a band: 0.124 → "12%", 0.044 → "4.4%".
std::string percent_text(double fraction);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_ERROR_BAND_H_
