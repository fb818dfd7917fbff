#include <cmath>

#include "modelcost/hardware.h"

namespace modelcost {

double AllReduceCurve::us(double bytes) const {
  if (bytes_us.empty()) return 0;
  if (bytes <= bytes_us.front().first) return bytes_us.front().second;
  for (size_t i = 1; i < bytes_us.size(); ++i) {
    const auto& [b0, t0] = bytes_us[i - 1];
    const auto& [b1, t1] = bytes_us[i];
    if (bytes > b1) continue;
    const double f = std::log(bytes / b0) / std::log(b1 / b0);
    return std::exp(std::log(t0) + f * (std::log(t1) - std::log(t0)));
  }
  // Past the largest size: its time, and the rest at the bandwidth between the last two sizes.
  const auto& [b0, t0] = bytes_us[bytes_us.size() - 2];
  const auto& [b1, t1] = bytes_us.back();
  const double us_per_byte = t1 > t0 ? (t1 - t0) / (b1 - b0) : t1 / b1;
  return t1 + (bytes - b1) * us_per_byte;
}

const AllReduceCurve* AllReduceCurves::nearest(int64_t ranks) const {
  const AllReduceCurve* best = nullptr;
  double best_distance = 0;
  for (const AllReduceCurve& curve : by_ranks) {
    const double distance = std::abs(std::log(static_cast<double>(ranks) / static_cast<double>(curve.ranks)));
    if (!best || distance <= best_distance) {  // ascending ranks: a tie goes to the larger
      best = &curve;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace modelcost
