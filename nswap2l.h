/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-nswap2l: one block device over Network RAM, flash and disk tiers.
 * Every component's header, for the files that use several: the tier
 * mechanisms and the interface layer.
 */
#ifndef NSWAP2L_H
#define NSWAP2L_H

#include "core.h"
#include "map.h"
#include "mover.h"
#include "prefetch.h"
#include "profiler.h"
#include "policy.h"

#endif /* NSWAP2L_H */
