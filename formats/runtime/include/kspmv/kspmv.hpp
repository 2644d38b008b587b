// Everything a kspmv user needs, in one include.
#pragma once

#include "kspmv/config.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/inputs/fem.hpp"
#include "kspmv/core/format.hpp"
#include "kspmv/inputs/generators.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/inputs/matrix_market.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/core/permutation.hpp"
#include "kspmv/core/random.hpp"
#include "kspmv/core/reference.hpp"
#include "kspmv/core/row_stats.hpp"
#include "kspmv/model/model.hpp"
#include "kspmv/core/device_info.hpp"
#include "kspmv/matrix.hpp"
#include "kspmv/calibrate.hpp"
