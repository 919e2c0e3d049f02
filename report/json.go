package report

import (
	"encoding/json"
	"io"
)

func init() { Register("json", jsonRenderer{}) }

// jsonRenderer writes the report as one indented JSON object. The tables
// not built are left out.
type jsonRenderer struct{}

func (jsonRenderer) Render(w io.Writer, r *Report) error {
	out := struct {
		Program   string            `json:"program,omitempty"`
		Sources   []string          `json:"sources,omitempty"` // of a merged profile: the first few
		Runs      int               `json:"runs,omitempty"`    // of a merged profile: how many it sums
		Complete  bool              `json:"complete"`
		Frameless int               `json:"frameless,omitempty"`
		Metadata  map[string]string `json:"metadata,omitempty"`
		Totals    Totals            `json:"totals"`
		Depth     int               `json:"leak_depth"`
		Sites     bool              `json:"leak_sites"`
		Tables    []string          `json:"tables"`
		Leaks     *[]Leak           `json:"leaks,omitempty"`
		Bins      *[]Bin            `json:"bins,omitempty"`
		RunTime   []RunTimeType     `json:"run_time_types,omitempty"` // with bins: types of a run-time count
		Direct    *Direct           `json:"direct,omitempty"`
		Graph     *[]Entry          `json:"graph,omitempty"`
		Segments  *Segments         `json:"segments,omitempty"` // memory.go
		Timeline  *Timeline         `json:"timeline,omitempty"`
		Peak      *Peak             `json:"peak,omitempty"`
		Time      *Time             `json:"time,omitempty"`    // the time tables: time.go
		Between   *Between          `json:"between,omitempty"` // weave report --between
	}{
		Program:   r.Program,
		Sources:   r.Sources,
		Runs:      r.Runs,
		Complete:  r.Complete,
		Frameless: r.Frameless,
		Metadata:  r.Metadata,
		Totals:    r.Totals,
		Depth:     r.Depth,
		Sites:     r.Sites,
		Tables:    r.Tables,
		Direct:    r.Direct,
		Segments:  r.Segments,
		Timeline:  r.Timeline,
		Peak:      r.Peak,
		Time:      r.Time,
		Between:   r.Between,
	}
	if r.Has(TableLeaks) {
		out.Leaks = &r.Leaks
	}
	if r.Has(TableBins) {
		out.Bins = &r.Bins
		out.RunTime = r.RunTimeTypes
	}
	if r.Has(TableGraph) {
		out.Graph = &r.Graph
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
