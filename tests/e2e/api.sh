#!/bin/bash
# SPDX-License-Identifier: MIT
# The library's examples through the CLI's eyes: a DMA-loop producer that overflows on purpose
# records through the push API, `nvtape verify` finds its drops exactly where the index puts
# them, and the pull-API reader reads the same bytes as `nvtape play --sink stdout`.
. "$(dirname "$0")/lib.sh"
EX=${NVT_EXAMPLES:?NVT_EXAMPLES must point at the built examples}

f="$T/dma.nvt"
expect_rc 2 "$EX/dma_producer" "$f" 100 2 400
lost=$(field lost_beats)
events=$(field drop_events)
[ "$lost" -gt 0 ] && [ "$(field drops)" = "$lost" ] || fail "producer drops: $(cat "$T/out")"
[ "$events" -ge 4 ] || fail "expected at least 4 overflow events, got $events"
ok "dma_producer: $lost beats lost upstream in $events events, exit 2"

expect_rc 2 "$NVT" verify "$f"
# drops_match: every gap sits where an index event says, and the gap beats add up to the drop
# count less the drops after the last beat (an overflow at the very end leaves no gap)
gaps=$(field gaps)
[ "$(field drops_match)" = 1 ] && [ "$gaps" -ge $((events - 1)) ] && [ "$gaps" -ge 3 ] &&
	[ "$(field gap_beats)" -le "$lost" ] && [ "$(field corrupt)" = 0 ] || fail "verify: $(grep RESULT "$T/out")"
"$NVT" info --json "$f" | python3 -c "
import json,sys; j=json.load(sys.stdin); h=j['header']
assert h['source_name'] == 'dma_producer', h
" || fail "source name in the header"
ok "verify: $gaps gaps of $(field gap_beats) beats, each at the position the drop index records"

expect_rc 0 "$EX/reader" "$f" "$T/reader.data"
"$NVT" play -q --sink stdout "$f" >"$T/play.data" || fail "play --sink stdout"
cmp -s "$T/reader.data" "$T/play.data" || fail "the reader's bytes differ from play's"
[ "$(grep -c '^DROP ' "$T/out")" = "$events" ] || fail "reader drop events"
ok "reader: the pull API reads exactly the bytes play delivers ($(field bytes)), and the $events drop events"
