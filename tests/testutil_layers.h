/* testutil_layers.h: graph.json text for the hand-worked layered graphs
 * of test_checkpoint.c and test_recompute.c, as macros that paste string
 * literals (no library: include it and write a graph). Sizes in MB,
 * times in seconds, one host tier at 1 MB/ms each way where there is
 * one. */
#ifndef HOFF_TESTUTIL_LAYERS_H
#define HOFF_TESTUTIL_LAYERS_H

/* A tensor of mb MB. */
#define T(id, mb, kind) \
	"{\"id\": \"" id "\", \"bytes\": " mb "000000, \"kind\": \"" kind "\"}"
/* An op reading `in` and writing `out` (quoted ids, comma-separated) for
 * s seconds; `extra` adds fields (L0, L1, a workspace). */
#define OPL(id, in, out, s, extra)                                      \
	"{\"id\": \"" id "\", \"inputs\": [" in "], \"outputs\": [" out \
	"], \"time_s\": " s extra "}"
#define L0 ", \"layer\": 0"
#define L1 ", \"layer\": 1"
/* The machine's tiers: the one host tier (1e9 B/s each way). */
#define HOST_TIER \
	", \"tiers\": [{\"name\": \"host\", \"h2d_Bps\": 1e9, \"d2h_Bps\": 1e9}]"
/* A graph's text up to its tensors: FORMAT version, its name, a 100 MB
 * device and `tiers` (HOST_TIER, or "" for none); the tensors follow,
 * then "], \"ops\": [", the ops and "]}". */
#define LAYERED(version, name, tiers)                                \
	"{\"format\": \"hoffopt.graph\", \"version\": " version ", " \
	"\"name\": \"" name "\", \"machine\": {\"device\": "         \
	"{\"memory_bytes\": 100000000}" tiers "}, \"tensors\": ["

#endif
