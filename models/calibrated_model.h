// Applying a calibration profile (sim/calibration/profile.h) to a deployment's cost model.
//
// calibrated_options: the GPU catalog's defaults (RooflineOptions::from_gpu) with every fitted
// parameter of d.calibration put in their place. calibrated_deployment: the same deployment with
// the fitted link α–β in the GPU's scale-up link. make_cost_model uses both when d.calibration is
// not empty.
#ifndef SERVESIM_MODELS_CALIBRATED_MODEL_H_
#define SERVESIM_MODELS_CALIBRATED_MODEL_H_

#include "models/deployment.h"
#include "models/roofline_cost_model.h"

namespace servesim::models {

RooflineOptions calibrated_options(const Deployment& d);
Deployment calibrated_deployment(const Deployment& d);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_CALIBRATED_MODEL_H_
