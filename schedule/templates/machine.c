/* machine.c — the rules that turn a target's description (sch_hw) into the
 * sizes templates plan with, written once so that every template derives
 * its defaults and knob bounds the same way (docs/targets.md states them):
 *
 * - a register tile's accumulators take three quarters of the vector
 *   registers; the rest hold the step's weight vectors, the broadcast
 *   operand and loads in flight (AVX-512: 24 of 32, AVX2: 12 of 16, the
 *   tiles BLIS picks for those ISAs);
 * - a row of the tile spans two vectors, so that one broadcast load feeds
 *   two FMAs;
 * - at least fma x FMA latency accumulators are in flight, else the FMA
 *   pipes wait on their own results;
 * - a knob's unrolled dimension stays within what the registers can hold:
 *   at most four vectors across, and down as many rows as accumulators;
 * - the weight panel that one tile of output channels (or columns) reuses
 *   over the whole image (or all rows) fits the L2 cache;
 * - a memory-bound loop's vector tile keeps its streams in L1. */
#include "schedule/schedule.h"

/* The FMA latency in cycles of every x86-64 core since Haswell and Zen 1
 * (Zen 1's is 5; one more accumulator of slack costs nothing). */
enum { FMA_LATENCY = 4 };

/* Registers a conv's unrolled taps keep live beyond its tile (gcc's
 * complete unrolling of a 3x3 conv's kw loop, whose taps then share and
 * hold more inputs): AVX2's 16 channels x 6 columns (12 accumulators, 2
 * weight vectors, a broadcast: 15 of 16) spilled 16 vector slots a step and
 * ran at 0.6x the same tile with the taps kept a loop; 16 x 5 (13 of 16)
 * spilled 2 under -mtune=znver1 and none under haswell (docs/targets.md). */
enum { TAP_SLACK = 4 };
/* The longest tap loop gcc 12 unrolls completely in a conv's tile at -O3:
 * 3 (a 3x3 conv's kw: 36 FMAs a step for 6 columns of 2 vectors); the
 * stems' 7 taps stay a loop (10 FMAs a step). */
enum { UNROLLED_TAPS = 3 };

int sch_hw_acc_regs(const sch_hw *hw)
{
    return hw->vregs * 3 / 4;
}

int sch_hw_min_acc(const sch_hw *hw)
{
    return (hw->fma > 0 ? hw->fma : 1) * FMA_LATENCY;
}

int64_t sch_hw_tap_regs(int64_t kw)
{
    return kw > 1 && kw <= UNROLLED_TAPS ? TAP_SLACK : 0;
}

bool sch_hw_short_of_acc(const sch_hw *hw, int64_t acc)
{
    return hw->fused_fma && acc <= (int64_t)sch_hw_min_acc(hw);
}

int64_t sch_hw_vectors(const sch_hw *hw, int64_t n)
{
    return (n + hw->lanes - 1) / hw->lanes;
}

int sch_hw_row_lanes(const sch_hw *hw)
{
    return 2 * hw->lanes;
}

int sch_hw_max_cols(const sch_hw *hw)
{
    return 4 * hw->lanes;
}

int sch_hw_max_rows(const sch_hw *hw)
{
    return sch_hw_acc_regs(hw);
}

int64_t sch_hw_stream_tile(const sch_hw *hw)
{
    /* 16 streams of float32 (inputs and output of an elementwise chain) */
    int64_t n = hw->l1 > 0 ? hw->l1 / (16 * 4) : 512;
    int64_t p = hw->lanes;
    while (p * 2 <= n)
        p *= 2;
    return p;
}

int64_t sch_hw_l2_block(const sch_hw *hw, int64_t extent, int64_t bytes_per, int64_t max_outer)
{
    int64_t l2 = hw->l2 > 0 ? hw->l2 : 1 << 20, best = extent;
    for (int64_t outer = 1; outer <= max_outer && outer <= extent; outer++) {
        if (extent % outer)
            continue;
        best = extent / outer;
        if (best * bytes_per <= l2)
            return best;
    }
    return best;
}
