package profile

import (
	"slices"
	"strconv"
	"strings"
)

// mergeCounts are the metadata of the runtime's own counts, which a merged
// profile sums (or takes the union or largest of): what the runtime could
// not record (unrecorded), the allocations the C library refused
// (alloc_refused), a fork child's inherited blocks (inherited,
// inherited_freed), the runs whose leak scan failed (leak_scan_failed:
// the distinct reasons, joined; leak_scan_failed_runs: how many), the
// time keys that are sums (time_process_cpu_ns, time_clamped, when the
// runs measured time the same way), the marks not kept (marks_dropped,
// when the marks are merged), the pointcuts (pointcut: the distinct ones)
// and the largest of the frameless and call_framed counts and of
// runtime_resident (each run's count of one program: the merged
// functions' flags count those of several).
type mergeCounts struct {
	sums       map[string][]uint64 // summedMeta's keys: field by field
	failed     uint64              // runs whose leak scan failed
	reasons    []string            // their distinct reasons
	pointcuts  []string
	largest    map[string]uint64 // largestMeta's keys
	flagsFuncs bool              // frameless and call_framed: count the merged functions too
}

// summedMeta are the keys whose numbers (one or more fields) are summed.
var summedMeta = []string{"unrecorded", "alloc_refused", "inherited", "inherited_freed", "time_process_cpu_ns", "time_clamped", "marks_dropped"}

// largestMeta are the keys whose largest value is kept.
var largestMeta = []string{"frameless", "call_framed", "runtime_resident"}

func newMergeCounts() mergeCounts {
	return mergeCounts{sums: map[string][]uint64{}, largest: map[string]uint64{}}
}

func (mc *mergeCounts) add(p *Profile) {
	for _, k := range summedMeta {
		v, ok := p.MetaValue(k)
		if !ok {
			continue
		}
		sum := mc.sums[k]
		for i, f := range strings.Fields(v) {
			n, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				break
			}
			if i == len(sum) {
				sum = append(sum, 0)
			}
			sum[i] += n
		}
		mc.sums[k] = sum
	}
	for _, k := range largestMeta {
		if n, ok := p.MetaUint(k); ok {
			mc.largest[k] = max(mc.largest[k], n)
		}
	}
	if why, ok := p.MetaValue("leak_scan_failed"); ok {
		n, ok := p.MetaUint("leak_scan_failed_runs")
		if !ok {
			n = 1
		}
		mc.failed += n
		for _, r := range strings.Split(why, " | ") {
			if !slices.Contains(mc.reasons, r) {
				mc.reasons = append(mc.reasons, r)
			}
		}
	}
	if pc, ok := p.MetaValue("pointcut"); ok {
		for _, s := range strings.Split(pc, " ; ") {
			if !slices.Contains(mc.pointcuts, s) {
				mc.pointcuts = append(mc.pointcuts, s)
			}
		}
	}
}

// records appends mc's M records to out; sameTime says whether every run
// measured time the same way, keepMarks whether the marks were merged,
// and funcs are the merged functions.
func (mc *mergeCounts) records(out []Meta, sameTime, keepMarks bool, funcs []*Func) []Meta {
	var frameless, callFramed uint64
	for _, f := range funcs {
		if f.Frameless {
			frameless++
		} else if f.CallFramed {
			callFramed++
		}
	}
	mc.largest["frameless"] = max(mc.largest["frameless"], frameless)
	mc.largest["call_framed"] = max(mc.largest["call_framed"], callFramed)
	if len(mc.pointcuts) > 0 {
		out = append(out, Meta{Key: "pointcut", Value: strings.Join(mc.pointcuts, " ; ")})
	}
	for _, k := range largestMeta {
		if n := mc.largest[k]; n > 0 {
			out = append(out, Meta{Key: k, Value: strconv.FormatUint(n, 10)})
		}
	}
	for _, k := range summedMeta {
		sum, ok := mc.sums[k]
		if !ok || len(sum) == 0 || strings.HasPrefix(k, "time_") && !sameTime || k == "marks_dropped" && !keepMarks {
			continue
		}
		f := make([]string, len(sum))
		for i, n := range sum {
			f[i] = strconv.FormatUint(n, 10)
		}
		out = append(out, Meta{Key: k, Value: strings.Join(f, " ")})
	}
	if mc.failed > 0 {
		out = append(out, Meta{Key: "leak_scan_failed", Value: strings.Join(mc.reasons, " | ")},
			Meta{Key: "leak_scan_failed_runs", Value: strconv.FormatUint(mc.failed, 10)})
	}
	return out
}
