// The CUDA runtime's interface as the emulated device provides it (cuda_emu.h).
#pragma once
#include "cuda_emu.h"
