/* greedy.c: the cost-model refinement of HyperOffload's cache operators.
 * This file is the entry and the method; the stages live beside it
 * (greedy_internal.h lists them): the portfolio, the peak search, the
 * budget fit, the refinement, the report.
 *
 * requires a finished graph; builds schedules, checks each one with the
 * simulator, returns the best; never returns a schedule the simulator
 * rejected unless it says so (rep->feasible false).
 *
 * 1. Candidates. Each tensor's residency splits into intervals between
 *    consecutive touches (producer, reads, updates): the gap after touch a
 *    until touch b. Over a gap of at least one op a tensor may leave the
 *    device: detached when it has a clean copy on a tier (weights and
 *    optimizer state fetched from their home), stored when dirty
 *    (activations stashed for backward, KV blocks), then prefetched before
 *    b. Tier-homed inputs start with a mandatory interval (they must be
 *    fetched anyway); persistent tensors have a tail after their last use.
 *    Short-lived tensors (alive for two ops or fewer) and tensors with
 *    offload: false never move; small ones (under 1/4096 of the
 *    no-offload peak: the transfer is not worth its latency and
 *    bookkeeping) only drop a clean copy after their last use. The
 *    enumeration is the exact solver's too (candidates.h).
 * 2. Nominal timeline T[k]: op k starts at the sum of the op times before
 *    it, and M0[k] is the memory while op k runs with nothing offloaded.
 *    An interval freed at time E and prefetched after op p takes its bytes
 *    off every op j in [cs, p] where cs is the first op after a starting at
 *    or after E.
 * 3. Selection, per round: sweep the ops; where M[j] exceeds the target,
 *    take candidates covering j, best score first: bytes × time freed /
 *    transfer time (HyperOffload's benefit against cost), those whose
 *    prefetch can still hide behind compute before any that must stall.
 * 4. Placement with channel occupancy. Stores go forward on their tier's
 *    d2h channel, first issued first served; prefetches go backward on the
 *    h2d channel from their deadline T[b], each as late as the transfers
 *    after it allow and no earlier than its eviction completes, so queued
 *    transfers never oversubscribe a link. A prefetch is issued at the
 *    last op boundary before its slot: as early as its transfer needs, no
 *    earlier, since it holds memory from issue.
 * 5. Rounds repeat selection on the placed plan until memory fits or no
 *    candidate is left; then the schedule is emitted and simulated.
 * With a budget, the fastest valid schedule found under it wins; without,
 * a search on the target (a gallop down from the top, then a bisection)
 * finds the smallest peak whose simulated makespan is within
 * (1 + max_overhead) of the lower bound, wherever it lies (the device's
 * memory caps the answer only afterwards).
 * 6. Refinement on the simulator (refine.c): from the best schedule, over
 *    these candidates and the small tensors' gaps, moves at the peak
 *    (hold a prefetch back past the peak's op, evict what that op does
 *    not touch: a store after a block's last write included) are kept
 *    while they lower (peak, instants at the peak) within the bound; in
 *    budget mode moves at the longest stall are kept while faster.
 * 7. Budget mode also asks the overhead mode the other way round (the
 *    budget fit): the smallest overhead on a ladder (bisected) whose
 *    least peak fits the budget gives a fast plan under it.
 * With a budget, plans aim at the lower bound's timeline, the fastest
 * possible: op k no later than lower_bound_s less the compute of ops k
 * to the last (on a link-bound graph the compute-only timeline sets
 * deadlines no link meets).
 * Cost: one plan is O((ops + intervals) log intervals); the candidates
 * are sorted once, by counting sorts, in O(ops + intervals). The
 * refinement simulates at most REFINE_WORK schedule steps in all (none
 * on schedules past BIG_OPS steps, e.g. a million ops), so it
 * adds O(REFINE_WORK) whatever the size; such plans also take one pass
 * per target of the peak search, not two. Targets no plan against T0
 * can meet (under reach_bytes) are called missed without planning.
 * Set-up runs beside the baselines. No schedule peaks under the floor,
 * the most one op needs while it runs (hoff_op_floor); a cap under it is
 * reported (rep->floor_bytes) and, on such big plans, not aimed at.
 * Past BIG_OPS ops (a million-op graph: 2.5 s of greedy, a third
 * of it reading) also: a baseline stops planning once its floor passes
 * the bound, and is planned in full and simulated only if no schedule
 * met the bound within the device (greedy_resolve_baselines); the set-up then
 * runs first, on every thread; a target of the peak search is called
 * missed at the first op where its selection finds no candidate left
 * (quit_low). Each of these left the schedules of bench/bench_scale.sh's
 * million-op graphs as they were. */
#include "greedy.h"
#include "greedy_internal.h"

hoff_status hoff_greedy_run(const hoff_graph *g, const hoff_policy_opts *o,
			    hoff_sched **out, hoff_policy_report *rep,
			    hoff_err *e)
{
	if (o->budget_bytes != HOFF_NONE)
		return greedy_budget_run(g, o, out, rep, e);
	return greedy_overhead_run(g, o, REFINE_WORK, out, rep, e);
}
